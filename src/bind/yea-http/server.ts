// The HTTP bridge (SPEC §2.4): `POST <endpoint>` with one request frame answers `200`
// `application/x-ndjson` (EVENTs, then one final reply); `GET <endpoint>` and `GET /.well-known/yea`
// answer the BRIEF to a default HELLO. YEA errors are 200s; HTTP statuses are only for HTTP's own
// failures: 413 for a body over 1 MiB (refused from Content-Length, or as soon as the streamed body
// passes it, never buffered whole), 405 for other methods. A malformed or aborted request never
// takes the process down; slow requests are cut by the server's timeouts; connections are capped.
import { Effect, Either, FiberSet, Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { MAX_FRAME_BYTES } from "../../yea/frame.js"
import { encodeLine, parseFrame } from "../../yea/ndjson.js"
import { yeaError, type YeaError } from "../../yea/reason.js"
import type { YeaServiceRuntime } from "../../yea/service/runtime.js"

export interface HttpBridgeOptions {
  readonly host?: string
  /** 0 picks a free port. Default 8080. */
  readonly port?: number
  /** Where frames are POSTed. Default "/yea". */
  readonly endpoint?: string
  readonly maxConnections?: number
  /** Whole-request time limit (ms). Default 30000. */
  readonly requestTimeoutMs?: number
}

export interface HttpListening {
  readonly port: number
  readonly url: string
}

export const serveHttpBridge = (runtime: YeaServiceRuntime, options: HttpBridgeOptions = {}): Effect.Effect<HttpListening, YeaError, Scope.Scope> =>
  Effect.gen(function* () {
    const run = yield* FiberSet.makeRuntime<never>()
    const endpoint = options.endpoint ?? "/yea"
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
      req.on("error", () => res.destroy())
      res.on("error", () => undefined)
      const path = (req.url ?? "/").split("?")[0]
      if (req.method === "GET" && (path === endpoint || path === "/.well-known/yea" || path === "/")) {
        run(Effect.flatMap(runtime.brief, (b) => Effect.sync(() => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(b)))))
        return
      }
      if (req.method !== "POST" || path !== endpoint) {
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
        const write = (frame: unknown) => Effect.sync(() => void (res.writableEnded || res.destroyed ? undefined : res.write(encodeLine(frame))))
        const answer = Either.isLeft(parsed) ? runtime.refuse(parsed.left) : runtime.handle(parsed.right, write)
        run(Effect.flatMap(answer, (final) => Effect.sync(() => void (res.destroyed ? undefined : res.end(encodeLine(final))))))
      })
    }
    const server = http.createServer({ requestTimeout: options.requestTimeoutMs ?? 30_000, headersTimeout: 10_000 }, onRequest)
    server.maxConnections = options.maxConnections ?? 256
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
