// Serving the console: @effect/platform's Node HTTP server on 127.0.0.1 (by default) for the
// length of the scope, with the page bundled and the sources opened first (a missing file or a
// failed bundle stops the start with its reason, before anything listens).
//
// Floods (Writ section 12's denial-of-service advice, as every listener here follows it): the
// server holds at most `maxConnections` sockets, one peer (its address; src/bind/peer-connections)
// at most a share of them, so a peer holding idle sockets cannot lock another out; a socket that
// sends no complete request within `headersTimeoutMs` is closed by Node, and a kept-alive one that
// sends nothing whole within `idleTimeoutMs` of its last answer is closed too (a blank line now and
// then does not keep it open).
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Http from "node:http"
import { capConnections, closeIdleKeepAlive, peerConnections, perPeerCap, refuseSocket } from "../bind/peer-connections.js"
import { bundledAssets, ConsoleAssets } from "./assets.js"
import { consoleError, type ConsoleReason, statusOf } from "./reason.js"
import { consoleApp } from "./server.js"
import { ConsoleConfig, type ConsoleConfigShape, sourcesLayer } from "./stores.js"

export interface ConsoleListenOptions {
  readonly port: number
  readonly host?: string
  readonly allowHosts?: ReadonlyArray<string>
  readonly limits?: ConsoleLimits
}

export interface ConsoleLimits {
  /** Sockets open at once; more are closed at accept, unread. Default 128. */
  readonly maxConnections?: number
  /** Sockets one peer may hold (kept below maxConnections). Default 32. */
  readonly maxConnectionsPerPeer?: number
  /** From a socket's start (or its last answer) to a request's complete headers, ms. Default 10000. */
  readonly headersTimeoutMs?: number
  /** A kept-alive socket with no complete request this long after its last answer is closed, ms. Default 5000. */
  readonly idleTimeoutMs?: number
}

export const CONSOLE_LIMITS: Required<ConsoleLimits> = { maxConnections: 128, maxConnectionsPerPeer: 32, headersTimeoutMs: 10_000, idleTimeoutMs: 5_000 }

/** The answer to a socket over its peer's share, written before a byte of it is read. */
const tooMany = (() => {
  const reason = "console/too_many_connections" satisfies ConsoleReason
  const body = JSON.stringify({ error: reason, detail: "this peer holds its share of the console's connections" })
  return `HTTP/1.1 ${statusOf[reason]} Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
})()

/** A Node HTTP server with the console's limits in front of its connections. */
export const consoleHttpServer = (limits: ConsoleLimits = {}): Http.Server => {
  const l = { ...CONSOLE_LIMITS, ...limits }
  const headersTimeout = Math.max(1, Math.floor(l.headersTimeoutMs))
  const server = Http.createServer({
    headersTimeout,
    requestTimeout: headersTimeout + 20_000,
    keepAliveTimeout: Math.max(1, Math.floor(l.idleTimeoutMs)),
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4)))
  })
  const max = Math.max(1, Math.floor(l.maxConnections))
  capConnections(server, peerConnections(max, perPeerCap(max, l.maxConnectionsPerPeer)), (socket, refusal) =>
    refuseSocket(socket, refusal.reason === "peer" ? tooMany : undefined))
  closeIdleKeepAlive(server, Math.max(1, Math.floor(l.idleTimeoutMs)))
  return server
}

/** Serves the console within the scope; returns its URL. */
export const serveConsole = Effect.fn("console.serve")(function*(config: ConsoleConfigShape, options: ConsoleListenOptions) {
  const host = options.host ?? "127.0.0.1"
  const ctx = yield* Layer.build(Layer.mergeAll(sourcesLayer, bundledAssets).pipe(Layer.provideMerge(Layer.succeed(ConsoleConfig, config))))
  const server = yield* NodeHttpServer.make(() => consoleHttpServer(options.limits), { port: options.port, host }).pipe(
    Effect.mapError((e) => consoleError("console/store_unavailable", `cannot listen on ${host}:${options.port}: ${e.message}`, "listen"))
  )
  const address = server.address
  const port = address._tag === "TcpAddress" ? address.port : 0
  // A --host that is not loopback is itself the instruction to answer under that name.
  const allowHosts = [...(options.allowHosts ?? []), host]
  yield* server.serve(Effect.provide(consoleApp({ allowHosts }), ctx))
  return { port, url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/` }
})

export { ConsoleAssets }
