// `writ mcp-proxy` in front of a Writ-aware server over Streamable HTTP that drops
// (src/bind/writ-mcp/proxy-upstream.ts). A real HTTP server (the SDK's server transport on
// node:http, an executor behind it) stopped while a call is in flight and started again on the same
// port: the call in flight is answered unreachable_server, recorded as unanswered and never sent
// again; a call while the server is down is unreachable_server; once it is back, the next call
// reconnects (initialize again, the advertisement learned again) and runs under a verified tally.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { mcpExecutor } from "../../src/app/writ-mcp.js"
import { runProxy } from "../../src/bind/writ-mcp/proxy.js"
import { Receipts } from "../../src/bind/writ-mcp/receipts.js"
import { callTool, capabilities, type McpTool, toolSet } from "../../src/bind/writ-mcp/server.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { sessionHttpServer } from "./http-upstream.js"
import { agent, anyTool, grant, root, serverKey } from "./support.js"

describe("mcp-proxy with an HTTP upstream that drops", () => {
  it.live("in flight: unreachable_server, recorded, never re-sent; down: unreachable_server; back: reconnected", () =>
    Effect.gen(function*() {
      const counts = { hang: 0, noop: 0 }
      const started = yield* Deferred.make<void>()
      const tools: Array<McpTool> = [
        { definition: { name: "noop", inputSchema: { type: "object" } }, run: () => Effect.sync(() => (counts.noop++, { st: "ok" as const, res: { done: true } })) },
        {
          definition: { name: "hang", inputSchema: { type: "object" } },
          run: () => Effect.zipRight(Effect.sync(() => (counts.hang++, Deferred.unsafeDone(started, Effect.void))), Effect.never)
        }
      ]
      const set = toolSet(tools)
      const executor = yield* mcpExecutor({ seed: serverKey.seed, roots: [root.did], tools: set })
      const { listen, stop } = sessionHttpServer(async (transport) => {
        const server = new Server({ name: "writ-http", version: "1" }, { capabilities: capabilities(executor.did) })
        server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((x) => x.definition) as never }))
        server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
          Effect.runPromise(callTool({ executor, tools: set, require: true }, request.params, extra)) as never)
        await server.connect(transport)
      })
      const port = yield* Effect.promise(() => listen(0))
      yield* Effect.addFinalizer(() => Effect.promise(() => stop()))
      const url = new URL(`http://127.0.0.1:${port}/mcp`)

      const receipts = yield* Receipts.memory
      const [clientSide, proxySide] = InMemoryTransport.createLinkedPair()
      yield* runProxy({
        client: proxySide,
        server: new StreamableHTTPClientTransport(url),
        reconnect: () => new StreamableHTTPClientTransport(url),
        grant: yield* grant({ act: anyTool })
      }).pipe(
        Effect.provide(Layer.mergeAll(Signer.fromSeed(agent.seed), RandomBytes.seeded(new Uint8Array(32).fill(9)), receipts.layer)),
        Effect.forkScoped
      )
      const client = new Client({ name: "test", version: "1" })
      yield* Effect.promise(() => client.connect(clientSide))
      const call = (name: string) =>
        Effect.tryPromise(() => client.callTool({ name, arguments: {} }, undefined, { timeout: 60_000 }).then((r) => r as unknown as JsonObject)).pipe(
          Effect.mapError((e) => String(e.error)),
          Effect.either
        )
      const ok = (r: { _tag: string }) => expect(r._tag).toBe("Right")

      ok(yield* call("noop"))
      const inFlight = yield* Effect.fork(call("hang"))
      yield* Deferred.await(started)
      yield* Effect.promise(() => stop())
      const dropped = yield* inFlight.await.pipe(Effect.flatten)
      expect(dropped._tag).toBe("Left")
      expect(String(dropped._tag === "Left" ? dropped.left : "")).toContain("not sent again")
      // Down: the reconnect fails, and the call says so; nothing was signed into a tally.
      const down = yield* call("noop")
      expect(down._tag === "Left" ? down.left : "").toContain("could not be reconnected")
      // Back on the same port: the next call reconnects and runs, its tally verified.
      yield* Effect.promise(() => listen(port))
      ok(yield* call("noop"))
      expect(counts).toEqual({ hang: 1, noop: 2 })
      const kept = yield* receipts.read
      expect(kept.map((r) => [r.tool, r.unanswered ?? (r.tally as JsonObject).st])).toEqual([["noop", "ok"], ["hang", "unreachable_server"], ["noop", "ok"]])
      yield* Effect.promise(() => client.close())
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
