// `yea://` (TCP, default port 7447) and `yeas://` (TLS, 7448) servers (SPEC §2.3). Each accepted
// socket is served by yea-stream/serve.ts in a fiber owned by the server's scope. Connections past
// `maxConnections`, and connections of a peer past its share `maxConnectionsPerPeer` (always below
// `maxConnections`, so one peer alone cannot lock others out: ../peer-connections.ts), are refused
// cleanly: they get one ERROR `limit` line and are closed, so the client learns why instead of
// seeing a reset. Partial frames of all connections together draw on one bounded pool
// (yea-stream/partial-pool.ts). Over TLS the raw sockets are counted too, from before the
// handshake (twice the caps, so a refusal can still be sent as a line after a handshake): sockets
// that never finish one are bounded per peer, and a handshake has `handshakeTimeoutMs` to finish.
import { Effect, FiberSet, Scope } from "effect"
import * as net from "node:net"
import * as tls from "node:tls"
import { encodeLine } from "../../yea/ndjson.js"
import { yeaError, type YeaError } from "../../yea/reason.js"
import type { YeaServiceRuntime } from "../../yea/service/runtime.js"
import { errorBody, envelope } from "../../yea/frame.js"
import { peerConnections, perPeerCap, refuseSocket } from "../peer-connections.js"
import { partialPool, type PartialPoolOptions } from "../yea-stream/partial-pool.js"
import { serveSocket, type StreamLimits } from "../yea-stream/serve.js"

export const YEA_PORT = 7447
export const YEAS_PORT = 7448

export interface TcpServeOptions extends StreamLimits {
  readonly host?: string
  /** 0 picks a free port. Default 7447 (7448 with `tls`). */
  readonly port?: number
  /** Open connections at once. Default 256. */
  readonly maxConnections?: number
  /** Open connections of one peer (remote address; IPv6: its /64), kept below `maxConnections`.
   * Default a quarter of `maxConnections` (64). */
  readonly maxConnectionsPerPeer?: number
  /** Serve TLS (`yeas://`) with this key and certificate. */
  readonly tls?: tls.TlsOptions
  /** Time for a TLS handshake (ms). Default 10000. */
  readonly handshakeTimeoutMs?: number
  /** The bound on partial frames across all connections (default 16 MiB above 64 KiB each). */
  readonly partialFrames?: PartialPoolOptions
}

export interface Listening {
  readonly host: string
  readonly port: number
  readonly url: string
}

/** Listens until the scope closes; every connection's work is interrupted then. */
export const serveTcp = (runtime: YeaServiceRuntime, options: TcpServeOptions = {}): Effect.Effect<Listening, YeaError, Scope.Scope> =>
  Effect.gen(function* () {
    const run = yield* FiberSet.makeRuntime<never>()
    const max = Math.max(1, Math.floor(options.maxConnections ?? 256))
    const connections = peerConnections(max, perPeerCap(max, options.maxConnectionsPerPeer))
    const limits: StreamLimits = { ...options, partialPool: options.partialPool ?? partialPool(options.partialFrames) }
    const refusal = (reason: "full" | "peer", cap: number) =>
      encodeLine(envelope("s_busy", "", errorBody(yeaError("limit", reason === "full"
        ? `this service is at its ${cap} connections; try again later`
        : `this peer holds its ${cap} connections; close one or try again later`, { retry: 1 }))))
    // Plain TCP: counted when accepted, and a refused socket gets one line it can read.
    const onPlain = (socket: net.Socket) => {
      socket.on("error", () => socket.destroy())
      const admission = connections.admit(socket.remoteAddress)
      if (admission._tag === "refused") return refuseSocket(socket, refusal(admission.reason, admission.cap))
      run(Effect.ensuring(serveSocket(runtime, socket, limits), Effect.sync(admission.release)))
    }
    // TLS, before the handshake: raw sockets, at most twice the caps and one (the room above the caps is
    // for the refusals below, sent as a line once a handshake is done). A refused raw socket is
    // closed at once: nothing can be read before a handshake.
    const raw = peerConnections(2 * max + 1, 2 * perPeerCap(max, options.maxConnectionsPerPeer))
    const onRaw = (socket: net.Socket) => {
      socket.on("error", () => socket.destroy())
      const admission = raw.admit(socket.remoteAddress)
      if (admission._tag === "refused") return void socket.destroy()
      socket.once("close", admission.release)
    }
    const onSecure = (socket: tls.TLSSocket) => onPlain(socket)
    const server: net.Server = options.tls !== undefined
      ? tls.createServer({ ...options.tls, handshakeTimeout: options.handshakeTimeoutMs ?? 10_000 }, onSecure)
      : net.createServer(onPlain)
    if (options.tls !== undefined) {
      server.on("connection", onRaw)
      server.on("tlsClientError", (_e, socket) => socket.destroy())
    }
    const host = options.host ?? "127.0.0.1"
    const port = yield* Effect.async<number, YeaError>((resume) => {
      server.once("error", (e) => resume(Effect.fail(yeaError("unavailable", `cannot listen: ${e.message}`))))
      server.listen(options.port ?? (options.tls !== undefined ? YEAS_PORT : YEA_PORT), host, () => resume(Effect.succeed((server.address() as net.AddressInfo).port)))
    })
    // Stop accepting; open connections end when their fibers are interrupted with the scope.
    yield* Effect.addFinalizer(() => Effect.sync(() => void server.close()))
    const scheme = options.tls !== undefined ? "yeas" : "yea"
    return { host, port, url: `${scheme}://${host}:${port}` }
  })
