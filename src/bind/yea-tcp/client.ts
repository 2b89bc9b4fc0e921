// Connecting to `yea://host[:port]` (TCP, 7447) and `yeas://host[:port]` (TLS, 7448) (SPEC §2.3).
// The connection is scoped: it is closed when the scope ends.
import { Effect, Scope } from "effect"
import * as net from "node:net"
import * as tls from "node:tls"
import type { YeaConnection } from "../../yea/client.js"
import { yeaError, type YeaError } from "../../yea/reason.js"
import { streamConnection, type StreamClientOptions } from "../yea-stream/client.js"
import { YEA_PORT, YEAS_PORT } from "./server.js"

export interface TcpConnectOptions extends StreamClientOptions {
  /** For `yeas://`: trust anchors (e.g. a self-signed certificate) and the name to check. */
  readonly tls?: tls.ConnectionOptions
  /** How long to wait for the connection (ms). Default 10000. */
  readonly connectTimeoutMs?: number
}

export const connectTcp = (url: URL, options: TcpConnectOptions = {}): Effect.Effect<YeaConnection, YeaError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<net.Socket, YeaError>((resume) => {
      const secure = url.protocol === "yeas:"
      const host = url.hostname.replace(/^\[|\]$/g, "")
      const port = url.port === "" ? (secure ? YEAS_PORT : YEA_PORT) : Number(url.port)
      const socket = secure
        ? tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined, ...options.tls })
        : net.connect({ host, port })
      const onError = (e: Error) => resume(Effect.fail(yeaError("unavailable", `cannot connect to ${url.href}: ${e.message}`)))
      socket.once("error", onError)
      socket.setTimeout(options.connectTimeoutMs ?? 10_000, () => socket.destroy(new Error("connect timeout")))
      socket.once(secure ? "secureConnect" : "connect", () => {
        socket.off("error", onError)
        socket.setTimeout(0)
        socket.on("error", () => undefined)
        resume(Effect.succeed(socket))
      })
      return Effect.sync(() => socket.destroy())
    }),
    (socket) => Effect.sync(() => socket.destroy())
  ).pipe(Effect.flatMap((socket) => streamConnection(socket, socket, () => socket.destroy(), options)))
