// The two transports of an MCP job server (SPEC-mcp-ts "Package", `./http`): stdio, and a
// Streamable HTTP front end for one person on loopback. The HTTP server is a scoped resource whose
// request handlers run as fibers of a `FiberSet` owned by the scope, so closing the scope stops
// every request in flight and then the listener.
//
// The front end's checks, in order, before any of the body is read: the Host header on loopback
// (DNS rebinding: 421), then `Authorization: Bearer <token>` compared in constant time (401); then
// the body, at most `maxBody` bytes (declared or streamed past it: 413), parsed and handed to the
// SDK's `StreamableHTTPServerTransport` (stateful: one server and transport per session, so the
// SDK can send `elicitation/create` to the client during a call). The caller's `sub` is the
// configured person's, carried in `authInfo.extra.sub`.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Runtime } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { timingSafeEqual, createHash } from "node:crypto"
import type { AddressInfo } from "node:net"
import { encodeBase64url } from "../../kernel/base64url.js"
import { RandomBytes } from "../../kernel/services.js"
import type { Extra } from "./context.js"
import { BoundedStdioTransport } from "./stdio.js"

/** What serving needs of a server: the SDK's `McpServer` and its low-level `Server` both have it. */
export interface Connectable {
  readonly connect: McpServer["connect"]
  readonly close: () => Promise<void>
}

/** Serves one server on stdin/stdout until the client closes it, on the bounded transport (stdio.ts). */
export const serveStdio = (server: Connectable) =>
  Effect.acquireUseRelease(
    Effect.sync(() => new BoundedStdioTransport(process.stdin, process.stdout, { onDiscard: (why) => void process.stderr.write(`yea: ${why}; the session goes on\n`) })),
    (transport) =>
      Effect.async<void>((resume) => {
        transport.onclose = () => resume(Effect.void)
        process.stdin.on("end", () => resume(Effect.void))
        server.connect(transport).catch(() => resume(Effect.void))
      }),
    () => Effect.promise(() => server.close())
  )

/** The default body cap: 1 MiB, the same as a YEA frame. */
export const MAX_BODY = 1024 * 1024

export interface HttpOptions {
  readonly port: number
  /** The bearer token, 32 characters or more. */
  readonly token: string
  /** The one person this server serves (SPEC-mcp-ts "HTTP serves one person in v0"). */
  readonly sub: string
  readonly maxBody?: number
}

/** `sub` for `makeApprovals({ sub })` on this front end: the verified request's, else '' (refused). */
export const subOf = (extra: Extra): string => {
  const s = (extra.authInfo?.extra as { sub?: unknown } | undefined)?.sub
  return typeof s === "string" ? s : ""
}

const digest = (s: string) => createHash("sha256").update(s).digest()

const refuse = (res: ServerResponse, status: number, text: string) => {
  res.writeHead(status, { "content-type": "text/plain", connection: "close" })
  res.end(text)
}

const readBody = (req: IncomingMessage, max: number) =>
  Effect.async<Buffer | "too_large", Error>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    req.on("data", (c: Buffer) => {
      if (done) return
      size += c.length
      if (size > max) {
        done = true
        req.pause()
        resume(Effect.succeed("too_large"))
        return
      }
      chunks.push(c)
    })
    req.on("end", () => {
      if (!done) resume(Effect.succeed(Buffer.concat(chunks)))
    })
    req.on("error", (e) => {
      if (!done) resume(Effect.fail(e))
    })
  })

/** Serves a fresh server per session on 127.0.0.1; returns the URL. Closed with the scope. */
export const serveHttp = Effect.fn("yea.mcp.http")(function* (options: HttpOptions, makeServer: () => Connectable) {
  if (options.token.length < 32) return yield* Effect.die(new Error("the HTTP token has at least 32 characters"))
  const max = options.maxBody ?? MAX_BODY
  const random = yield* RandomBytes
  const rt = yield* Effect.runtime<never>()
  const sessionId = () => Runtime.runSync(rt)(Effect.map(random.bytes(16), encodeBase64url))
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Connectable }>()
  const want = digest(`Bearer ${options.token}`)
  let port = 0

  const handle = (req: IncomingMessage, res: ServerResponse) =>
    Effect.gen(function* () {
      const host = req.headers.host ?? ""
      if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return refuse(res, 421, "misdirected request")
      if (!timingSafeEqual(digest(req.headers.authorization ?? ""), want)) return refuse(res, 401, "unauthorized")
      const declared = Number(req.headers["content-length"] ?? "0")
      if (Number.isFinite(declared) && declared > max) return refuse(res, 413, `body over ${max} bytes`)
      let parsed: unknown = undefined
      if (req.method === "POST") {
        const body = yield* readBody(req, max)
        if (body === "too_large") return refuse(res, 413, `body over ${max} bytes`)
        try {
          parsed = JSON.parse(body.toString("utf8"))
        } catch {
          return refuse(res, 400, "the body is not JSON")
        }
      }
      ;(req as IncomingMessage & { auth?: unknown }).auth = { token: "", clientId: "yea-http", scopes: [], extra: { sub: options.sub } }
      const sid = req.headers["mcp-session-id"]
      let entry = typeof sid === "string" ? sessions.get(sid) : undefined
      if (entry === undefined) {
        // MCP Streamable HTTP, session management: a session id the server does not know (ended or
        // never issued) is 404, so the client starts a new session; a request with no session id
        // that is not an initialize is 400.
        if (typeof sid === "string") return refuse(res, 404, "no such session")
        if (req.method !== "POST" || !isInitializeRequest(parsed)) return refuse(res, 400, "no session id")
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: sessionId,
          onsessioninitialized: (id) => {
            sessions.set(id, { transport, server })
          }
        })
        transport.onclose = () => {
          if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
        }
        const server = makeServer()
        yield* Effect.promise(() => server.connect(transport))
        entry = { transport, server }
      }
      const t = entry.transport
      yield* Effect.promise(() => t.handleRequest(req as never, res, parsed))
    }).pipe(Effect.catchAllCause(() => Effect.sync(() => (res.headersSent ? res.end() : refuse(res, 500, "internal error")))))

  const run = yield* FiberSet.makeRuntime<never>()
  const http = createServer((req, res) => void run(handle(req, res)))
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => {
      http.listen(0 === options.port ? 0 : options.port, "127.0.0.1", () => resume(Effect.void))
    }),
    () =>
      Effect.promise(async () => {
        for (const s of sessions.values()) await s.server.close().catch(() => undefined)
        http.closeAllConnections()
        await new Promise<void>((r) => http.close(() => r()))
      })
  )
  port = (http.address() as AddressInfo).port
  return { url: `http://127.0.0.1:${port}/mcp`, port }
})
