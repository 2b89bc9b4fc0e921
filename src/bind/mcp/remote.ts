// MCP served to remote clients over Streamable HTTP (MCP basic/transports, Streamable HTTP; MCP
// basic/authorization): the listener `writ mcp-gate --listen` and the others share. The SDK's
// `StreamableHTTPServerTransport` does the protocol, one per session (`Mcp-Session-Id`), each with
// its own server from `makeServer` and a bounded in-memory `EventStore`, so a client that lost its
// SSE stream resumes it with `Last-Event-ID`. The HTTP server is a scoped resource; its handlers
// run as fibers of a `FiberSet` owned by the scope, so closing the scope ends every session, every
// request in flight, then the listener.
//
// In front of the SDK, in this order, each before any of the body is read: connections per peer
// and in all (../peer-connections.ts: a peer over its share is refused at accept); on loopback the
// Host header (DNS rebinding: 421); the path (404); `/.well-known/oauth-protected-resource` (RFC
// 9728, which the MCP authorization spec points clients to) answered unauthenticated; then the
// bearer key: its SHA-256 compared in constant time with every hash of the keys file (no early
// exit), and a request without a good one is 401 with `WWW-Authenticate: Bearer
// resource_metadata="..."`; then the body, at most `maxBody` bytes (declared or streamed past it:
// 413); a body that is not JSON is 400; sessions past `maxSessions` are 503.
//
// A listener on an address other than loopback without keys is refused at start (`InsecureListen`):
// an open MCP endpoint on a network is never the default.
import { StreamableHTTPServerTransport, type EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Runtime, Schema } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { encodeBase64url } from "../../kernel/base64url.js"
import { RandomBytes } from "../../kernel/services.js"
import { capConnections, closeIdleKeepAlive, peerConnections, perPeerCap, refuseSocket } from "../peer-connections.js"
import type { Connectable } from "./serve.js"

/** Refused at start: a bind that is not loopback with no keys, or a `--listen` that is not HOST:PORT. */
export class InsecureListen extends Schema.TaggedError<InsecureListen>()("InsecureListen", {
  reason: Schema.Literal("no_auth_off_loopback", "bad_listen", "bad_keys"),
  message: Schema.String
}) {}

/** A keys file: one SHA-256 of a bearer key per line, 64 hex digits (`#` starts a comment). */
export const parseKeysFile = (text: string): Effect.Effect<ReadonlyArray<Uint8Array>, InsecureListen> =>
  Effect.gen(function*() {
    const out: Array<Uint8Array> = []
    for (const [i, raw] of text.split("\n").entries()) {
      const line = raw.replace(/#.*$/, "").trim()
      if (line === "") continue
      const hex = line.startsWith("sha256:") ? line.slice(7) : line
      if (!/^[0-9a-f]{64}$/i.test(hex)) return yield* Effect.fail(new InsecureListen({ reason: "bad_keys", message: `line ${i + 1} is not the SHA-256 of a key (64 hex digits)` }))
      out.push(Uint8Array.from(Buffer.from(hex, "hex")))
    }
    if (out.length === 0) return yield* Effect.fail(new InsecureListen({ reason: "bad_keys", message: "the keys file holds no key hash" }))
    return out
  })

/** The line of a keys file for `key`: its SHA-256 in hex. */
export const keyHash = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex")

/** `HOST:PORT` (`[v6]:PORT`) as a host and a port. */
export const parseListen = (s: string): Effect.Effect<{ readonly host: string; readonly port: number }, InsecureListen> => {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(s)
  const port = m === null ? NaN : Number(m[3])
  if (m === null || !(port >= 0 && port <= 65535)) return Effect.fail(new InsecureListen({ reason: "bad_listen", message: `not HOST:PORT: ${JSON.stringify(s)}` }))
  return Effect.succeed({ host: m[1] ?? m[2], port })
}

export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

export interface RemoteOptions {
  readonly host: string
  readonly port: number
  /** SHA-256 hashes of the accepted bearer keys; absent: no authentication (loopback only). */
  readonly keys?: ReadonlyArray<Uint8Array>
  /** The path of the MCP endpoint (default `/mcp`). */
  readonly path?: string
  /** The public URL of the endpoint, for the resource metadata (default the bound one). */
  readonly resource?: string
  readonly maxBody?: number
  readonly maxConnections?: number
  readonly maxConnectionsPerPeer?: number
  readonly maxSessions?: number
  /** Messages kept per session for resumption (default 1000). */
  readonly eventsPerSession?: number
}

export const REMOTE_MAX_BODY = 1024 * 1024
const WELL_KNOWN = "/.well-known/oauth-protected-resource"

/** A session's events, the oldest dropped past `max` (a resumption from before them replays nothing). */
export const boundedEventStore = (max: number, nextId: () => string): EventStore => {
  const events: Array<{ id: string; stream: string; message: JSONRPCMessage }> = []
  return {
    storeEvent: (stream, message) => {
      const id = nextId()
      events.push({ id, stream, message })
      if (events.length > max) events.shift()
      return Promise.resolve(id)
    },
    getStreamIdForEventId: (id) => Promise.resolve(events.find((e) => e.id === id)?.stream),
    replayEventsAfter: async (last, { send }) => {
      const at = events.findIndex((e) => e.id === last)
      if (at < 0) return ""
      const stream = events[at].stream
      for (const e of events.slice(at + 1)) if (e.stream === stream) await send(e.id, e.message)
      return stream
    }
  }
}

const refuse = (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
  if (res.headersSent) return void res.end()
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: text } }))
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
        req.resume()
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

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

/** Whether `authorization` is `Bearer <key>` for a key whose hash is in `keys`: every hash compared. */
export const bearerOk = (authorization: string | undefined, keys: ReadonlyArray<Uint8Array>): boolean => {
  const m = /^Bearer ([\x21-\x7e]+)$/.exec(authorization ?? "")
  const got = digest(m === null ? "" : m[1])
  let ok = false
  for (const k of keys) ok = timingSafeEqual(got, k) && m !== null ? true : ok
  return ok
}

export interface RemoteListener {
  readonly url: string
  readonly port: number
  /** Sessions open now. */
  readonly sessions: () => number
}

/** Serves `makeServer()` per session at `host:port` within the scope; returns the endpoint's URL. */
export const serveRemote = Effect.fn("mcp.remote.serve")(function*(options: RemoteOptions, makeServer: () => Connectable) {
  const keys = options.keys ?? []
  if (keys.length === 0 && !isLoopback(options.host)) {
    return yield* Effect.fail(new InsecureListen({
      reason: "no_auth_off_loopback",
      message: `refusing to listen on ${options.host} without authentication: give --keys FILE (SHA-256 of each bearer key), or listen on 127.0.0.1`
    }))
  }
  const max = options.maxBody ?? REMOTE_MAX_BODY
  const path = options.path ?? "/mcp"
  const maxSessions = options.maxSessions ?? 256
  const random = yield* RandomBytes
  const rt = yield* Effect.runtime<never>()
  const randomId = () => Runtime.runSync(rt)(Effect.map(random.bytes(16), encodeBase64url))
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Connectable }>()
  let port = 0
  let resource = ""
  let metadataUrl = ""
  const loopback = isLoopback(options.host)

  const handle = (req: IncomingMessage, res: ServerResponse) =>
    Effect.gen(function*() {
      const host = req.headers.host ?? ""
      if (loopback && !(host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}` || host === `${options.host}:${port}`)) {
        return refuse(res, 421, "misdirected request")
      }
      const url = new URL(req.url ?? "/", "http://x")
      if (url.pathname === WELL_KNOWN || url.pathname === `${WELL_KNOWN}${path}`) {
        if (req.method !== "GET") return refuse(res, 405, "GET only", { allow: "GET" })
        res.writeHead(200, { "content-type": "application/json" })
        return void res.end(JSON.stringify({ resource, bearer_methods_supported: ["header"], authorization_servers: [] }))
      }
      if (url.pathname !== path) return refuse(res, 404, "not found")
      if (keys.length > 0 && !bearerOk(req.headers.authorization, keys)) {
        return refuse(res, 401, "unauthorized: a bearer key is required", { "www-authenticate": `Bearer resource_metadata="${metadataUrl}"` })
      }
      const declared = Number(req.headers["content-length"] ?? "0")
      if (Number.isFinite(declared) && declared > max) return refuse(res, 413, `body over ${max} bytes`, { connection: "close" })
      let parsed: unknown = undefined
      if (req.method === "POST") {
        const body = yield* readBody(req, max)
        if (body === "too_large") return refuse(res, 413, `body over ${max} bytes`, { connection: "close" })
        try {
          parsed = JSON.parse(body.toString("utf8"))
        } catch {
          return refuse(res, 400, "parse error: the body is not JSON")
        }
      }
      const sid = req.headers["mcp-session-id"]
      let entry = typeof sid === "string" ? sessions.get(sid) : undefined
      if (entry === undefined) {
        // A session id the server does not know (ended, never issued) is 404, so the client starts a
        // new one; a request with no session id that is not an initialize is 400.
        if (typeof sid === "string") return refuse(res, 404, "no such session")
        if (req.method !== "POST" || !isInitializeRequest(parsed)) return refuse(res, 400, "bad request: no session id")
        if (sessions.size >= maxSessions) return refuse(res, 503, `${maxSessions} sessions open`, { "retry-after": "5" })
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomId,
          eventStore: boundedEventStore(options.eventsPerSession ?? 1000, randomId),
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
    }).pipe(Effect.catchAllCause(() => Effect.sync(() => refuse(res, 500, "internal error"))))

  const run = yield* FiberSet.makeRuntime<never>()
  const http = createServer((req, res) => void run(handle(req, res)))
  const maxConnections = options.maxConnections ?? 256
  http.maxConnections = maxConnections
  capConnections(http, peerConnections(maxConnections, perPeerCap(maxConnections, options.maxConnectionsPerPeer)), (socket, refusal) =>
    refuseSocket(socket, refusal.reason === "peer" ? "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n" : undefined))
  closeIdleKeepAlive(http, 30_000)
  yield* Effect.acquireRelease(
    Effect.async<void, InsecureListen>((resume) => {
      http.once("error", (e) => resume(Effect.fail(new InsecureListen({ reason: "bad_listen", message: `cannot listen on ${options.host}:${options.port}: ${e.message}` }))))
      http.listen(options.port, options.host, () => resume(Effect.void))
    }),
    () =>
      Effect.promise(async () => {
        for (const s of sessions.values()) await s.server.close().catch(() => undefined)
        http.closeAllConnections()
        await new Promise<void>((r) => http.close(() => r()))
      })
  )
  port = (http.address() as AddressInfo).port
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host
  const bound = `http://${shown}:${port}${path}`
  resource = options.resource ?? bound
  metadataUrl = `${new URL(resource).origin}${WELL_KNOWN}${new URL(resource).pathname}`
  const listener: RemoteListener = { url: bound, port, sessions: () => sessions.size }
  return listener
})
