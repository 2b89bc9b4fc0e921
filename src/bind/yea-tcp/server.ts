// `yea://` (TCP, default port 7447) and `yeas://` (TLS, 7448) servers (SPEC §2.3). Each accepted
// socket is served by yea-stream/serve.ts in a fiber owned by the server's scope. Connections past
// `maxConnections`, and connections of a peer past its share `maxConnectionsPerPeer` (always below
// `maxConnections`, so one peer alone cannot lock others out: ../peer-connections.ts), are refused
// cleanly: they get one ERROR `limit` line and are closed, so the client learns why instead of
// seeing a reset.
import { Effect, FiberSet, Scope } from "effect"
import * as net from "node:net"
import * as tls from "node:tls"
import { encodeLine } from "../../yea/ndjson.js"
import { yeaError, type YeaError } from "../../yea/reason.js"
import type { YeaServiceRuntime } from "../../yea/service/runtime.js"
import { errorBody, envelope } from "../../yea/frame.js"
import { peerConnections, perPeerCap, refuseSocket } from "../peer-connections.js"
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
    // Counted once the socket is ours to read (over TLS: after the handshake), so the refusal is
    // a line the client can read.
    const onSocket = (socket: net.Socket) => {
      socket.on("error", () => socket.destroy())
      const admission = connections.admit(socket.remoteAddress)
      if (admission._tag === "refused") {
        const message = admission.reason === "full"
          ? `this service is at its ${admission.cap} connections; try again later`
          : `this peer holds its ${admission.cap} connections; close one or try again later`
        refuseSocket(socket, encodeLine(envelope("s_busy", "", errorBody(yeaError("limit", message, { retry: 1 })))))
        return
      }
      run(Effect.ensuring(serveSocket(runtime, socket, options), Effect.sync(admission.release)))
    }
    const server: net.Server = options.tls !== undefined ? tls.createServer(options.tls, onSocket) : net.createServer(onSocket)
    if (options.tls !== undefined) server.on("tlsClientError", (_e, socket) => socket.destroy())
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
