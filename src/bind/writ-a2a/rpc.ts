// The A2A JSON-RPC binding of an agent endpoint in front of an executor, transport-free: one
// request body in, one JSON-RPC response out (./http.ts serves it over HTTP). The version is the
// peer's: a 1.0 method name (`SendMessage`, `GetTask`, `CancelTask`) is answered in 1.0 shapes, a
// 0.3 one (`message/send`, `tasks/get`, `tasks/cancel`) in 0.3 shapes (./v03.ts), so either SDK
// reads its own answer. A streaming request (`SendStreamingMessage`, `message/stream`) gets a
// stream of one event, the final task: every answer here is final when it is sent.
//
// Errors are JSON-RPC errors whose `data` is one google.rpc.ErrorInfo naming the Writ reason
// (domain `writ.dev`), as A2A 1.0 section 9 carries error details; the message starts with it.
import { Context, Effect, Layer, Ref, Schema } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import type { Executor } from "../../writ/executor/executor.js"
import { Peer } from "../../writ/executor/services.js"
import { a2aError, type A2aError, type A2aReason } from "./errors.js"
import {
  A2A_LEGACY_VERSION, A2A_VERSION, type A2aVersion, CancelTaskParams, GetTaskParams, JsonRecord, JsonValue, type Message, REVOKE_KEY,
  SendMessageRequest, type Task
} from "./schema.js"
import { decodeJson, handleCancel, handleMessage, readJson } from "./server.js"
import { messageFromV03, taskToV03, V03_METHODS, V03SendParams, V03TaskIdParams, V03TaskQueryParams } from "./v03.js"

/** A JSON-RPC 2.0 request as received (its `params` an object, as A2A's all are). */
export const RpcRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(Schema.Union(Schema.String, Schema.Int, Schema.Null)),
  method: Schema.String.pipe(Schema.minLength(1)),
  params: Schema.optional(JsonRecord)
})
export type RpcRequest = typeof RpcRequest.Type

/** A JSON-RPC 2.0 response as read by a client: a result or an error. */
export const RpcResponse = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(Schema.Union(Schema.String, Schema.Int, Schema.Null)),
  result: Schema.optional(JsonValue),
  error: Schema.optional(Schema.Struct({ code: Schema.Int, message: Schema.String, data: Schema.optional(JsonValue) }))
})
export type RpcResponse = typeof RpcResponse.Type

/** The JSON-RPC error codes (JSON-RPC 2.0 and A2A's own). */
export const RPC_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002
} as const

export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
export const ERROR_DOMAIN = "writ.dev"

/** The JSON-RPC code a reason is sent under. */
export const rpcCodeOf = (reason: A2aReason): number => {
  switch (reason) {
    case "noncanonical":
      return RPC_CODES.parseError
    case "mandate/a2a_bad_request":
      return RPC_CODES.invalidRequest
    case "mandate/a2a_unknown_method":
      return RPC_CODES.methodNotFound
    case "mandate/a2a_task_not_found":
      return RPC_CODES.taskNotFound
    case "mandate/a2a_not_cancelable":
      return RPC_CODES.taskNotCancelable
    default:
      // A store that could not save a revoke is the endpoint's fault; anything else is the request's.
      return reason.startsWith("mandate/") ? RPC_CODES.internalError : RPC_CODES.invalidParams
  }
}

/** The error member of a response for `e`. */
export const rpcError = (e: A2aError): JsonObject => ({
  code: rpcCodeOf(e.reason),
  message: `${e.reason}${e.path === undefined ? "" : ` at ${e.path}`}: ${e.message}`,
  data: [{ "@type": ERROR_INFO_TYPE, reason: e.reason, domain: ERROR_DOMAIN, ...(e.path === undefined ? {} : { metadata: { path: e.path } }) }]
})

/** The tasks this endpoint answered, for `GetTask`: the latest `max`, in memory (a restart forgets
 * them; the tallies themselves are in the executor's store and a resent call gets its stored one). */
export class A2aTasks extends Context.Tag("mandate/A2aTasks")<A2aTasks, {
  readonly put: (task: Task) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Task | undefined>
}>() {
  static memory = (max = 1024): Layer.Layer<A2aTasks> =>
    Layer.effect(A2aTasks, Effect.map(Ref.make(new Map<string, Task>()), (ref) => ({
      put: (task) =>
        Ref.update(ref, (m) => {
          const next = new Map(m)
          next.delete(task.id)
          next.set(task.id, task)
          while (next.size > max) next.delete(next.keys().next().value!)
          return next
        }),
      get: (id) => Effect.map(Ref.get(ref), (m) => m.get(id))
    })))
}

/** `SendMessage` on either binding (JSON-RPC, ./rest.ts): the executor's answer as a task, kept for `GetTask`. */
export const sendMessage = (message: Message, peer: Peer): Effect.Effect<Task, A2aError, Executor | A2aTasks> =>
  Effect.gen(function*() {
    const task = yield* handleMessage(message, undefined, peer)
    yield* (yield* A2aTasks).put(task)
    return task
  })

/** `GetTask` on either binding: a task this endpoint answered, else `mandate/a2a_task_not_found`. */
export const getTask = (id: string): Effect.Effect<Task, A2aError, A2aTasks> =>
  Effect.flatMap(A2aTasks, (tasks) => tasks.get(id)).pipe(
    Effect.flatMap((task) => task === undefined ? Effect.fail(a2aError("mandate/a2a_task_not_found", "params.id", `no task ${id} here`)) : Effect.succeed(task))
  )

/**
 * `CancelTask` on either binding. Section 9.1: a revoke is what cancels here. Without one, a task
 * this endpoint answered is final already (the executor answered it before the answer was sent),
 * so not cancelable; one it does not hold is not found.
 */
export const cancelTask = (p: CancelTaskParams, peer: Peer): Effect.Effect<Task, A2aError, Executor | A2aTasks> =>
  Effect.gen(function*() {
    const tasks = yield* A2aTasks
    if (p.metadata?.[REVOKE_KEY] === undefined) {
      const known = yield* tasks.get(p.id)
      return yield* Effect.fail(known === undefined
        ? a2aError("mandate/a2a_task_not_found", "params.id", `no task ${p.id} here, and no Writ revoke in params.metadata.${REVOKE_KEY}`)
        : a2aError("mandate/a2a_not_cancelable", "params.id", `task ${p.id} is final; only a Writ revoke (params.metadata.${REVOKE_KEY}) cancels here`))
    }
    const task = yield* handleCancel(p, peer)
    yield* tasks.put(task)
    return task
  })

/** A task in the peer's version. The cast: a decoded `Task` (or its 0.3 form) is JSON by its
 * Schema, but its TypeScript type has optional members that the `Json` type cannot state. */
const taskIn = (version: A2aVersion, task: Task): Json => (version === A2A_VERSION ? task as unknown as Json : taskToV03(task) as unknown as Json)

/** The request's message, in 1.0 shapes whichever version sent it. */
const messageOf = (version: A2aVersion, params: unknown): Effect.Effect<Message, A2aError> =>
  version === A2A_VERSION
    ? Effect.map(decodeJson(SendMessageRequest, params, "params"), (p) => p.message)
    : Effect.map(decodeJson(V03SendParams, params, "params"), (p) => messageFromV03(p.message))

/** One method call: its result, or the error that answers it. */
const dispatch = (version: A2aVersion, method: string, params: unknown, peer: Peer): Effect.Effect<Json, A2aError, Executor | A2aTasks> =>
  Effect.gen(function*() {
    switch (method) {
      // A stream of one event: the task, final when it is sent (A2A 1.0 `StreamResponse` names it
      // `task` as `SendMessageResponse` does; 0.3 sends the task itself).
      case "SendStreamingMessage":
      case "SendMessage": {
        const task = yield* sendMessage(yield* messageOf(version, params), peer)
        // A decoded Task is JSON by its Schema (see taskIn for the cast).
        return version === A2A_VERSION ? { task: task as unknown as Json } : taskIn(version, task)
      }
      case "GetTask": {
        const { id } = version === A2A_VERSION ? yield* decodeJson(GetTaskParams, params, "params") : yield* decodeJson(V03TaskQueryParams, params, "params")
        return taskIn(version, yield* getTask(id))
      }
      case "CancelTask": {
        const p = version === A2A_VERSION ? yield* decodeJson(CancelTaskParams, params, "params") : yield* decodeJson(V03TaskIdParams, params, "params")
        return taskIn(version, yield* cancelTask(p, peer))
      }
      default:
        return yield* Effect.fail(a2aError("mandate/a2a_unknown_method", "method", `${method} is not served here (SendMessage, SendStreamingMessage, GetTask, CancelTask; 0.3: message/send, message/stream, tasks/get, tasks/cancel)`))
    }
  })

/** The version and 1.0 method name a request's method stands for. */
export const methodOf = (method: string): { readonly version: A2aVersion; readonly method: string } =>
  Object.hasOwn(V03_METHODS, method) ? { version: A2A_LEGACY_VERSION, method: V03_METHODS[method] } : { version: A2A_VERSION, method }

/**
 * One JSON-RPC request body, answered. Never fails: every error is a JSON-RPC error naming its
 * reason. The body is read strictly (section 1.1: a repeated member, a fraction, deep nesting are
 * refused), since the call inside it is verified from these very bytes' values.
 */
export const handleRpc = (body: string | Uint8Array, peer: Peer = Peer.none) => Effect.map(handleRpcRequest(body, peer), (r) => r.response)

/** `handleRpc`, saying also whether the request asked for a stream (`SendStreamingMessage`,
 * `message/stream`), which the transport then sends as server-sent events. */
export const handleRpcRequest = Effect.fn("writ.a2a.handleRpc")(function*(body: string | Uint8Array, peer: Peer = Peer.none) {
  const request = yield* Effect.either(readJson(RpcRequest, body, "request"))
  if (request._tag === "Left") {
    const e = request.left
    const error = e.reason === "malformed" ? a2aError("mandate/a2a_bad_request", "request", e.message) : e
    return { response: { jsonrpc: "2.0", id: null, error: rpcError(error) } as JsonObject, stream: false }
  }
  const { id = null, method, params = {} } = request.right
  const m = methodOf(method)
  const result = yield* Effect.either(dispatch(m.version, m.method, params, peer))
  const response = (result._tag === "Right"
    ? { jsonrpc: "2.0", id, result: result.right }
    : { jsonrpc: "2.0", id, error: rpcError(result.left) }) as JsonObject
  return { response, stream: m.method === "SendStreamingMessage" }
})

