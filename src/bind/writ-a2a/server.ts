// The A2A binding, server side (docs/adoption.md section 2b, docs/bindings.md "A2A"), at the
// message level: any A2A server hands this module the request message and returns the task it
// builds. The executor (spec section 7) decides; this module only moves objects.
//
//   - the call: a data part whose `mediaType` is `application/writ-call+json` (preferred), or
//     `message.metadata["io.writ/call"]`; the answer uses the same form;
//   - the tally: the task's last artifact, and its identity in the terminal status message's
//     `metadata["io.writ/tally"]`, so a streaming client that missed the artifact knows what to
//     fetch; the result body, when there is one, is the artifact before it;
//   - a revoke: `metadata["io.writ/revoke"]` of a `CancelTask` (section 9.1); the answer's ack
//     identity rides in the status metadata, the whole section 10 answer in an artifact;
//   - the Agent Card's `capabilities.extensions` entry.
//
// Everything here is A2A 1.0 (./schema.ts); a 0.3 peer's objects are converted at the edge
// (./v03.ts), so a 0.3 call part (`metadata.mimeType`) arrives here as a 1.0 one.
import { Effect, Either, Option, Schema } from "effect"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import { type CallAnswer, callAnswerJson, Executor, revokeAnswerJson } from "../../writ/executor/executor.js"
import type { Peer } from "../../writ/executor/services.js"
import { callIdentity, tallyIdentity, ackIdentity } from "../../writ/sign.js"
import { a2aError, type A2aError, type A2aReason } from "./errors.js"
import { messageFromV03, V03Message } from "./v03.js"
import {
  A2A_VERSION, type A2aVersion, ACK_KEY, ANSWER_MEDIA_TYPE, type Artifact, CALL_KEY, CALL_MEDIA_TYPE, CancelTaskParams, type CardExtension, ERROR_KEY, EXTENSION_URI,
  Message, type Part, RESULT_MEDIA_TYPE, REVOKE_KEY, TALLY_KEY, TALLY_MEDIA_TYPE, type Task, type TaskState
} from "./schema.js"

/** Largest message read: a call (65536 canonical bytes, section 1.6) with room for its envelope. */
export const MAX_MESSAGE_BYTES = 1 << 18

/** Which form a call came in; the answer uses the same one. */
export type CallForm = "part" | "metadata"

/** Reads JSON from outside strictly (section 1.1: integers only, no repeated member, 64 levels)
 * and decodes it with `schema` (`malformed` otherwise). */
export const readJson = <A, I>(schema: Schema.Schema<A, I>, input: string | Uint8Array, path: string): Effect.Effect<A, A2aError> =>
  Effect.gen(function*() {
    const size = typeof input === "string" ? Buffer.byteLength(input) : input.length
    if (size > MAX_MESSAGE_BYTES) return yield* Effect.fail(a2aError("too_large", path, `over ${MAX_MESSAGE_BYTES} bytes`))
    const parsed = parseJson(input, { maxDepth: 64, integersOnly: true })
    if (Either.isLeft(parsed)) return yield* Effect.fail(a2aError(parsed.left.reason, path, parsed.left.message))
    return yield* decodeJson(schema, parsed.right, path)
  })

/** Decodes JSON already read strictly with `schema` (`malformed` otherwise, naming the first fault). */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I>, value: unknown, path: string): Effect.Effect<A, A2aError> =>
  Effect.mapError(Schema.decodeUnknown(schema)(value), (e) => a2aError("malformed", path, e.message.split("\n")[0]))

/** A message as received from a peer speaking `version` (0.3 is converted to 1.0, ./v03.ts). */
export const readMessage = (input: string | Uint8Array, version: A2aVersion = A2A_VERSION): Effect.Effect<Message, A2aError> =>
  version === A2A_VERSION ? readJson(Message, input, "message") : Effect.map(readJson(V03Message, input, "message"), messageFromV03)

const isCallPart = (p: Part): boolean => p.data !== undefined && p.mediaType === CALL_MEDIA_TYPE

/** The call a message carries, and its form. Exactly one call: two call parts, or a part and a
 * metadata member that differ, are `malformed` (which would the executor run?). */
export const callFrom = (message: Message): Effect.Effect<{ readonly call: JsonObject; readonly form: CallForm }, A2aError> =>
  Effect.gen(function*() {
    const parts = message.parts.filter(isCallPart)
    const meta: Json | undefined = message.metadata?.[CALL_KEY]
    if (parts.length > 1) return yield* Effect.fail(a2aError("malformed", "message.parts", "more than one Writ call part"))
    if (parts.length === 1) {
      const data = parts[0].data
      if (!isJsonObject(data)) return yield* Effect.fail(a2aError("malformed", "message.parts", "the call is an object"))
      if (meta !== undefined && (!isJsonObject(meta) || callIdentity(meta) !== callIdentity(data))) {
        return yield* Effect.fail(a2aError("malformed", `message.metadata.${CALL_KEY}`, "a call part and a different metadata call"))
      }
      return { call: data, form: "part" as const }
    }
    if (meta === undefined) return yield* Effect.fail(a2aError("missing_call", "message", "no Writ call in a data part or in metadata"))
    if (!isJsonObject(meta)) return yield* Effect.fail(a2aError("malformed", `message.metadata.${CALL_KEY}`, "the call is an object"))
    return { call: meta, form: "metadata" as const }
  })

/** The task state a tally's `st` stands for (adoption.md 2b: canceled maps to canceled); a pending
 * tally is not final, so its task is still working. */
export const stateOf = (st: unknown): TaskState =>
  st === "ok"
    ? "TASK_STATE_COMPLETED"
    : st === "failed"
    ? "TASK_STATE_FAILED"
    : st === "canceled"
    ? "TASK_STATE_CANCELED"
    : "TASK_STATE_WORKING"

/** The tally as the task's last artifact, in the call's form. */
export const tallyArtifact = (taskId: string, tally: JsonObject, form: CallForm): Artifact =>
  form === "part"
    ? { artifactId: `${taskId}/writ-tally`, name: "writ-tally", parts: [{ data: tally, mediaType: TALLY_MEDIA_TYPE }] }
    : {
      artifactId: `${taskId}/writ-tally`,
      name: "writ-tally",
      parts: [{ text: `Writ tally: ${String(tally.st)}` }],
      metadata: { [TALLY_KEY]: tally }
    }

/** The terminal status message's metadata: the tally's identity (adoption.md 2b). */
export const statusMetadata = (tally: JsonObject): JsonObject => ({ [TALLY_KEY]: tallyIdentity(tally) })

const agentMessage = (taskId: string, suffix: string, metadata: JsonObject): Message => ({
  messageId: `${taskId}/${suffix}`,
  role: "ROLE_AGENT",
  parts: [],
  metadata,
  taskId
})

/** The task an executor's answer becomes. An unsigned error (section 7 steps 1 and 2) is a
 * `rejected` task naming its reason; a tally is the last artifact, after the result body. */
export const answerTask = (answer: CallAnswer, form: CallForm, ids: { readonly taskId: string; readonly contextId: string }): Task => {
  const { taskId, contextId } = ids
  if (answer._tag === "error") {
    return { id: taskId, contextId, status: { state: "TASK_STATE_REJECTED", message: agentMessage(taskId, "status", { [ERROR_KEY]: answer.reason }) } }
  }
  const result: Array<Artifact> = Option.isSome(answer.res) && isJsonObject(answer.res.value)
    ? [{
      artifactId: `${taskId}/result`,
      name: "result",
      parts: [{ data: answer.res.value, ...(form === "part" ? { mediaType: RESULT_MEDIA_TYPE } : {}) }]
    }]
    : []
  return {
    id: taskId,
    contextId,
    status: { state: stateOf(answer.tally.st), message: agentMessage(taskId, "status", statusMetadata(answer.tally)) },
    artifacts: [...result, tallyArtifact(taskId, answer.tally, form)]
  }
}

/** A request message, end to end: the call read in either form, checked by the executor, the
 * answer as a task. The task id is `ids`' (an A2A server that allots its own), else the
 * message's, else the call's identity (no randomness here). */
export const handleMessage = Effect.fn("writ.a2a.handleMessage")(function*(
  message: Message,
  ids?: { readonly taskId: string; readonly contextId: string },
  peer?: Peer
) {
  const executor = yield* Executor
  const { call, form } = yield* callFrom(message)
  const taskId = ids?.taskId ?? message.taskId ?? callIdentity(call)
  // The peer is the transport's (section 7.6: a TLS client certificate), never the message's.
  const answer = yield* executor.call(call, peer)
  return answerTask(answer, form, { taskId, contextId: ids?.contextId ?? message.contextId ?? taskId })
})

/** The task a message that could not be read as a Writ call gets from a server that must answer
 * with a task: rejected, naming the reason in its status metadata (as section 7's unsigned errors). */
export const rejectedTask = (reason: string, ids: { readonly taskId: string; readonly contextId: string }): Task => ({
  id: ids.taskId,
  contextId: ids.contextId,
  status: { state: "TASK_STATE_REJECTED", message: agentMessage(ids.taskId, "status", { [ERROR_KEY]: reason }) }
})

/** The revoke a `CancelTask` carries (section 9.1), `missing_revoke` when none. */
export const revokeFrom = (params: CancelTaskParams): Effect.Effect<JsonObject, A2aError> => {
  const r = params.metadata?.[REVOKE_KEY]
  return r === undefined
    ? Effect.fail(a2aError("missing_revoke", `params.metadata.${REVOKE_KEY}`, "a CancelTask carries no Writ revoke"))
    : isJsonObject(r)
    ? Effect.succeed(r)
    : Effect.fail(a2aError("malformed", `params.metadata.${REVOKE_KEY}`, "the revoke is an object"))
}

/** `tasks/cancel` with a revoke: recorded by the executor (section 9.1), answered as a canceled
 * task whose status names the ack and whose one artifact is the section 10 answer. An invalid or
 * unsaved revoke fails with its reason (the task is not canceled by it). */
export const handleCancel = Effect.fn("writ.a2a.handleCancel")(function*(params: CancelTaskParams, peer?: Peer) {
  const executor = yield* Executor
  const revoke = yield* revokeFrom(params)
  const answer = yield* executor.revoke(revoke, peer)
  if (answer._tag === "invalid") return yield* Effect.fail(a2aError(answer.reason as A2aReason, "revoke", "the revoke is invalid"))
  if (answer._tag !== "recorded") return yield* Effect.fail(a2aError(answer.code as A2aReason, "revoke", "the revoke was not recorded; retry"))
  const task: Task = {
    id: params.id,
    contextId: params.id,
    status: { state: "TASK_STATE_CANCELED", message: agentMessage(params.id, "status", { [ACK_KEY]: ackIdentity(answer.ack) }) },
    artifacts: [{
      artifactId: `${params.id}/writ-revoke`,
      name: "writ-revoke",
      parts: [{ data: revokeAnswerJson(answer), mediaType: ANSWER_MEDIA_TYPE }]
    }]
  }
  return task
})

/** Reads `tasks/cancel` parameters as received. */
export const readCancel = (input: string | Uint8Array) => readJson(CancelTaskParams, input, "params")

/** The Agent Card's `capabilities.extensions` entry (adoption.md 2b): the executor's key, the
 * bound names it understands, and the longest chain it takes. The card, JWS-signed under the
 * vendor's domain, is what binds the key to the vendor; verification never needs it. */
export const cardExtension = (did: string, bounds: ReadonlyArray<string>, maxChain = 8): CardExtension => ({
  uri: EXTENSION_URI,
  description: "Writ delegation and tally",
  required: false,
  params: { did, bounds: [...bounds], maxChain }
})

export { callAnswerJson }
