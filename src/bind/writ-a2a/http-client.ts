// Mandate's A2A client over JSON-RPC or HTTP+JSON (./rest-client.ts, 1.0 only): finds the agent's
// endpoint in its Agent Card (the card's preferred binding, or the one asked for), speaks 1.0
// when the card offers it (the `A2A-Version: 1.0` header, 1.0 method names and shapes) and 0.3
// when that is all the card offers, sends a call as a message or a revoke as a cancel, and accepts
// the answer only as ./client.ts verifies it: a task whose tally verifies against the call
// (section 6.2), or a canceled task carrying the executor's ack of the revoke (section 9.4).
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { type CheckedAck, verifyAck } from "../../writ/ack.js"
import { ackIdentity, callIdentity, revokeIdentity } from "../../writ/sign.js"
import { post } from "../writ-http/client.js"
import { signedCardContent, verifyCard } from "./card-signature.js"
import { callMessage, cancelParams, type VerifiedTask, verifyTask } from "./client.js"
import { A2aReason, a2aError, type A2aError } from "./errors.js"
import { ERROR_INFO_TYPE, RpcResponse } from "./rpc.js"
import { cancelPath, restPost, revokeHeader } from "./rest-client.js"
import {
  A2A_VERSION, type A2aVersion, ACK_KEY, AGENT_CARD_PATH, AgentCard, type AgentInterface, ANSWER_MEDIA_TYPE, JSONRPC_BINDING, REST_BINDING,
  SendMessageResponse, Task
} from "./schema.js"
import { decodeJson } from "./server.js"
import type { CallForm } from "./server.js"
import { messageToV03, taskFromV03, V03SendResult, V03Task, V10_TO_V03_METHODS } from "./v03.js"

/** The bindings this client speaks: JSON-RPC (1.0 and 0.3) and HTTP+JSON (1.0). */
export type A2aTransport = "jsonrpc" | "rest"

/** Where and how to speak to an agent. */
export interface A2aPeer {
  readonly url: string
  readonly version: A2aVersion
  /** Absent: JSON-RPC. */
  readonly transport?: A2aTransport
  /** The did:key whose signature on the Agent Card verified (A2A 1.0 section 8.4.3); absent: the card was unsigned. */
  readonly signedBy?: string
}

const unreachable = (url: string, message: string) => a2aError("mandate/unreachable", url, message)

/** GET a JSON document (the Agent Card). */
const getJson = (url: string): Effect.Effect<Json, A2aError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(url))
    if (response.status !== 200) return yield* Effect.fail(unreachable(url, `status ${response.status}`))
    return (yield* response.json) as Json
  }).pipe(
    Effect.scoped,
    Effect.catchTags({
      RequestError: (e) => Effect.fail(unreachable(url, e.message)),
      ResponseError: (e) => Effect.fail(unreachable(url, e.message))
    })
  )

const isV10 = (v: string | undefined) => v !== undefined && /^1(\.|$)/.test(v)
const isV03 = (v: string | undefined) => v !== undefined && /^0\.3(\.|$)/.test(v)
const bindingOf = (i: AgentInterface): A2aTransport | undefined =>
  i.protocolBinding.toUpperCase() === JSONRPC_BINDING ? "jsonrpc" : i.protocolBinding.toUpperCase() === REST_BINDING ? "rest" : undefined

/**
 * The endpoint an Agent Card offers. Without `transport`: the first interface at 1.0 in the card's
 * order (A2A 1.0: the first is the agent's preferred) of a binding this client speaks, JSON-RPC or
 * HTTP+JSON; then JSON-RPC at 0.3; then a 0.3 card's own `url` (its `preferredTransport` JSON-RPC,
 * or none named). With `transport`, only that binding (HTTP+JSON at 1.0 only: its 0.3 paths differ).
 */
export const peerOfCard = (card: AgentCard, transport?: A2aTransport): Effect.Effect<A2aPeer, A2aError> => {
  const interfaces = (card.supportedInterfaces ?? []).filter((i) => {
    const b = bindingOf(i)
    return b !== undefined && (transport === undefined || b === transport)
  })
  const v10 = interfaces.find((i) => isV10(i.protocolVersion))
  if (v10 !== undefined) return Effect.succeed({ url: v10.url, version: A2A_VERSION, transport: bindingOf(v10)! })
  if (transport !== "rest") {
    const v03 = interfaces.find((i) => isV03(i.protocolVersion) && bindingOf(i) === "jsonrpc")
    if (v03 !== undefined) return Effect.succeed({ url: v03.url, version: "0.3", transport: "jsonrpc" })
    if (card.url !== undefined && (card.preferredTransport === undefined || card.preferredTransport.toUpperCase() === JSONRPC_BINDING)) {
      return Effect.succeed({ url: card.url, version: "0.3", transport: "jsonrpc" })
    }
  }
  return Effect.fail(a2aError(
    "mandate/a2a_no_interface",
    "card.supportedInterfaces",
    transport === "rest" ? "no HTTP+JSON interface at A2A 1.0" : transport === "jsonrpc" ? "no JSON-RPC interface at A2A 1.0 or 0.3" : "no JSON-RPC interface at A2A 1.0 or 0.3, nor HTTP+JSON at 1.0"
  ))
}

/** Reads the Agent Card at `base` (a card URL, or a base URL under which it is well-known) and
 * picks its endpoint as `peerOfCard` does. A signed card (A2A 1.0 section 8.4) is used only when a
 * signature verifies (./card-signature.ts; `mandate/a2a_card_signature` otherwise), and then only
 * its signed members are read: a 0.3 card's `url` beside them, unsigned, is not. An unsigned card
 * is read as it is (0.3 agents sign none), unless `requireSigned`. */
export const resolvePeer = Effect.fn("writ.a2a.resolvePeer")(function*(base: string, transport?: A2aTransport, requireSigned = false) {
  const url = /\.json$/.test(new URL(base).pathname) ? base : new URL(AGENT_CARD_PATH, base).toString()
  const fetched = yield* getJson(url)
  const status = isJsonObject(fetched) ? yield* verifyCard(fetched) : ({ _tag: "unsigned" } as const)
  if (status._tag === "unsigned" && requireSigned) {
    return yield* Effect.fail(a2aError("mandate/a2a_card_signature", "card.signatures", `the Agent Card at ${url} is not signed`))
  }
  const card = yield* decodeJson(AgentCard, status._tag === "signed" ? signedCardContent(fetched as JsonObject) : fetched, "card")
  const peer = yield* peerOfCard(card, transport)
  return status._tag === "signed" ? { ...peer, signedBy: status.kid } : peer
})

/** The Writ reason a JSON-RPC error names in its ErrorInfo detail, else `mandate/a2a_rpc_error`. */
const errorOf = (error: { readonly code: number; readonly message: string; readonly data?: Json | undefined }): A2aError => {
  const details = Array.isArray(error.data) ? error.data : []
  const info = details.find((d): d is JsonObject => isJsonObject(d) && d["@type"] === ERROR_INFO_TYPE)
  const reason = info === undefined ? Option.none() : Schema.decodeUnknownOption(A2aReason)(info.reason)
  return Option.isSome(reason)
    ? a2aError(reason.value, "response.error", error.message)
    : a2aError("mandate/a2a_rpc_error", "response.error", `${error.code}: ${error.message}`)
}

/** One JSON-RPC exchange in the peer's version; `method` is the 1.0 name. */
export const rpc = (peer: A2aPeer, method: string, params: Json, id = 1): Effect.Effect<Json, A2aError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const name = peer.version === A2A_VERSION ? method : V10_TO_V03_METHODS[method] ?? method
    const answer = yield* post(peer.url, { jsonrpc: "2.0", id, method: name, params } as JsonObject, {
      contentType: "application/json",
      // A 1.0 server reads a request without the header as 0.3 (A2A 1.0 section 3.6).
      headers: peer.version === A2A_VERSION ? { "a2a-version": A2A_VERSION, accept: "application/json" } : { accept: "application/json" }
    }).pipe(Effect.mapError((e) => unreachable(peer.url, e.message)))
    if (Option.isNone(answer.json)) return yield* Effect.fail(a2aError("noncanonical", "response", `the answer (status ${answer.status}) is not strict JSON`))
    const response = yield* decodeJson(RpcResponse, answer.json.value, "response")
    if (response.error !== undefined) return yield* Effect.fail(errorOf(response.error))
    if (response.id !== id) return yield* Effect.fail(a2aError("malformed", "response.id", `answers request ${String(response.id)}, not ${id}`))
    if (response.result === undefined) return yield* Effect.fail(a2aError("malformed", "response", "neither a result nor an error"))
    return response.result
  })

/** A task as the peer's version wrote it, read as 1.0. */
const readTask = (peer: A2aPeer, value: Json): Effect.Effect<Task, A2aError> =>
  peer.version === A2A_VERSION ? decodeJson(Task, value, "result") : Effect.map(decodeJson(V03Task, value, "result"), taskFromV03)

/** What a call sent over A2A came back as: the task, and what it authenticates. */
export interface SentCall {
  readonly task: Task
  readonly verified: VerifiedTask
}

/** Sends `call` as a message (`SendMessage`) and accepts the task only as `verifyTask` does. */
export const sendCall = Effect.fn("writ.a2a.sendCall")(function*(peer: A2aPeer, call: JsonObject, form: CallForm = "part") {
  const message = callMessage(call, form, `writ-${callIdentity(call)}`)
  // Messages are JSON by their Schemas (Message, V03Message); the casts state what the types cannot.
  const result = peer.transport === "rest"
    ? yield* restPost(peer.url, "/message:send", { message } as unknown as JsonObject)
    : yield* rpc(peer, "SendMessage", peer.version === A2A_VERSION ? { message } as unknown as Json : { message: messageToV03(message) } as unknown as Json)
  const task = peer.version === A2A_VERSION
    ? yield* Effect.flatMap(decodeJson(SendMessageResponse, result, "result"), (r) =>
      "task" in r ? Effect.succeed(r.task) : Effect.fail(a2aError("missing_tally", "result.message", "a message came back, not a task")))
    : yield* Effect.flatMap(decodeJson(V03SendResult, result, "result"), (r) =>
      r.kind === "task" ? Effect.succeed(taskFromV03(r)) : Effect.fail(a2aError("missing_tally", "result", "a message came back, not a task")))
  const verified = yield* verifyTask(call, task)
  const sent: SentCall = { task, verified }
  return sent
})

/** What a revoke sent over A2A came back as: the canceled task and the executor's checked ack. */
export interface SentRevoke {
  readonly task: Task
  readonly ack: CheckedAck
  /** The section 10 answer the task carries. */
  readonly answer: JsonObject
}

/**
 * Sends `revoke` in a `CancelTask` of `taskId` (section 9.1) and accepts the answer only when the
 * task is canceled, carries the section 10 answer whose ack verifies (section 9.4) and names this
 * revoke, and the status names that ack (`result_mismatch` otherwise).
 */
export const sendRevoke = Effect.fn("writ.a2a.sendRevoke")(function*(peer: A2aPeer, taskId: string, revoke: JsonObject) {
  // The cancel params are JSON by construction (cancelParams); the cast states what the type cannot.
  // Over HTTP+JSON the revoke rides in the body's metadata (the 1.0 CancelTaskRequest) and in the
  // `writ-revoke` header, which is what reaches an SDK-built server (its REST handler drops the body).
  const params = cancelParams(taskId, revoke) as unknown as JsonObject
  const exchange = peer.transport === "rest"
    ? restPost(peer.url, cancelPath(taskId), params, revokeHeader(revoke))
    : rpc(peer, "CancelTask", params)
  const task = yield* Effect.flatMap(exchange, (r) => readTask(peer, r))
  if (task.status.state !== "TASK_STATE_CANCELED") {
    return yield* Effect.fail(a2aError("result_mismatch", "task.status.state", `state ${task.status.state}, not canceled`))
  }
  const part = (task.artifacts ?? []).flatMap((a) => a.parts).find((p) => p.mediaType === ANSWER_MEDIA_TYPE && isJsonObject(p.data))
  const answer = part?.data
  if (!isJsonObject(answer) || !isJsonObject(answer.ack)) return yield* Effect.fail(a2aError("result_mismatch", "task.artifacts", "no section 10 answer with an ack"))
  const ack = yield* Effect.mapError(verifyAck(answer.ack), (e) => a2aError(e.reason, `ack${e.path === undefined ? "" : `.${e.path}`}`, e.message))
  if (ack.value.revoke !== revokeIdentity(revoke)) return yield* Effect.fail(a2aError("result_mismatch", "ack.rev", "the ack is of another revoke"))
  if (task.status.message?.metadata?.[ACK_KEY] !== ackIdentity(answer.ack)) {
    return yield* Effect.fail(a2aError("result_mismatch", `task.status.message.metadata.${ACK_KEY}`, "the status does not name this ack"))
  }
  const sent: SentRevoke = { task, ack, answer }
  return sent
})
