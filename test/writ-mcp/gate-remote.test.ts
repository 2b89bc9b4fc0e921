// `writ mcp-gate --listen` (docs/mcp-gate.md, "Serving remote clients"): the gate in this process,
// a plain SDK server behind it over in-memory transports, and the official SDK client over
// Streamable HTTP on loopback: keys ok, missing and wrong; the 401 and the protected resource
// metadata it points to; sessions (Mcp-Session-Id, 404 after termination); bad input and floods.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { connect } from "node:net"
import { startMcpGate } from "../../src/app/writ-mcp-gate.js"
import { bearerOk, isLoopback, keyHash, parseKeysFile, parseListen, type RemoteOptions } from "../../src/bind/mcp/remote.js"
import { root, serverKey } from "./support.js"

const KEY = "k-0123456789abcdef0123456789abcdef"

const keys = Effect.runSync(parseKeysFile(`# the one client\n${keyHash(KEY)}\n`))

const gate = (listen: Partial<RemoteOptions> = {}) =>
  Effect.gen(function*() {
    const plain = new McpServer({ name: "plain", version: "1" }, { capabilities: { tools: { listChanged: true } } })
    plain.registerTool("noop", { description: "does nothing" }, () => ({ content: [] }))
    const [upClient, upServer] = InMemoryTransport.createLinkedPair()
    yield* Effect.promise(() => plain.connect(upServer))
    const running = yield* startMcpGate({
      seed: serverKey.seed,
      roots: [root.did],
      client: { listen: { host: "127.0.0.1", port: 0, keys, ...listen } },
      upstream: upClient,
      connectTimeout: 30_000
    })
    return running.url!
  })

const client = (url: string, key?: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const transport = new StreamableHTTPClientTransport(new URL(url), key === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${key}` } } })
      const c = new Client({ name: "t", version: "1" })
      yield* Effect.tryPromise(() => c.connect(transport))
      return { c, transport }
    }),
    ({ c }) => Effect.promise(() => c.close().catch(() => undefined))
  )

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  Effect.promise(() => fetch(url, { method: "POST", body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }))

const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })

describe("mcp-gate --listen", () => {
  it("keys file, listen address, loopback, bearer check", () => {
    expect(Exit.isFailure(Effect.runSyncExit(parseKeysFile("not a hash\n")))).toBe(true)
    expect(Exit.isFailure(Effect.runSyncExit(parseKeysFile("# nothing\n")))).toBe(true)
    expect(Effect.runSync(parseListen("[::1]:8080"))).toEqual({ host: "::1", port: 8080 })
    expect(Exit.isFailure(Effect.runSyncExit(parseListen("127.0.0.1")))).toBe(true)
    expect(isLoopback("127.0.0.1") && isLoopback("::1") && isLoopback("localhost")).toBe(true)
    expect(isLoopback("0.0.0.0")).toBe(false)
    expect(bearerOk(`Bearer ${KEY}`, keys)).toBe(true)
    expect(bearerOk(`Bearer ${KEY}x`, keys)).toBe(false)
    expect(bearerOk(KEY, keys)).toBe(false)
    expect(bearerOk(undefined, keys)).toBe(false)
  })

  it.scoped("the SDK client with the key lists the tools in a session of its own", () =>
    Effect.gen(function*() {
      const url = yield* gate()
      const { c, transport } = yield* client(url, KEY)
      expect(typeof transport.sessionId).toBe("string")
      const tools = yield* Effect.promise(() => c.listTools())
      expect(tools.tools.map((t) => t.name)).toEqual(["noop"])
      const other = yield* client(url, KEY)
      expect(other.transport.sessionId).not.toBe(transport.sessionId)
      const sid = transport.sessionId!
      yield* Effect.promise(() => transport.terminateSession())
      const after = yield* post(url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), { authorization: `Bearer ${KEY}`, "mcp-session-id": sid })
      expect(after.status).toBe(404)
    }))

  it.scoped("no key or a wrong one: 401, and the resource metadata it points to", () =>
    Effect.gen(function*() {
      const url = yield* gate()
      const missing = yield* Effect.exit(client(url))
      expect(Exit.isFailure(missing)).toBe(true)
      const wrong = yield* Effect.exit(client(url, `${KEY}-not`))
      expect(Exit.isFailure(wrong)).toBe(true)
      const res = yield* post(url, initialize)
      expect(res.status).toBe(401)
      const challenge = res.headers.get("www-authenticate") ?? ""
      const m = /^Bearer resource_metadata="([^"]+)"$/.exec(challenge)
      expect(m).not.toBeNull()
      const meta = yield* Effect.promise(() => fetch(m![1]).then((r) => r.json() as Promise<{ resource: string; bearer_methods_supported: Array<string> }>))
      expect(meta.resource).toBe(url)
      expect(meta.bearer_methods_supported).toEqual(["header"])
    }))

  it.scoped("off loopback without keys the gate refuses to start (mandate/usage)", () =>
    Effect.gen(function*() {
      const plain = new McpServer({ name: "plain", version: "1" })
      const [upClient, upServer] = InMemoryTransport.createLinkedPair()
      yield* Effect.promise(() => plain.connect(upServer))
      // Refused before anything is bound: the address is never listened on.
      const started = yield* Effect.exit(startMcpGate({ seed: serverKey.seed, roots: [root.did], client: { listen: { host: "0.0.0.0", port: 0 } }, upstream: upClient }))
      expect(Exit.isFailure(started)).toBe(true)
      if (Exit.isFailure(started)) expect(JSON.stringify(started.cause)).toContain("mandate/usage")
    }))

  it.scoped("bad input: no session, unknown session, not JSON, a body past the cap, another path", () =>
    Effect.gen(function*() {
      const url = yield* gate({ maxBody: 4096 })
      const auth = { authorization: `Bearer ${KEY}` }
      expect((yield* post(url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), auth)).status).toBe(400)
      expect((yield* post(url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), { ...auth, "mcp-session-id": "nope" })).status).toBe(404)
      expect((yield* post(url, "{not json", auth)).status).toBe(400)
      expect((yield* post(url, JSON.stringify({ pad: "x".repeat(10_000) }), auth)).status).toBe(413)
      expect((yield* post(url.replace("/mcp", "/other"), initialize, auth)).status).toBe(404)
      // The listener still serves.
      const { c } = yield* client(url, KEY)
      expect((yield* Effect.promise(() => c.listTools())).tools).toHaveLength(1)
    }))

  it.scoped("a flood of connections from one peer: those past its share are refused at once", () =>
    Effect.gen(function*() {
      const url = yield* gate({ maxConnections: 16, maxConnectionsPerPeer: 4 })
      const port = Number(new URL(url).port)
      const answers = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), () =>
        Effect.async<string>((resume) => {
          const s = connect(port, "127.0.0.1")
          let got = ""
          s.on("data", (d) => (got += d.toString()))
          s.on("close", () => resume(Effect.succeed(got)))
          s.on("error", () => undefined)
          setTimeout(() => s.destroy(), 1500)
        }), { concurrency: "unbounded" })
      expect(answers.filter((a) => a.startsWith("HTTP/1.1 503")).length).toBeGreaterThanOrEqual(8)
      const { c } = yield* client(url, KEY)
      expect((yield* Effect.promise(() => c.listTools())).tools).toHaveLength(1)
    }))
})
