// The A2A 1.0 HTTP+JSON (REST) binding of an agent endpoint in front of an executor,
// transport-free: one request (method, path under the interface URL, headers, body) in, one status
// and JSON body out (./http.ts serves it beside JSON-RPC). The paths are those the A2A JavaScript
// SDK 1.x's REST transport sends and its REST server serves, relative to the interface URL:
//
//   POST /message:send         SendMessageRequest -> SendMessageResponse (`{"task": ...}`)
//   POST /message:stream       the same, as server-sent events: one event, the final task
//   GET  /tasks/{id}           the task
//   POST /tasks/{id}:cancel    CancelTaskRequest (`metadata` may carry a Writ revoke, section 9.1)
//   *    /tasks/{id}/pushNotificationConfigs[/{configId}]  refused: no push notifications here
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
import { Effect, Option, Schema } from "effect"
import { decodeBase64url } from "../../kernel/base64url.js"
import { encodeCanonical } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import type { Executor } from "../../writ/executor/executor.js"
import { Peer } from "../../writ/executor/services.js"
import { HTTP_CODES } from "../writ-http/server.js"
import { a2aError, type A2aError } from "./errors.js"
import { A2aTasks, cancelTask, ERROR_DOMAIN, ERROR_INFO_TYPE, getTask, sendMessage } from "./rpc.js"
import { Metadata, REVOKE_HEADER, REVOKE_KEY, SendMessageRequest, type Task } from "./schema.js"
import { readJson } from "./server.js"

/** One HTTP+JSON request as the transport received it. */
export interface RestRequest {
  readonly method: string
  /** The path under the interface URL, as received (percent-encoded), without the query. */
  readonly path: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The body; empty or absent when the request has none. */
  readonly body?: Uint8Array | undefined
}

/** The answer: a status and a JSON body, sent as one document or as a stream of one event. */
export interface RestAnswer {
  readonly status: number
  readonly body: Json
  readonly stream: boolean
  /** The methods a path serves, for a 405. */
  readonly allow?: string
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
const PUSH = /^\/tasks\/[^/:]+\/pushNotificationConfigs(\/[^/]+)?$/

/** Which methods a served path takes, or undefined when no route has the path. */
const allowed = (path: string): string | undefined =>
  path === "/message:send" || path === "/message:stream" || CANCEL.test(path) ? "POST" : TASK.test(path) ? "GET" : undefined

/**
 * One HTTP+JSON request, answered. Never fails: every error is an error body naming its reason.
 * Bodies are read strictly (section 1.1), as on JSON-RPC, since the call inside is verified from them.
 */
export const handleRest = Effect.fn("writ.a2a.handleRest")(function*(request: RestRequest, peer: Peer = Peer.none) {
  const { method, path } = request
  const answer: Effect.Effect<RestAnswer, A2aError, Executor | A2aTasks> = Effect.gen(function*() {
    if (method === "POST" && (path === "/message:send" || path === "/message:stream")) {
      const params = yield* readJson(SendMessageRequest, bodyOf(request), "body")
      const task = yield* sendMessage(params.message, peer)
      // A stream of one event, the final task (A2A 1.0 `StreamResponse` names it as
      // `SendMessageResponse` does).
      return ok({ task: taskJson(task) }, path === "/message:stream")
    }
    const get = TASK.exec(path)
    if (method === "GET" && get !== null) return ok(taskJson(yield* getTask(yield* segment(get[1]))))
    const canceled = CANCEL.exec(path)
    if (method === "POST" && canceled !== null) return ok(taskJson(yield* cancel(yield* segment(canceled[1]), request, peer)))
    if (PUSH.test(path)) return yield* Effect.fail(a2aError("mandate/a2a_push_not_supported", "path", "this agent sends no push notifications (capabilities.pushNotifications is false)"))
    const allow = allowed(path)
    if (allow !== undefined) {
      return { ...restErrorBody(HTTP_CODES.methodNotAllowed, "method", `${method} ${path}: only ${allow}`, 405), stream: false, allow }
    }
    return yield* Effect.fail(a2aError("mandate/a2a_unknown_method", "path", `${method} ${path} is not served here (POST /message:send, POST /message:stream, GET /tasks/{id}, POST /tasks/{id}:cancel)`))
  })
  return yield* Effect.catchTag(answer, "A2aError", (e) => Effect.succeed(restError(e)))
})
