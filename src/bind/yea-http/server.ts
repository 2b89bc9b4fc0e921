// The HTTP bridge (SPEC §2.4): `POST <endpoint>` (or `POST /`) with one request frame answers `200`
// `application/x-ndjson` (EVENTs, then one final reply); `GET <endpoint>` and `GET /.well-known/yea`
// answer the BRIEF to a default HELLO. YEA errors are 200s; HTTP statuses are only for HTTP's own
// failures: 413 for a body over 1 MiB (refused from Content-Length, or as soon as the streamed body
// passes it, never buffered whole), 405 for other methods. A malformed or aborted request never
// takes the process down; slow requests are cut by the server's timeouts, idle connections and
// clients that stop reading by the idle timeout and the unsent-bytes cap; connections are capped,
// in all and per peer (../peer-connections.ts), so one client's idle sockets cannot lock others out.
import { Effect, Either, FiberSet, Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { MAX_FRAME_BYTES } from "../../yea/frame.js"
import { errorBody, envelope } from "../../yea/frame.js"
import { encodeLine, parseFrame } from "../../yea/ndjson.js"
import { yeaError, type YeaError } from "../../yea/reason.js"
import type { YeaServiceRuntime } from "../../yea/service/runtime.js"
import { capConnections, closeIdleKeepAlive, peerConnections, perPeerCap, refuseSocket } from "../peer-connections.js"

export interface HttpBridgeOptions {
  readonly host?: string
  /** 0 picks a free port. Default 8080. */
  readonly port?: number
  /** Where frames are POSTed. Default "/yea". */
  readonly endpoint?: string
  /** Open connections at once; past it a connection gets one `503` and is closed. Default 256. */
  readonly maxConnections?: number
  /** Open connections of one peer (remote address; IPv6: its /64), kept below `maxConnections`;
   * past it a connection gets one `429` whose body is an ERROR `limit` line, and is closed.
   * Default a quarter of `maxConnections` (64). */
  readonly maxConnectionsPerPeer?: number
  /** Whole-request time limit (ms). Default 30000. */
  readonly requestTimeoutMs?: number
  /** Close a connection with no traffic either way for this long (ms): a client that stopped
   * reading its replies; and a kept-alive connection that sends no complete request this long
   * after its previous reply (blank lines and partial bytes do not count). Default 120000. */
  readonly idleMs?: number
  /** Close a connection whose unsent reply data passes this (bytes). Default 8 MiB. */
  readonly maxBufferedBytes?: number
  /** Close a connection with more than this many requests awaiting their replies. Default 32. */
  readonly maxPipelined?: number
}

export interface HttpListening {
  readonly port: number
  readonly url: string
}

export const serveHttpBridge = (runtime: YeaServiceRuntime, options: HttpBridgeOptions = {}): Effect.Effect<HttpListening, YeaError, Scope.Scope> =>
  Effect.gen(function* () {
    const run = yield* FiberSet.makeRuntime<never>()
    const endpoint = options.endpoint ?? "/yea"
    const maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024
    const maxPipelined = options.maxPipelined ?? 32
    // Requests on one connection whose replies are not yet sent: HTTP/1.1 pipelining queues every
    // reply in memory behind the first, so a client that sends and never reads is cut off here.
    const unsent = new WeakMap<object, number>()
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
      req.on("error", () => res.destroy())
      res.on("error", () => undefined)
      const socket = req.socket
      const queued = (unsent.get(socket) ?? 0) + 1
      unsent.set(socket, queued)
      res.once("close", () => {
        unsent.set(socket, (unsent.get(socket) ?? 1) - 1)
        if (socket.writableLength > maxBuffered) socket.destroy()
      })
      if (queued > maxPipelined) {
        socket.destroy()
        return
      }
      const path = (req.url ?? "/").split("?")[0]
      if (req.method === "GET" && (path === endpoint || path === "/.well-known/yea" || path === "/")) {
        run(Effect.flatMap(runtime.brief, (b) => Effect.sync(() => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(b)))))
        return
      }
      // `/` takes frames as well as the endpoint, as it already answers GET with the BRIEF: a
      // bridge URL given as `http://host:port/` works for POST too.
      if (req.method !== "POST" || (path !== endpoint && path !== "/")) {
        res.writeHead(req.method === "POST" || req.method === "GET" ? 404 : 405).end()
        return
      }
      const declared = Number(req.headers["content-length"] ?? "0")
      if (declared > MAX_FRAME_BYTES) {
        res.writeHead(413, { connection: "close" }).end()
        req.destroy()
        return
      }
      const parts: Array<Buffer> = []
      let size = 0
      let refused = false
      req.on("data", (chunk: Buffer) => {
        if (refused) return
        size += chunk.length
        if (size > MAX_FRAME_BYTES) {
          refused = true
          parts.length = 0
          res.writeHead(413, { connection: "close" }).end()
          req.destroy()
          return
        }
        parts.push(chunk)
      })
      req.on("end", () => {
        if (refused) return
        res.writeHead(200, { "content-type": "application/x-ndjson" })
        const parsed = parseFrame(Buffer.concat(parts))
        // A peer that does not read its replies is cut off once they pile up (§2.3 bounds).
        const write = (frame: unknown) =>
          Effect.sync(() => {
            if (res.writableEnded || res.destroyed) return
            res.write(encodeLine(frame))
            if (res.writableLength > maxBuffered) res.destroy()
          })
        const answer = Either.isLeft(parsed) ? runtime.refuse(parsed.left) : runtime.handle(parsed.right, write)
        run(Effect.flatMap(answer, (final) => Effect.sync(() => void (res.destroyed ? undefined : res.end(encodeLine(final))))))
      })
    }
    const server = http.createServer({
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      headersTimeout: 10_000,
      // Node checks the header and request timeouts this often (its default, 30 s, let an idle
      // socket that never sent a request hold its slot three times the header timeout).
      connectionsCheckingInterval: 1000
    }, onRequest)
    // Connections past the cap, or past their peer's share, are refused cleanly before a byte is
    // read: a status naming why, then closed (rather than the silent drop of
    // `server.maxConnections`), so a client can tell busy from broken.
    const max = Math.max(1, Math.floor(options.maxConnections ?? 256))
    capConnections(server, peerConnections(max, perPeerCap(max, options.maxConnectionsPerPeer)), (socket, refusal) => {
      if (refusal.reason === "full") {
        return refuseSocket(socket, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n")
      }
      const body = Buffer.from(encodeLine(envelope("s_busy", "", errorBody(yeaError("limit", `this peer holds its ${refusal.cap} connections; close one or try again later`, { retry: 1 })))))
      const head = `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: ${body.length}\r\n\r\n`
      refuseSocket(socket, Buffer.concat([Buffer.from(head, "latin1"), body]))
    })
    server.setTimeout(options.idleMs ?? 120_000, (socket) => socket.destroy())
    closeIdleKeepAlive(server, options.idleMs ?? 120_000)
    server.on("clientError", (_e, socket) => socket.destroy())
    const host = options.host ?? "127.0.0.1"
    const port = yield* Effect.async<number, YeaError>((resume) => {
      server.once("error", (e) => resume(Effect.fail(yeaError("unavailable", `cannot listen: ${e.message}`))))
      server.listen(options.port ?? 8080, host, () => resume(Effect.succeed((server.address() as AddressInfo).port)))
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      server.close()
      server.closeAllConnections()
    }))
    return { port, url: `http://${host}:${port}${endpoint}` }
  })
