// The HTTP binding of section 10: an @effect/platform HttpRouter, served over Node by ./listen.ts.
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
//   Anything else: 405 on a known path, 404 elsewhere. The binding's own refusals are audited
//   (section 9.3) through the executor's path for requests refused before they had an identity.
//
// The peer (section 7.6) comes from the TLS connection only (./peer.ts), never from a header.
// Every answer is the canonical form of its JSON, so a replay is answered byte for byte.
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, Option, Schema } from "effect"
import type { IncomingMessage } from "node:http"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { isJsonObject, type Json, parseJson, scanDepth } from "../../kernel/json.js"
import { callAnswerJson, Executor, revokeAnswerJson } from "../../writ/executor/executor.js"
import { Peer, RATE_LIMITED } from "../../writ/executor/services.js"
import { Received } from "../../writ/verify.js"
import { readBody } from "./body.js"
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
  /** The executor's own code (a revoke over its sender's allowance), answered by the binding too. */
  rateLimited: RATE_LIMITED,
  unverifiedCertificate: "mandate/unverified_client_certificate",
  bodyUnreadable: "mandate/body_unreadable",
  /** A new connection from a peer that holds its share of the listener's connections (section 12). */
  tooManyConnections: "mandate/too_many_connections"
} as const

/** The HTTP binding's codes, as one literal union. */
export const WritHttpCode = Schema.Literal(
  HTTP_CODES.unsupportedMediaType,
  HTTP_CODES.methodNotAllowed,
  HTTP_CODES.notFound,
  HTTP_CODES.rateLimited,
  HTTP_CODES.unverifiedCertificate,
  HTTP_CODES.bodyUnreadable,
  HTTP_CODES.tooManyConnections
)
export type WritHttpCode = typeof WritHttpCode.Type

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

/** The media type without parameters, lower-cased. */
const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0].trim().toLowerCase()

/** A key for the revoke rate limit: the authenticated peer, else the remote address. */
const rateKey = (peer: Peer, fingerprint: string | null, req: IncomingMessage): string =>
  peer._tag === "named"
    ? `peer:${peer.id}`
    : peer._tag === "unnamed"
    ? `cert:${fingerprint ?? ""}`
    : `addr:${req.socket.remoteAddress ?? ""}`

/** The peer of the request in context (section 7.6), and the Node request it came on. */
const connectionOf = (bindings: TransportBindings) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    const connection = peerOfRequest(req, bindings)
    return { req, connection, peer: connection._tag === "peer" ? connection.peer : Peer.none }
  })

/**
 * The binding as an HttpApp over the Executor and the revoke rate limit in context: an HttpRouter
 * with POST <path> and GET /.well-known/writ. Whatever the binding itself refuses (no route, wrong
 * method or media type, too large, unreadable, over the revoke rate) is answered here and audited
 * by the executor as a request refused before it had an identity (section 9.3).
 */
export const writHttpApp = (
  options: WritHttpOptions = {}
): HttpApp.Default<never, Executor | RevokeRateLimit> => {
  const path = options.path ?? "/writ"
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH
  const bindings = options.bindings ?? {}
  const close = { connection: "close" }

  /** A refusal of the binding's own: audited, then answered (and the connection closed). */
  const refuse = (
    kind: "call" | "revoke",
    status: number,
    error: string,
    peer: Peer,
    headers: Record<string, string> = close
  ) => Effect.flatMap(Executor, (executor) => Effect.as(executor.refused(kind, error, peer), answer(status, { error }, headers)))

  // Appendix B: the well-known document (not signed; asserts nothing a verifier relies on).
  const wellKnown = Effect.map(Executor, (executor) =>
    answer(200, {
      v: 1,
      did: executor.did,
      endpoint: options.wellKnown?.endpoint ?? path,
      act: [...(options.wellKnown?.act ?? [])]
    }, {}, "application/json"))

  const endpoint = Effect.gen(function*() {
    const executor = yield* Executor
    const limiter = yield* RevokeRateLimit
    const { connection, peer, req } = yield* connectionOf(bindings)
    if (mediaType(req.headers["content-type"]) !== MEDIA_TYPE) {
      return yield* refuse("call", 415, HTTP_CODES.unsupportedMediaType, peer, { accept: MEDIA_TYPE, ...close })
    }
    // Section 7.6: the peer from the connection; a certificate the TLS layer did not verify is
    // refused, never read as "no peer".
    if (connection._tag === "unverified") return yield* refuse("call", 403, HTTP_CODES.unverifiedCertificate, peer)

    // Section 1.6: the byte limit before reading past it; section 1.1 rule 7 before parsing.
    // A client that goes away (or is dropped by the body timeout) mid-body interrupts this fiber
    // (the platform does, when the connection closes unanswered): its request is audited anyway.
    const body = yield* readBody(req, maxBody).pipe(
      Effect.onInterrupt(() => executor.refused("call", HTTP_CODES.bodyUnreadable, peer))
    )
    if (body._tag === "too_large") return yield* refuse("call", 400, "too_large", peer)
    if (body._tag === "error") return yield* refuse("call", 400, HTTP_CODES.bodyUnreadable, peer)
    const bytes = body.bytes
    const received = new Received(bytes)
    // At section 1.6's limit the binding reads the body with the executor's own strict reading,
    // which `received` keeps: the executor verifies from it, so the body is parsed once.
    // A reading that fails, or another limit, takes the scan below first, as it always did.
    const shared = maxDepth === DEFAULT_MAX_DEPTH ? Either.map(received.reading, (r) => r.value) : undefined
    if ((shared === undefined || Either.isLeft(shared)) && scanDepth(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")) > maxDepth) {
      // Refused before parsing. When the binding's limit is at least section 1.6's, the
      // executor's section 7 step 1 refuses it too (it scans depth before building anything) and
      // writes the audit entry (section 9.3); a body within 64 levels is never handed over here.
      if (maxDepth >= DEFAULT_MAX_DEPTH) yield* executor.call(received, peer)
      else yield* executor.refused("call", "too_large", peer)
      return answer(400, { error: "too_large" })
    }

    // Strict reading (section 1.1), then dispatch on `typ`.
    const parsed = shared ?? parseJson(bytes, { maxDepth, integersOnly: true })
    if (Either.isLeft(parsed)) {
      // The executor answers the same unsigned error and writes its audit entry (section 9.3).
      const a = yield* executor.call(received, peer)
      return answer(a._tag === "error" ? 400 : 200, callAnswerJson(a))
    }
    const value = parsed.right
    if (isJsonObject(value) && value.typ === "revoke") {
      // Section 12: the sender's revoke allowance is charged by the executor once the revoke has
      // verified, never before (so junk cannot starve a genuine revoke; rate-limit.ts).
      const key = rateKey(peer, connection._tag === "peer" ? connection.fingerprint : null, req)
      const a = yield* executor.revoke(received, peer, (signer) => limiter.take(key, signer))
      if (a._tag === "limited") {
        return answer(429, { error: HTTP_CODES.rateLimited }, { "retry-after": String(a.retryAfter) })
      }
      const status = a._tag === "invalid" ? 400 : a._tag === "unsaved" ? 503 : 200
      return answer(status, revokeAnswerJson(a))
    }
    const a = yield* executor.call(received, peer)
    return answer(a._tag === "error" ? 400 : 200, callAnswerJson(a))
  })

  // The router runs each route interruptibly: the executor forks accepted work on a fiber of its
  // own (which must be able to interrupt an operation racing its stop signal, section 9.1), and a
  // client that goes away before its call is accepted abandons it (nothing was promised).
  const routes = HttpRouter.empty.pipe(
    HttpRouter.post(path as HttpRouter.PathInput, HttpIncomingMessage.withMaxBodySize(endpoint, Option.some(maxBody))),
    HttpRouter.get("/.well-known/writ", wellKnown),
    // No route: a known path with another method is 405 (with Allow), anything else 404.
    Effect.catchTag("RouteNotFound", () =>
      Effect.gen(function*() {
        const { peer, req } = yield* connectionOf(bindings)
        const pathname = (req.url ?? "/").split("?")[0]
        if (pathname === path) return yield* refuse("call", 405, HTTP_CODES.methodNotAllowed, peer, { allow: "POST", ...close })
        if (pathname === "/.well-known/writ") {
          return yield* refuse("call", 405, HTTP_CODES.methodNotAllowed, peer, { allow: "GET", ...close })
        }
        return yield* refuse("call", 404, HTTP_CODES.notFound, peer)
      }))
  )
  // Paths match exactly, as section 10's endpoint is one URL: case-sensitive, no trailing slash.
  return HttpRouter.withRouterConfig(routes, { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false })
}
