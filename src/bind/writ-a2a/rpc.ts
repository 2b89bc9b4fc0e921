// The A2A JSON-RPC binding of an agent endpoint in front of an executor, transport-free: one
// request body in, one JSON-RPC response out (./http.ts serves it over HTTP). The version is the
// peer's: a 1.0 method name (`SendMessage`, `GetTask`, `CancelTask`) is answered in 1.0 shapes, a
// 0.3 one (`message/send`, `tasks/get`, `tasks/cancel`) in 0.3 shapes (./v03.ts), so either SDK
// reads its own answer. A streaming request (`SendStreamingMessage`, `message/stream`) gets a
// stream of one event, the final task: every answer here is final when it is sent. At 1.0 only:
// `ListTasks`, `SubscribeToTask` (a stream of the task's changes, ./tasks.ts) and the push config
// methods (./push.ts), as the A2A SDK 1.x names them (`CreateTaskPushNotificationConfig`,
// `GetTaskPushNotificationConfig`, `ListTaskPushNotificationConfigs`, `DeleteTaskPushNotificationConfig`).
//
// Errors are JSON-RPC errors whose `data` is one google.rpc.ErrorInfo naming the Writ reason
// (domain `writ.dev`), as A2A 1.0 section 9 carries error details; the message starts with it.
import { Effect, Option, Schema, Stream } from "effect"
import { encodeCanonical } from "../../kernel/canonical.js"
import type { Json, JsonObject } from "../../kernel/json.js"
import { callIdentity } from "../../writ/sign.js"
import type { Executor } from "../../writ/executor/executor.js"
import { Peer } from "../../writ/executor/services.js"
import { a2aError, type A2aError, type A2aReason } from "./errors.js"
import { A2aPush, type A2aPushService, configJson } from "./push.js"
import {
  A2A_LEGACY_VERSION, A2A_VERSION, type A2aVersion, CancelTaskParams, GetTaskParams, isTerminal, JsonRecord, JsonValue, ListTaskPushNotificationConfigsRequest,
  ListTasksRequest, type Message, REVOKE_KEY, SendMessageConfiguration, SendMessageRequest, SubscribeToTaskRequest, type Task, TaskPushNotificationConfig,
  TaskPushNotificationConfigRef
} from "./schema.js"
import { callFrom, decodeJson, handleCancel, handleMessage, readJson } from "./server.js"
import { A2aTasks, type TaskOwner } from "./tasks.js"
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
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004
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
    // Section 3.1.8: a config that does not exist is TaskNotFoundError.
    case "mandate/a2a_push_config_not_found":
      return RPC_CODES.taskNotFound
    case "mandate/a2a_push_not_supported":
      return RPC_CODES.pushNotificationNotSupported
    case "mandate/a2a_task_final":
      return RPC_CODES.unsupportedOperation
    case "mandate/a2a_push_url_refused":
    case "mandate/a2a_push_config_limit":
      return RPC_CODES.invalidParams
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

export { A2aTasks } from "./tasks.js"

/** The owner a peer's tasks are listed under (./tasks.ts): its name, `(unnamed)`, or `""` for none. */
export const ownerOf = (peer: Peer): TaskOwner => (peer._tag === "named" ? peer.id : peer._tag === "unnamed" ? "(unnamed)" : "")

/** The push service when this endpoint was given a webhook allow list; else every push method is
 * refused (A2A 1.0 section 3.3.4: PushNotificationNotSupportedError). */
const pushService: Effect.Effect<A2aPushService, A2aError> = Effect.flatMap(
  Effect.serviceOption(A2aPush),
  Option.match({
    onNone: () => Effect.fail(a2aError("mandate/a2a_push_not_supported", "method", "this endpoint sends no push notifications (started without --push-allow; capabilities.pushNotifications is false)")),
    onSome: Effect.succeed
  })
)

/** Stores a task; a change of state (or a new task) is pushed to the task's webhooks, if any. */
export const recordTask = (task: Task, owner?: TaskOwner): Effect.Effect<Task, never, A2aTasks> =>
  Effect.gen(function*() {
    const { previous, stored } = yield* (yield* A2aTasks).put(task, owner)
    if (previous === undefined || previous.status.state !== stored.task.status.state) {
      const push = yield* Effect.serviceOption(A2aPush)
      if (Option.isSome(push)) yield* push.value.notify(stored.task)
    }
    return stored.task
  })

/**
 * `SendMessage` on either binding (JSON-RPC, ./rest.ts): the task is held as working from the
 * moment its call is read (so `SubscribeToTask`, `ListTasks` and a push config see it while the
 * operation runs), then as the executor's answer. A push config in the request's `configuration`
 * is checked and registered before the call runs: refused, nothing runs.
 */
export const sendMessage = (message: Message, peer: Peer, configuration?: JsonRecord): Effect.Effect<Task, A2aError, Executor | A2aTasks> =>
  Effect.gen(function*() {
    const tasks = yield* A2aTasks
    const config = configuration === undefined ? undefined : (yield* decodeJson(SendMessageConfiguration, configuration, "params.configuration")).taskPushNotificationConfig
    const push = config === undefined ? undefined : yield* pushService
    if (push !== undefined && config !== undefined) yield* push.check(config.url)
    const { call } = yield* callFrom(message)
    const taskId = message.taskId !== undefined && message.taskId !== "" ? message.taskId : callIdentity(call)
    const ids = { taskId, contextId: message.contextId !== undefined && message.contextId !== "" ? message.contextId : taskId }
    const owner = ownerOf(peer)
    if (push !== undefined && config !== undefined) yield* push.set({ ...config, taskId })
    // A task already held (a resent call) keeps its state until the answer replaces it.
    if ((yield* tasks.get(taskId)) === undefined) yield* recordTask({ id: taskId, contextId: ids.contextId, status: { state: "TASK_STATE_WORKING" } }, owner)
    return yield* recordTask(yield* handleMessage(message, ids, peer), owner)
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
    // The canceled task keeps the context it was answered in.
    const before = yield* tasks.get(p.id)
    return yield* recordTask(before === undefined ? task : { ...task, contextId: before.contextId }, ownerOf(peer))
  })

/** The default and largest `ListTasks` page (A2A 1.0 section 3.1.4). */
export const DEFAULT_PAGE_SIZE = 50

/** A page token: the base64url of the last listed change's sequence number (./tasks.ts). */
const pageTokenOf = (seq: number): string => Buffer.from(`seq:${seq}`).toString("base64url")
const seqOfToken = (token: string): Effect.Effect<number, A2aError> => {
  const m = /^seq:([1-9][0-9]{0,15})$/.exec(Buffer.from(token, "base64url").toString("utf8"))
  return m === null || Buffer.from(`seq:${m[1]}`).toString("base64url") !== token
    ? Effect.fail(a2aError("malformed", "params.pageToken", "not a page token this endpoint gave"))
    : Effect.succeed(Number(m[1]))
}

/** A task as listed: history cut to `historyLength` (0: none), artifacts only when asked for. */
const listed = (task: Task, p: ListTasksRequest): Task => {
  const { artifacts, history, ...rest } = task
  const kept = history === undefined || p.historyLength === 0 ? undefined : p.historyLength === undefined ? history : history.slice(-p.historyLength)
  return { ...rest, ...(kept === undefined ? {} : { history: kept }), ...(p.includeArtifacts === true && artifacts !== undefined ? { artifacts } : {}) }
}

/**
 * `ListTasks` on either binding (A2A 1.0 section 3.1.4): the asking peer's tasks (section 13.1),
 * newest change first, filtered by context, state and change time, one page at a time;
 * `nextPageToken` is "" on the last page.
 */
export const listTasks = (p: ListTasksRequest, peer: Peer): Effect.Effect<Json, A2aError, A2aTasks> =>
  Effect.gen(function*() {
    const after = p.statusTimestampAfter === undefined ? undefined : Date.parse(p.statusTimestampAfter)
    if (after !== undefined && (Number.isNaN(after) || !/^\d{4}-\d{2}-\d{2}T[0-9:.]+Z$/.test(p.statusTimestampAfter!))) {
      return yield* Effect.fail(a2aError("malformed", "params.statusTimestampAfter", "an ISO 8601 time in UTC (section 5.6.1)"))
    }
    const before = p.pageToken === undefined || p.pageToken === "" ? undefined : yield* seqOfToken(p.pageToken)
    const owner = ownerOf(peer)
    const matching = (yield* (yield* A2aTasks).all).filter((s) =>
      s.owner === owner &&
      (p.contextId === undefined || p.contextId === "" || s.task.contextId === p.contextId) &&
      (p.status === undefined || s.task.status.state === p.status) &&
      (after === undefined || s.at > after)
    )
    const size = p.pageSize ?? DEFAULT_PAGE_SIZE
    const rest = before === undefined ? matching : matching.filter((s) => s.seq < before)
    const page = rest.slice(0, size)
    const more = rest.length > size
    // A listed Task is JSON by its Schema (see taskIn for the cast).
    return {
      tasks: page.map((s) => listed(s.task, p) as unknown as Json),
      nextPageToken: more ? pageTokenOf(page[page.length - 1].seq) : "",
      pageSize: size,
      totalSize: matching.length
    }
  })

/** A StreamResponse event (A2A 1.0 section 3.2.3). */
export type StreamEvent = JsonObject

/**
 * `SubscribeToTask` on either binding (A2A 1.0 section 3.1.6): the task as it is, then its changes
 * (each new or changed artifact as an `artifactUpdate`, then the `statusUpdate`), ending at the
 * first terminal state. A task in a terminal state takes no subscriber (`mandate/a2a_task_final`,
 * UnsupportedOperationError); one this endpoint does not hold is not found.
 */
export const subscribeTask = (id: string): Effect.Effect<Stream.Stream<StreamEvent>, A2aError, A2aTasks> =>
  Effect.gen(function*() {
    const tasks = yield* A2aTasks
    const now = yield* getTask(id)
    if (isTerminal(now.status.state)) {
      return yield* Effect.fail(a2aError("mandate/a2a_task_final", "params.id", `task ${id} is ${now.status.state}: a task in a terminal state has nothing more to stream (GetTask reads it)`))
    }
    return Stream.unwrapScoped(Effect.gen(function*() {
      // Subscribed first, then read: a change between the two is in the queue, not lost.
      const queue = yield* tasks.changes(id)
      const current = (yield* tasks.get(id)) ?? now
      const later = isTerminal(current.status.state)
        ? Stream.empty
        : Stream.fromQueue(queue).pipe(Stream.takeUntil((t) => isTerminal(t.status.state)))
      const seen = new Map((current.artifacts ?? []).map((a) => [a.artifactId, encodeCanonical(a as unknown as Json, "utf16")]))
      const changes = Stream.mapConcat(later, (t): Array<StreamEvent> => {
        const artifacts = (t.artifacts ?? []).filter((a) => seen.get(a.artifactId) !== encodeCanonical(a as unknown as Json, "utf16"))
        for (const a of artifacts) seen.set(a.artifactId, encodeCanonical(a as unknown as Json, "utf16"))
        return [
          ...artifacts.map((artifact) => ({ artifactUpdate: { taskId: t.id, contextId: t.contextId, artifact: artifact as unknown as Json, lastChunk: true } })),
          { statusUpdate: { taskId: t.id, contextId: t.contextId, status: t.status as unknown as Json } }
        ]
      })
      return Stream.concat(Stream.make({ task: current as unknown as Json } as StreamEvent), changes)
    }))
  })

/** A push config method's task: one this endpoint holds (section 3.1.7: TaskNotFoundError). */
const heldTask = (taskId: string) => Effect.asVoid(getTask(taskId))

/** `CreateTaskPushNotificationConfig` on either binding: the URL checked against the allow list. */
export const createPushConfig = (c: TaskPushNotificationConfig): Effect.Effect<Json, A2aError, A2aTasks> =>
  Effect.gen(function*() {
    const push = yield* pushService
    yield* heldTask(c.taskId)
    return configJson(yield* push.set(c))
  })

export const getPushConfig = (taskId: string, id: string): Effect.Effect<Json, A2aError, A2aTasks> =>
  Effect.gen(function*() {
    const push = yield* pushService
    yield* heldTask(taskId)
    return configJson(yield* push.get(taskId, id))
  })

/** `ListTaskPushNotificationConfigs`: every config of the task, on one page (at most MAX_CONFIGS_PER_TASK). */
export const listPushConfigs = (taskId: string): Effect.Effect<Json, A2aError, A2aTasks> =>
  Effect.gen(function*() {
    const push = yield* pushService
    yield* heldTask(taskId)
    return { configs: (yield* push.list(taskId)).map(configJson), nextPageToken: "" }
  })

/** `DeleteTaskPushNotificationConfig`: idempotent (section 3.1.10). */
export const deletePushConfig = (taskId: string, id: string): Effect.Effect<void, A2aError, A2aTasks> =>
  Effect.gen(function*() {
    const push = yield* pushService
    yield* heldTask(taskId)
    yield* push.remove(taskId, id)
  })

/** A task in the peer's version. The cast: a decoded `Task` (or its 0.3 form) is JSON by its
 * Schema, but its TypeScript type has optional members that the `Json` type cannot state. */
const taskIn = (version: A2aVersion, task: Task): Json => (version === A2A_VERSION ? task as unknown as Json : taskToV03(task) as unknown as Json)

/** The request's `configuration` (1.0 only: a 0.3 request's is not read). */
const configurationOf = (version: A2aVersion, params: unknown): Effect.Effect<JsonRecord | undefined, A2aError> =>
  version === A2A_VERSION ? Effect.map(decodeJson(SendMessageRequest, params, "params"), (p) => p.configuration) : Effect.succeed(undefined)

/** The request's message, in 1.0 shapes whichever version sent it. */
const messageOf = (version: A2aVersion, params: unknown): Effect.Effect<Message, A2aError> =>
  version === A2A_VERSION
    ? Effect.map(decodeJson(SendMessageRequest, params, "params"), (p) => p.message)
    : Effect.map(decodeJson(V03SendParams, params, "params"), (p) => messageFromV03(p.message))

/** One method call: its result, or the error that answers it. */
const dispatch = (
  version: A2aVersion,
  method: string,
  params: unknown,
  peer: Peer
): Effect.Effect<Json | { readonly events: Stream.Stream<StreamEvent> }, A2aError, Executor | A2aTasks> =>
  Effect.gen(function*() {
    const v10 = <A, I>(schema: Schema.Schema<A, I>) =>
      version === A2A_VERSION
        ? decodeJson(schema, params, "params")
        : Effect.fail(a2aError("mandate/a2a_unknown_method", "method", `${method} is served at A2A 1.0 only`))
    switch (method) {
      // A stream of one event: the task, final when it is sent (A2A 1.0 `StreamResponse` names it
      // `task` as `SendMessageResponse` does; 0.3 sends the task itself).
      case "SendStreamingMessage":
      case "SendMessage": {
        const task = yield* sendMessage(yield* messageOf(version, params), peer, yield* configurationOf(version, params))
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
      case "ListTasks":
        return yield* listTasks(yield* v10(ListTasksRequest), peer)
      case "SubscribeToTask":
        return { events: yield* subscribeTask((yield* v10(SubscribeToTaskRequest)).id) }
      case "CreateTaskPushNotificationConfig":
        return yield* createPushConfig(yield* v10(TaskPushNotificationConfig))
      case "GetTaskPushNotificationConfig": {
        const p = yield* v10(TaskPushNotificationConfigRef)
        return yield* getPushConfig(p.taskId, p.id)
      }
      case "ListTaskPushNotificationConfigs":
        return yield* listPushConfigs((yield* v10(ListTaskPushNotificationConfigsRequest)).taskId)
      case "DeleteTaskPushNotificationConfig": {
        const p = yield* v10(TaskPushNotificationConfigRef)
        yield* deletePushConfig(p.taskId, p.id)
        return {}
      }
      default:
        return yield* Effect.fail(a2aError("mandate/a2a_unknown_method", "method", `${method} is not served here (SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, Create/Get/List/DeleteTaskPushNotificationConfig(s); 0.3: message/send, message/stream, tasks/get, tasks/cancel)`))
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
  if (result._tag === "Right" && isEvents(result.right)) {
    const events = Stream.map(result.right.events, (event): JsonObject => ({ jsonrpc: "2.0", id, result: event }))
    return { response: { jsonrpc: "2.0", id, result: {} } as JsonObject, stream: true, events }
  }
  const response = (result._tag === "Right"
    ? { jsonrpc: "2.0", id, result: result.right as Json }
    : { jsonrpc: "2.0", id, error: rpcError(result.left) }) as JsonObject
  return { response, stream: m.method === "SendStreamingMessage", events: undefined }
})

const isEvents = (r: Json | { readonly events: Stream.Stream<StreamEvent> }): r is { readonly events: Stream.Stream<StreamEvent> } =>
  typeof r === "object" && r !== null && !Array.isArray(r) && "events" in r && Stream.StreamTypeId in (r.events as object)

