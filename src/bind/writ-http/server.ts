// The HTTP binding of section 10, on @effect/platform's HttpServer over Node.
//
//   POST <path>  Content-Type application/writ+json (else 415), body one call or one revoke:
//     - the body's byte length is bounded before it is read: a declared Content-Length over the
//       limit is refused unread, and reading stops at the limit (section 1.6, `too_large`);
//     - its nesting depth is scanned before it is parsed (section 1.1 rule 7, `too_large`);
//     - it is then read strictly (section 1.1) and dispatched on `typ`: "revoke" to section 9.1,
//       anything else to section 7, whose steps 1 and 2 name what is wrong with it;
//     - a call: 200 {"tally","res"?}, or 400 {"error":reason} for section 7 steps 1 and 2;
//     - a revoke: 200 {"tallies","ack","res","fwd"?}; 400 {"error":reason} when invalid; 503
//       {"error":code} when it could not be persisted (section 9); 429 when the peer is over its
//       revoke rate (section 12).
//   GET /.well-known/writ  Appendix B.
//
// The peer (section 7.6) comes from the TLS connection only (./peer.ts), never from a header.
// Every answer is the canonical form of its JSON, so a replay is answered byte for byte.
import { HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import type { ServeError } from "@effect/platform/HttpServerError"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, type Scope } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type { IncomingMessage } from "node:http"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { isJsonObject, type Json, parseJson, scanDepth } from "../../kernel/json.js"
import { callAnswerJson, Executor, revokeAnswerJson } from "../../writ/executor/executor.js"
import type { Peer } from "../../writ/executor/services.js"
import { Received } from "../../writ/verify.js"
import { peerOfRequest, type TransportBindings } from "./peer.js"
import { RevokeRateLimit } from "./rate-limit.js"

export const MEDIA_TYPE = "application/writ+json"
/** Section 1.6: a call and a revoke are each at most 65536 canonical bytes. */
export const DEFAULT_MAX_BODY = 65536
/** Section 1.1 rule 7. */
export const DEFAULT_MAX_DEPTH = 64

/** Implementation codes of this binding (section 11: outside the table, namespaced). */
export const HTTP_CODES = {
  unsupportedMediaType: "mandate/unsupported_media_type",
  methodNotAllowed: "mandate/method_not_allowed",
  notFound: "mandate/not_found",
  rateLimited: "mandate/rate_limited",
  unverifiedCertificate: "mandate/unverified_client_certificate",
  bodyUnreadable: "mandate/body_unreadable"
} as const

export interface WritHttpOptions {
  /** The endpoint's path. Default "/writ". */
  readonly path?: string
  /** Largest body read, in bytes. Default 65536 (section 1.6). */
  readonly maxBodyBytes?: number
  /** Deepest nesting accepted. Default 64 (section 1.1 rule 7). */
  readonly maxDepth?: number
  /** The bindings file: transport identities -> keys (section 7.6). */
  readonly bindings?: TransportBindings
  /** Appendix B: the endpoint URL it publishes and the `act` prefixes it accepts. */
  readonly wellKnown?: { readonly endpoint: string; readonly act: ReadonlyArray<string> }
}

/** An answer: the canonical form of its JSON (one store state, one byte string). */
const answer = (status: number, body: Json, headers: Record<string, string> = {}, contentType = MEDIA_TYPE) =>
  HttpServerResponse.uint8Array(utf8(encodeCanonical(body, "utf16")), { status, contentType, headers })

type BodyRead =
  | { readonly _tag: "ok"; readonly bytes: Uint8Array }
  | { readonly _tag: "too_large" }
  | { readonly _tag: "error"; readonly message: string }

/**
 * Reads at most `limit` bytes of the request body. A declared length over the limit is refused
 * without reading; otherwise reading stops at the first chunk that passes the limit, and the
 * connection is closed after the answer rather than drained.
 */
export const readBody = (req: IncomingMessage, limit: number): Effect.Effect<BodyRead> =>
  Effect.async<BodyRead>((resume) => {
    const declared = req.headers["content-length"]
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
      req.pause()
      resume(Effect.succeed({ _tag: "too_large" }))
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = (r: BodyRead) => {
      if (done) return
      done = true
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("aborted", onAborted)
      resume(Effect.succeed(r))
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        req.pause()
        finish({ _tag: "too_large" })
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish({ _tag: "ok", bytes: new Uint8Array(Buffer.concat(chunks, size)) })
    const onError = (e: Error) => finish({ _tag: "error", message: e.message })
    const onAborted = () => finish({ _tag: "error", message: "request aborted" })
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("aborted", onAborted)
    return Effect.sync(() => {
      done = true
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("aborted", onAborted)
    })
  })

/** The media type without parameters, lower-cased. */
const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0].trim().toLowerCase()

/** A key for the revoke rate limit: the authenticated peer, else the remote address. */
const rateKey = (peer: Peer, fingerprint: string | null, req: IncomingMessage): string =>
  peer._tag === "named"
    ? `peer:${peer.id}`
    : peer._tag === "unnamed"
    ? `cert:${fingerprint ?? ""}`
    : `addr:${req.socket.remoteAddress ?? ""}`

/** The binding as an HttpApp over the Executor and the revoke rate limit in context. */
export const writHttpApp = (
  options: WritHttpOptions = {}
): HttpApp.Default<never, Executor | RevokeRateLimit> => {
  const path = options.path ?? "/writ"
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH
  const bindings = options.bindings ?? {}
  const close = { connection: "close" }
  // @effect/platform runs a handled app uninterruptibly. The executor forks each accepted
  // operation on its own fiber, which inherits that flag, and an application whose operation
  // races a timer against its stop signal (section 9.1) could then never interrupt the loser. The
  // binding therefore runs the app interruptibly: a client that goes away before its call is
  // accepted abandons it (nothing was promised; the store steps roll back), and accepted work
  // runs to its tally on its own fiber regardless (executor.ts).
  return Effect.interruptible(Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const executor = yield* Executor
    const limiter = yield* RevokeRateLimit
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    const pathname = (req.url ?? "/").split("?")[0]

    // Appendix B: the well-known document (not signed; asserts nothing a verifier relies on).
    if (pathname === "/.well-known/writ") {
      if (req.method !== "GET" && req.method !== "HEAD") {
        return answer(405, { error: HTTP_CODES.methodNotAllowed }, { allow: "GET", ...close })
      }
      return answer(200, {
        v: 1,
        did: executor.did,
        endpoint: options.wellKnown?.endpoint ?? path,
        act: [...(options.wellKnown?.act ?? [])]
      }, {}, "application/json")
    }
    if (pathname !== path) return answer(404, { error: HTTP_CODES.notFound }, close)
    if (req.method !== "POST") return answer(405, { error: HTTP_CODES.methodNotAllowed }, { allow: "POST", ...close })
    if (mediaType(req.headers["content-type"]) !== MEDIA_TYPE) {
      return answer(415, { error: HTTP_CODES.unsupportedMediaType }, { accept: MEDIA_TYPE, ...close })
    }

    // Section 7.6: the peer from the connection; a certificate the TLS layer did not verify is
    // refused, never read as "no peer".
    const connection = peerOfRequest(req, bindings)
    if (connection._tag === "unverified") return answer(403, { error: HTTP_CODES.unverifiedCertificate }, close)
    const peer = connection.peer

    // Section 1.6: the byte limit before reading past it; section 1.1 rule 7 before parsing.
    const body = yield* readBody(req, maxBody)
    if (body._tag === "too_large") return answer(400, { error: "too_large" }, close)
    if (body._tag === "error") return answer(400, { error: HTTP_CODES.bodyUnreadable }, close)
    const bytes = body.bytes
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")
    const received = new Received(bytes)
    if (scanDepth(text) > maxDepth) {
      // Refused before parsing. When the binding's limit is at least section 1.6's, the
      // executor's section 7 step 1 refuses it too (it scans depth before building anything) and
      // writes the audit entry (section 9.3); a body within 64 levels is never handed over here.
      if (maxDepth >= DEFAULT_MAX_DEPTH) yield* executor.call(received, peer)
      return answer(400, { error: "too_large" })
    }

    // Strict reading (section 1.1), then dispatch on `typ`.
    const parsed = parseJson(bytes, { maxDepth, integersOnly: true })
    if (Either.isLeft(parsed)) {
      // The executor answers the same unsigned error and writes its audit entry (section 9.3).
      const a = yield* executor.call(received, peer)
      return answer(a._tag === "error" ? 400 : 200, callAnswerJson(a))
    }
    const value = parsed.right
    if (isJsonObject(value) && value.typ === "revoke") {
      // Section 12: the peer's revoke allowance is taken before any signature is checked.
      const allowed = yield* limiter.take(rateKey(peer, connection.fingerprint, req))
      if (!allowed.ok) {
        return answer(429, { error: HTTP_CODES.rateLimited }, { "retry-after": String(allowed.retryAfter) })
      }
      const a = yield* executor.revoke(received, peer)
      const status = a._tag === "invalid" ? 400 : a._tag === "unsaved" ? 503 : 200
      return answer(status, revokeAnswerJson(a))
    }
    const a = yield* executor.call(received, peer)
    return answer(a._tag === "error" ? 400 : 200, callAnswerJson(a))
  }))
}

/** TLS for the listener. With `clientCa`, client certificates are requested and verified against
 * it (mTLS); `allowAnonymous` admits connections that present none (Peer none). */
export interface TlsOptions {
  readonly key: string | Buffer
  readonly cert: string | Buffer
  readonly clientCa?: string | Buffer
  readonly allowAnonymous?: boolean
}

/**
 * What one peer can hold of the listener (section 12, Denial of service): time to send a request's
 * headers and body, time to sit idle, and connections open at once. Node's own HTTP server
 * enforces each one (it answers 408 and closes a connection whose headers or body are late, and
 * closes connections past the cap at accept, before reading a byte).
 */
export interface ListenerLimits {
  /** From a connection's start (or its previous answer) to a request's complete headers, in ms; an
   * idle connection that never sends a request is closed by it too. Default 10000. */
  readonly headersTimeoutMs?: number
  /** Time for a request's body, in ms, after the headers' allowance: a request must be whole
   * within `headersTimeoutMs + bodyTimeoutMs` of its start. Default 20000. */
  readonly bodyTimeoutMs?: number
  /** A kept-alive connection idle between requests is closed after this, in ms. Default 5000. */
  readonly idleTimeoutMs?: number
  /** Connections open at once; more are closed at accept, unread. Default 512. */
  readonly maxConnections?: number
}

export const DEFAULT_LIMITS: Required<ListenerLimits> = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 20_000,
  idleTimeoutMs: 5_000,
  maxConnections: 512
}

export interface ListenOptions extends WritHttpOptions {
  readonly port: number
  readonly host?: string
  readonly tls?: TlsOptions
  readonly limits?: ListenerLimits
}

/** The Node server options that apply `limits`. */
const limitOptions = (limits: ListenerLimits = {}) => {
  const l = { ...DEFAULT_LIMITS, ...limits }
  const headersTimeout = Math.max(1, Math.floor(l.headersTimeoutMs))
  return {
    headersTimeout,
    // Node times the whole request (headers and body) from its start.
    requestTimeout: headersTimeout + Math.max(1, Math.floor(l.bodyTimeoutMs)),
    keepAliveTimeout: Math.max(1, Math.floor(l.idleTimeoutMs)),
    // How often Node looks for late requests (its default, 30 s, would let a timeout run late).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4)))
  }
}

/** The Node server for `options`: plain HTTP, HTTPS, or HTTPS with client certificates. */
export const nodeServer = (options: ListenOptions): Http.Server => {
  const tls = options.tls
  const limits = limitOptions(options.limits)
  const server = tls === undefined
    ? Http.createServer(limits)
    : Https.createServer({
      ...limits,
      // A TLS handshake that stalls holds a connection like late headers do.
      handshakeTimeout: limits.headersTimeout,
      key: tls.key,
      cert: tls.cert,
      ...(tls.clientCa === undefined
        ? {}
        : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: tls.allowAnonymous !== true })
    })
  server.maxConnections = Math.max(1, Math.floor(options.limits?.maxConnections ?? DEFAULT_LIMITS.maxConnections))
  return server
}

/** Serves the binding within the scope; returns the bound port and base URL. */
export const listen = (
  options: ListenOptions
): Effect.Effect<{ readonly port: number; readonly url: string }, ServeError, Scope.Scope | Executor | RevokeRateLimit> =>
  Effect.gen(function*() {
    const server = yield* NodeHttpServer.make(() => nodeServer(options), { port: options.port, host: options.host ?? "127.0.0.1" })
    const address = server.address
    const port = address._tag === "TcpAddress" ? address.port : 0
    const host = options.host ?? "127.0.0.1"
    const scheme = options.tls === undefined ? "http" : "https"
    const url = `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}${options.path ?? "/writ"}`
    // Appendix B publishes the configured endpoint, or the one it listens on.
    const endpoint = options.wellKnown?.endpoint !== undefined && options.wellKnown.endpoint !== ""
      ? options.wellKnown.endpoint
      : url
    yield* server.serve(writHttpApp({ ...options, wellKnown: { endpoint, act: options.wellKnown?.act ?? [] } }))
    return { port, url }
  })

export { HttpServer }
