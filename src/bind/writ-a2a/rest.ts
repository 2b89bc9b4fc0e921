// The A2A 1.0 HTTP+JSON (REST) binding of an agent endpoint in front of an executor,
// transport-free: one request (method, path under the interface URL, headers, body) in, one status
// and JSON body out (./http.ts serves it beside JSON-RPC). The paths are those the A2A JavaScript
// SDK 1.x's REST transport sends and its REST server serves, relative to the interface URL:
//
//   POST /message:send         SendMessageRequest -> SendMessageResponse (`{"task": ...}`)
//   POST /message:stream       the same, as server-sent events: one event, the final task
//   GET  /tasks/{id}           the task
//   POST /tasks/{id}:cancel    CancelTaskRequest (`metadata` may carry a Writ revoke, section 9.1)
//   GET  /tasks                the asking peer's tasks, a page (query: contextId, status, pageSize,
//                              pageToken, historyLength, statusTimestampAfter, includeArtifacts)
//   GET|POST /tasks/{id}:subscribe  the task, then its changes, as server-sent events
//   POST /tasks/{id}/pushNotificationConfigs             a push config (201), its URL on the allow list
//   GET  /tasks/{id}/pushNotificationConfigs[/{configId}] the task's configs, or one
//   DELETE /tasks/{id}/pushNotificationConfigs/{configId} (204; idempotent)
//
// The same Writ checks as JSON-RPC (./rpc.ts: one `sendMessage`, `getTask`, `cancelTask`), and the
// same reasons, carried as the SDK reads an HTTP+JSON error: a `google.rpc.Status`-shaped
// `{"error": {code, status, message, details}}` whose `details` hold the A2A ErrorInfo the SDK maps
// to its error class (domain a2a-protocol.org: TASK_NOT_FOUND, ...), when there is one, and the
// Writ ErrorInfo naming the reason (domain writ.dev). The message starts with the Writ reason.
//
// A revoke in a cancel: the request body's `metadata["io.writ/revoke"]` (the 1.0 CancelTaskRequest),
// or the `writ-revoke` header (base64url of its JSON) for a client that sends no body; the SDK 1.3
// REST transport's `cancelTask` sends none, and passes headers as service parameters. Both present
// must be the same revoke.
import { Effect, Option, Schema, type Stream } from "effect"
import { decodeBase64url } from "../../kernel/base64url.js"
import { encodeCanonical } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import type { Executor } from "../../writ/executor/executor.js"
import { Peer } from "../../writ/executor/services.js"
import { HTTP_CODES } from "../writ-http/server.js"
import { a2aError, type A2aError } from "./errors.js"
import {
  A2aTasks, cancelTask, createPushConfig, deletePushConfig, ERROR_DOMAIN, ERROR_INFO_TYPE, getPushConfig, getTask, listPushConfigs, listTasks, sendMessage,
  type StreamEvent, subscribeTask
} from "./rpc.js"
import { ListTasksRequest, Metadata, REVOKE_HEADER, REVOKE_KEY, SendMessageRequest, type Task, TaskPushNotificationConfig } from "./schema.js"
import { decodeJson, readJson } from "./server.js"

/** One HTTP+JSON request as the transport received it. */
export interface RestRequest {
  readonly method: string
  /** The path under the interface URL, as received (percent-encoded), without the query. */
  readonly path: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The body; empty or absent when the request has none. */
  readonly body?: Uint8Array | undefined
  /** The query string, without its `?` (ListTasks reads its parameters from it). */
  readonly query?: string | undefined
}

/** The answer: a status and a JSON body, sent as one document or as a stream of one event. */
export interface RestAnswer {
  readonly status: number
  readonly body: Json
  readonly stream: boolean
  /** The methods a path serves, for a 405. */
  readonly allow?: string
  /** A stream of events (SubscribeToTask), sent as server-sent events in place of `body`. */
  readonly events?: Stream.Stream<StreamEvent>
}

/** The A2A ErrorInfo domain the SDK maps to its error classes. */
export const A2A_ERROR_DOMAIN = "a2a-protocol.org"

/** How a reason travels on HTTP+JSON: the HTTP status, the google.rpc status name, and the A2A
 * ErrorInfo reason the SDK turns into its error class (TaskNotFoundError, ...), when one fits.
 * The statuses are the SDK's (its REST_ERROR_HTTP_STATUS). */
export const restStatusOf = (reason: string): { readonly http: number; readonly status: string; readonly a2a?: string } => {
  switch (reason) {
    case "mandate/a2a_task_not_found":
      return { http: 404, status: "NOT_FOUND", a2a: "TASK_NOT_FOUND" }
    case "mandate/a2a_not_cancelable":
      return { http: 400, status: "FAILED_PRECONDITION", a2a: "TASK_NOT_CANCELABLE" }
    case "mandate/a2a_push_not_supported":
      return { http: 400, status: "FAILED_PRECONDITION", a2a: "PUSH_NOTIFICATION_NOT_SUPPORTED" }
    // A2A 1.0 section 3.1.8: a config that does not exist is TaskNotFoundError.
    case "mandate/a2a_push_config_not_found":
      return { http: 404, status: "NOT_FOUND", a2a: "TASK_NOT_FOUND" }
    case "mandate/a2a_task_final":
      return { http: 400, status: "FAILED_PRECONDITION", a2a: "UNSUPPORTED_OPERATION" }
    case "mandate/a2a_push_url_refused":
    case "mandate/a2a_push_config_limit":
      return { http: 400, status: "INVALID_ARGUMENT", a2a: "INVALID_PARAMS" }
    case "mandate/a2a_unknown_method":
      return { http: 404, status: "NOT_FOUND" }
    case "too_large":
      return { http: 413, status: "INVALID_ARGUMENT" }
    case "mandate/a2a_bad_request":
      return { http: 400, status: "INVALID_ARGUMENT", a2a: "INVALID_PARAMS" }
    default:
      // As on JSON-RPC: a store that could not save a revoke is the endpoint's fault; anything
      // else (a Writ reason: malformed, missing_call, bad_signature, ...) is the request's.
      return reason.startsWith("mandate/") ? { http: 500, status: "INTERNAL" } : { http: 400, status: "INVALID_ARGUMENT", a2a: "INVALID_PARAMS" }
  }
}

/** The error body for `reason`, with the HTTP status it goes with. */
export const restErrorBody = (reason: string, path: string | undefined, message: string, http?: number): { readonly status: number; readonly body: JsonObject } => {
  const s = restStatusOf(reason)
  const status = http ?? s.http
  return {
    status,
    body: {
      error: {
        code: status,
        status: s.status,
        message: `${reason}${path === undefined ? "" : ` at ${path}`}: ${message}`,
        details: [
          ...(s.a2a === undefined ? [] : [{ "@type": ERROR_INFO_TYPE, reason: s.a2a, domain: A2A_ERROR_DOMAIN }]),
          { "@type": ERROR_INFO_TYPE, reason, domain: ERROR_DOMAIN, ...(path === undefined ? {} : { metadata: { path } }) }
        ]
      }
    }
  }
}

/** The answer to a failed request. */
export const restError = (e: A2aError): RestAnswer => ({ ...restErrorBody(e.reason, e.path, e.message), stream: false })

/** The body of a cancel: the 1.0 CancelTaskRequest, whose `id` (if given) is the path's. */
const CancelBody = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  metadata: Schema.optional(Metadata)
})

const header = (headers: RestRequest["headers"], name: string): string | undefined => {
  const h = headers[name]
  return typeof h === "string" ? h : h?.[0]
}

/** A body, or `{}` when the request has none (a cancel from the SDK's REST transport). */
const bodyOf = (request: RestRequest): Uint8Array => (request.body === undefined || request.body.length === 0 ? new TextEncoder().encode("{}") : request.body)

/** The revoke in the `writ-revoke` header: base64url of its JSON, read as strictly as a body. */
export const revokeOfHeader = (value: string): Effect.Effect<JsonObject, A2aError> =>
  Option.match(decodeBase64url(value.trim()), {
    onNone: () => Effect.fail(a2aError("malformed", `header.${REVOKE_HEADER}`, "not canonical base64url")),
    onSome: (bytes) =>
      Effect.flatMap(readJson(Schema.Unknown, bytes, `header.${REVOKE_HEADER}`), (v) =>
        isJsonObject(v as Json) ? Effect.succeed(v as JsonObject) : Effect.fail(a2aError("malformed", `header.${REVOKE_HEADER}`, "the revoke is an object")))
  })

/** `POST /tasks/{id}:cancel`: the revoke from the body's metadata or the header, one revoke. */
const cancel = (id: string, request: RestRequest, peer: Peer) =>
  Effect.gen(function*() {
    const body = yield* readJson(CancelBody, bodyOf(request), "body")
    if (body.id !== undefined && body.id !== "" && body.id !== id) {
      return yield* Effect.fail(a2aError("malformed", "body.id", `the body names task ${body.id}, the path ${id}`))
    }
    const inHeader = header(request.headers, REVOKE_HEADER)
    const fromHeader = inHeader === undefined ? undefined : yield* revokeOfHeader(inHeader)
    const inBody: Json | undefined = body.metadata?.[REVOKE_KEY]
    if (fromHeader !== undefined && inBody !== undefined && encodeCanonical(inBody, "utf16") !== encodeCanonical(fromHeader, "utf16")) {
      return yield* Effect.fail(a2aError("malformed", `header.${REVOKE_HEADER}`, `a different revoke than body.metadata.${REVOKE_KEY}`))
    }
    const revoke = inBody ?? fromHeader
    const metadata = { ...body.metadata, ...(revoke === undefined ? {} : { [REVOKE_KEY]: revoke }) }
    return yield* cancelTask({ id, metadata }, peer)
  })

/** A path segment as sent (percent-encoded), decoded; `malformed` when it does not decode. */
const segment = (raw: string): Effect.Effect<string, A2aError> =>
  Effect.try({ try: () => decodeURIComponent(raw), catch: () => a2aError("malformed", "path", "a task id that is not percent-encoded UTF-8") })

const ok = (body: Json, stream = false): RestAnswer => ({ status: 200, body, stream })
// A decoded Task is JSON by its Schema; the cast states what its optional members' type cannot.
const taskJson = (task: Task): Json => task as unknown as Json

const TASK = /^\/tasks\/([^/:]+)$/
const CANCEL = /^\/tasks\/([^/:]+):cancel$/
const SUBSCRIBE = /^\/tasks\/([^/:]+):subscribe$/
const CONFIGS = /^\/tasks\/([^/:]+)\/pushNotificationConfigs$/
const CONFIG = /^\/tasks\/([^/:]+)\/pushNotificationConfigs\/([^/:]+)$/

/** Which methods a served path takes, or undefined when no route has the path. */
const allowed = (path: string): string | undefined =>
  path === "/message:send" || path === "/message:stream" || CANCEL.test(path)
    ? "POST"
    : TASK.test(path) || path === "/tasks"
    ? "GET"
    : SUBSCRIBE.test(path) || CONFIGS.test(path)
    ? "GET, POST"
    : CONFIG.test(path)
    ? "GET, DELETE"
    : undefined

/** ListTasks' query (the SDK's REST transport sends its parameters there): integers and booleans
 * read strictly, anything else left for the Schema to refuse. */
export const listQuery = (query: string): Effect.Effect<ListTasksRequest, A2aError> => {
  const q = new URLSearchParams(query)
  const out: Record<string, Json> = {}
  for (const [k, v] of q) {
    if (Object.hasOwn(out, k)) return Effect.fail(a2aError("malformed", `query.${k}`, "a parameter given twice"))
    out[k] = (k === "pageSize" || k === "historyLength") && /^-?\d{1,9}$/.test(v)
      ? Number(v)
      : k === "includeArtifacts" && (v === "true" || v === "false")
      ? v === "true"
      : v
  }
  return decodeJson(ListTasksRequest, out, "query")
}

/** `POST /tasks/{id}/pushNotificationConfigs`: the body's config, for the path's task. */
const createConfig = (taskId: string, request: RestRequest) =>
  Effect.gen(function*() {
    const body = yield* readJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }), bodyOf(request), "body")
    if (body.taskId !== undefined && body.taskId !== "" && body.taskId !== taskId) {
      return yield* Effect.fail(a2aError("malformed", "body.taskId", `the body names task ${String(body.taskId)}, the path ${taskId}`))
    }
    return yield* createPushConfig(yield* decodeJson(TaskPushNotificationConfig, { ...body, taskId }, "body"))
  })

/**
 * One HTTP+JSON request, answered. Never fails: every error is an error body naming its reason.
 * Bodies are read strictly (section 1.1), as on JSON-RPC, since the call inside is verified from them.
 */
export const handleRest = Effect.fn("writ.a2a.handleRest")(function*(request: RestRequest, peer: Peer = Peer.none) {
  const { method, path } = request
  const answer: Effect.Effect<RestAnswer, A2aError, Executor | A2aTasks> = Effect.gen(function*() {
    if (method === "POST" && (path === "/message:send" || path === "/message:stream")) {
      const params = yield* readJson(SendMessageRequest, bodyOf(request), "body")
      const task = yield* sendMessage(params.message, peer, params.configuration)
      // A stream of one event, the final task (A2A 1.0 `StreamResponse` names it as
      // `SendMessageResponse` does).
      return ok({ task: taskJson(task) }, path === "/message:stream")
    }
    const get = TASK.exec(path)
    if (method === "GET" && get !== null) return ok(taskJson(yield* getTask(yield* segment(get[1]))))
    const canceled = CANCEL.exec(path)
    if (method === "POST" && canceled !== null) return ok(taskJson(yield* cancel(yield* segment(canceled[1]), request, peer)))
    if (method === "GET" && path === "/tasks") return ok(yield* listTasks(yield* listQuery(request.query ?? ""), peer))
    const subscribe = SUBSCRIBE.exec(path)
    if ((method === "GET" || method === "POST") && subscribe !== null) {
      return { status: 200, body: null, stream: true, events: yield* subscribeTask(yield* segment(subscribe[1])) }
    }
    const configs = CONFIGS.exec(path)
    if (method === "POST" && configs !== null) return { status: 201, body: yield* createConfig(yield* segment(configs[1]), request), stream: false }
    if (method === "GET" && configs !== null) return ok(yield* listPushConfigs(yield* segment(configs[1])))
    const config = CONFIG.exec(path)
    if (method === "GET" && config !== null) return ok(yield* getPushConfig(yield* segment(config[1]), yield* segment(config[2])))
    if (method === "DELETE" && config !== null) {
      yield* deletePushConfig(yield* segment(config[1]), yield* segment(config[2]))
      return { status: 204, body: null, stream: false }
    }
    const allow = allowed(path)
    if (allow !== undefined) {
      return { ...restErrorBody(HTTP_CODES.methodNotAllowed, "method", `${method} ${path}: only ${allow}`, 405), stream: false, allow }
    }
    return yield* Effect.fail(a2aError("mandate/a2a_unknown_method", "path", `${method} ${path} is not served here (POST /message:send, POST /message:stream, GET /tasks, GET /tasks/{id}, POST /tasks/{id}:cancel, POST /tasks/{id}:subscribe, /tasks/{id}/pushNotificationConfigs[/{configId}])`))
  })
  return yield* Effect.catchTag(answer, "A2aError", (e) => Effect.succeed(restError(e)))
})
