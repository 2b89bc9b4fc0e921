// JSON-RPC 2.0 as MCP frames it, for a relay that must see every message as data: what kind a
// message is, errors it answers with, and a minimal requester for the proxy's own requests to a
// server (`initialize`, paginated `tools/list`) when it runs without a client (`--print-pins`).
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { LATEST_PROTOCOL_VERSION, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Data, Duration, Effect, FiberSet } from "effect"
import * as Correlator from "../../kernel/correlator.js"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import { NOT_SUPPORTED } from "./reason.js"

export type RequestId = string | number
export type Message = JsonObject

// The relay reads every message as JSON data (a transport hands over what JSON.parse made of a
// frame), while the SDK types a message as its own schema's output; the two views of the same
// value cannot be related without re-validating every frame, so each crossing is one cast here.
/** A message from an SDK transport, as the JSON it was read from. */
export const fromSdk = (m: JSONRPCMessage): Message => m as unknown as Message
/** A message as the SDK transport's type, for `send`. */
export const toSdk = (m: Message): JSONRPCMessage => m as unknown as JSONRPCMessage

/** A map key for an id: `1` and `"1"` are different ids. */
export const idKey = (id: RequestId): string => JSON.stringify(id)

const isId = (v: unknown): v is RequestId => typeof v === "string" || typeof v === "number"
export const isRequest = (m: Message): boolean => typeof m.method === "string" && isId(m.id)
export const isNotification = (m: Message): boolean => typeof m.method === "string" && m.id === undefined
export const isResponse = (m: Message): boolean => m.method === undefined && isId(m.id) && (m.result !== undefined || m.error !== undefined)

/** JSON-RPC error codes: the server-defined range for the binding's refusals, -32603 otherwise. */
export const REFUSED = -32001
export const INTERNAL = -32603

/** An error answer to `id`; a refusal carries its code in `data.reason` (and `data.path`). */
export const errorAnswer = (id: RequestId, code: number, reason: string, message: string, path?: string): Message => ({
  jsonrpc: "2.0",
  id,
  error: { code, message: `${reason}: ${message}`, data: { reason, ...(path === undefined ? {} : { path }) } }
})

/** Sends `message`; `relatedRequestId` names the request it belongs to (a transport with a stream
 * per request sends it there). */
export const send = (transport: Transport, message: Message, relatedRequestId?: RequestId): Effect.Effect<void> =>
  Effect.tryPromise(() => transport.send(toSdk(message), relatedRequestId === undefined ? undefined : { relatedRequestId })).pipe(
    Effect.catchAll((e) => Effect.logWarning(`send failed: ${String(e.error)}`))
  )

export class RpcError extends Data.TaggedError("RpcError")<{ readonly message: string }> {}

/** The capabilities a real client declares (roots, sampling, form elicitation). A server may offer
 * tools only to a client that can serve them (server-everything lists its roots, sampling and
 * elicitation tools only then), so `--print-pins` and the gate's own connection declare these, and
 * pin and list what such a client is offered. */
export const CLIENT_CAPABILITIES = {
  roots: { listChanged: true },
  sampling: {},
  elicitation: { form: {} }
} as const

/** What the proxy says about itself when it initializes a server on its own. */
export const initializeParams = (name: string): JsonObject => ({
  protocolVersion: LATEST_PROTOCOL_VERSION,
  capabilities: CLIENT_CAPABILITIES,
  clientInfo: { name, version: "0.1.0" }
})

/** At most this many `tools/list` pages are followed (a server that pages forever is cut off). */
export const MAX_PAGES = 100

/**
 * A server transport driven directly: started, initialized, then `request` per call, each bounded
 * by `timeout`. Closed with the scope. Used by `--print-pins`, which must see tool definitions as
 * the server sent them (an SDK client would re-shape them), and hash them as the proxy does.
 * The transport's callbacks run on a runtime owned by the scope (FiberSet.makeRuntime); answers
 * are routed by id through the shared correlator, which fails every waiting request on close.
 */
export const rawPeer = (transport: Transport, timeout: Duration.DurationInput = "30 seconds") =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntime<never>()
    const waiting = Correlator.make<string, Message, RpcError>()
    let next = 1
    transport.onmessage = (m) => {
      const msg = fromSdk(m)
      // The server's own requests (it may ask a client that declared roots for them): no roots,
      // and nothing else this peer can do.
      if (isRequest(msg)) {
        const answer: Message = msg.method === "roots/list"
          ? { jsonrpc: "2.0", id: msg.id as RequestId, result: { roots: [] } }
          : errorAnswer(msg.id as RequestId, -32601, NOT_SUPPORTED, `${String(msg.method)} is not answered while listing tools`)
        run(send(transport, answer))
        return
      }
      if (isResponse(msg)) run(waiting.complete(idKey(msg.id as RequestId), msg))
    }
    transport.onclose = () => void run(waiting.close(new RpcError({ message: "the server exited" })))
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => transport.start(), catch: (e) => new RpcError({ message: `cannot start the server: ${String(e)}` }) }),
      () => Effect.promise(() => transport.close().catch(() => undefined))
    )
    const request = (method: string, params: JsonObject): Effect.Effect<JsonObject, RpcError> =>
      Effect.gen(function*() {
        const id = next++
        const answer = yield* waiting.call(idKey(id), undefined, send(transport, { jsonrpc: "2.0", id, method, params })).pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new RpcError({ message: `${method}: no answer in time` }) })
        )
        if (!isJsonObject(answer.result)) return yield* Effect.fail(new RpcError({ message: `${method}: ${JSON.stringify(answer.error ?? null)}` }))
        return answer.result
      })
    const init = yield* request("initialize", initializeParams("mandate-writ-mcp-proxy"))
    yield* send(transport, { jsonrpc: "2.0", method: "notifications/initialized" })
    return { initialize: init, request }
  })

/** Every tool the server lists, following `nextCursor` for at most MAX_PAGES pages. */
export const listAllTools = <E>(request: (method: string, params: JsonObject) => Effect.Effect<JsonObject, E>) =>
  Effect.gen(function*() {
    const tools: Array<JsonObject> = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = yield* request("tools/list", cursor === undefined ? {} : { cursor })
      if (Array.isArray(result.tools)) for (const t of result.tools) if (isJsonObject(t)) tools.push(t)
      cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined
      if (cursor === undefined) break
    }
    return tools
  })
