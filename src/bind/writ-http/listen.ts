// The listener of the section 10 binding: @effect/platform's NodeHttpServer on a Node HTTP or
// HTTPS server (mTLS when a client CA is given), with the limits of section 12 on every connection.
import { HttpServer } from "@effect/platform"
import type { ServeError } from "@effect/platform/HttpServerError"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Exit, Runtime, type Scope } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import { encodeCanonical } from "../../kernel/canonical.js"
import { capConnections, closeIdleKeepAlive, perPeerCap, peerConnections, refuseSocket } from "../peer-connections.js"
import { Executor } from "../../writ/executor/executor.js"
import { serveCallsFirst } from "./fast-path.js"
import type { RevokeRateLimit } from "./rate-limit.js"
import { DEFAULT_MAX_BODY, DEFAULT_MAX_DEPTH, HTTP_CODES, MEDIA_TYPE, writHttpApp, type WritHttpOptions } from "./server.js"

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
 * headers and body, time to sit idle, and connections open at once, in all and per peer. Node's
 * own HTTP server enforces the first ones (it answers 408 and closes a connection whose headers or
 * body are late, and closes connections past the cap at accept, before reading a byte); the idle
 * time between requests and the per-peer cap are kept here (../peer-connections.ts).
 */
export interface ListenerLimits {
  /** From a connection's start (or its previous answer) to a request's complete headers, in ms; an
   * idle connection that never sends a request is closed by it too. Default 10000. */
  readonly headersTimeoutMs?: number
  /** Time for a request's body, in ms, after the headers' allowance: a request must be whole
   * within `headersTimeoutMs + bodyTimeoutMs` of its start. Default 20000. */
  readonly bodyTimeoutMs?: number
  /** A kept-alive connection that has not sent a complete request this long after its previous
   * answer is closed, in ms: bytes short of a request (blank lines, a trickle) do not keep it
   * open. Default 5000. */
  readonly idleTimeoutMs?: number
  /** Connections open at once; more are closed at accept, unread. Default 512. */
  readonly maxConnections?: number
  /** Connections one peer (remote address; IPv6: its /64) may hold; always kept below
   * `maxConnections`, so one peer alone cannot fill the listener. Past it a new connection is
   * answered 429 `mandate/too_many_connections` and closed (over TLS: closed at accept, unread).
   * Default a quarter of `maxConnections` (128). */
  readonly maxConnectionsPerPeer?: number
}

export const DEFAULT_LIMITS: Required<ListenerLimits> = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 20_000,
  idleTimeoutMs: 5_000,
  maxConnections: 512,
  maxConnectionsPerPeer: 128
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

/** The answer to a connection over its peer's cap (plain HTTP; written before reading a byte). */
const tooManyConnections = (() => {
  const body = encodeCanonical({ error: HTTP_CODES.tooManyConnections }, "utf16")
  return `HTTP/1.1 429 Too Many Requests\r\nContent-Type: ${MEDIA_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${body}`
})()

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
  const maxConnections = Math.max(1, Math.floor(options.limits?.maxConnections ?? DEFAULT_LIMITS.maxConnections))
  server.maxConnections = maxConnections
  // One peer holds at most its share; the cap in all stays Node's (closed at accept, unread).
  const perPeer = perPeerCap(maxConnections, options.limits?.maxConnectionsPerPeer)
  capConnections(server, peerConnections(maxConnections, perPeer), (socket, refusal) =>
    // Over TLS a readable refusal would cost the handshake the cap is there to spare.
    refuseSocket(socket, tls === undefined && refusal.reason === "peer" ? tooManyConnections : undefined))
  closeIdleKeepAlive(server, limits.keepAliveTimeout)
  return server
}

/** Serves the binding within the scope; returns the bound port and base URL. */
export const listen = (
  options: ListenOptions
): Effect.Effect<{ readonly port: number; readonly url: string }, ServeError, Scope.Scope | Executor | RevokeRateLimit> =>
  Effect.gen(function*() {
    let node: Http.Server | undefined
    const server = yield* NodeHttpServer.make(() => (node = nodeServer(options)), { port: options.port, host: options.host ?? "127.0.0.1" })
    const address = server.address
    const port = address._tag === "TcpAddress" ? address.port : 0
    const host = options.host ?? "127.0.0.1"
    const scheme = options.tls === undefined ? "http" : "https"
    const url = `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}${options.path ?? "/writ"}`
    // Appendix B publishes the configured endpoint, or the one it listens on.
    const endpoint = options.wellKnown?.endpoint !== undefined && options.wellKnown.endpoint !== ""
      ? options.wellKnown.endpoint
      : url
    const before = new Set(node!.listeners("request"))
    yield* server.serve(writHttpApp({ ...options, wellKnown: { endpoint, act: options.wellKnown?.act ?? [] } }))
    // Calls by plain code in front of the route (fast-path.ts), when the route would read the
    // same bytes the same way: section 1.1 rule 7's depth the executor's own.
    const executor = yield* Executor
    const replayNow = executor.replayNow
    if ((options.maxDepth ?? DEFAULT_MAX_DEPTH) === DEFAULT_MAX_DEPTH) {
      const clock = yield* Effect.clock
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())
      const route = node!.listeners("request").filter((l) => !before.has(l)) as Array<(req: Http.IncomingMessage, res: Http.ServerResponse) => void>
      serveCallsFirst(node!, route, {
        path: options.path ?? "/writ",
        maxBody: options.maxBodyBytes ?? DEFAULT_MAX_BODY,
        mediaType: MEDIA_TYPE,
        bindings: options.bindings ?? {},
        replayNow: replayNow === undefined ? () => undefined : (input, peer) => replayNow(input, peer, clock.unsafeCurrentTimeMillis()),
        call: (input, peer) => executor.call(input, peer),
        unreadable: (peer) => executor.refused("call", HTTP_CODES.bodyUnreadable, peer),
        unreadableBody: Buffer.from(encodeCanonical({ error: HTTP_CODES.bodyUnreadable }, "utf16")),
        run: <A>(self: Effect.Effect<A>, onExit: (a: A | undefined) => void) => {
          const fiber = runFork(self)
          fiber.addObserver((exit) => {
            if (Exit.isFailure(exit) && !Exit.isInterrupted(exit)) runFork(Effect.logError("writ call failed", exit.cause))
            onExit(Exit.isSuccess(exit) ? exit.value : undefined)
          })
          return () => fiber.unsafeInterruptAsFork(fiber.id())
        }
      })
    }
    return { port, url }
  })

export { HttpServer }
