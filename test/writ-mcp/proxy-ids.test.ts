// Id remapping (docs/bindings.md, "Both directions at once"): the client's ids are its own; the
// server sees only ids the proxy allocates, so `1` and `"1"` from the client, and an id the proxy
// also uses for itself, each reach only the request they name. Driven by a raw JSON-RPC client
// over an in-memory transport, so the ids are chosen by the test.
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { runProxy } from "../../src/bind/writ-mcp/proxy.js"
import { Receipts } from "../../src/bind/writ-mcp/receipts.js"
import { pinsOf } from "../../src/bind/writ-mcp/policy.js"
import { listAllTools, rawPeer } from "../../src/bind/writ-mcp/rpc.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { agent, anyTool, fixtureServer, grant } from "./support.js"

describe("mcp-proxy: ids", () => {
  it.live("1 and \"1\" are different requests; each answer reaches the request it answers", () =>
    Effect.gen(function*() {
      const tools = yield* Effect.scoped(Effect.flatMap(rawPeer(fixtureServer()), (p) => listAllTools(p.request)))
      const [client, proxySide] = InMemoryTransport.createLinkedPair()
      const answers = new Map<string, JsonObject>()
      const all = yield* Deferred.make<void>()
      client.onmessage = (m: JSONRPCMessage) => {
        const msg = m as unknown as JsonObject
        if (msg.id !== undefined && msg.method === undefined) answers.set(JSON.stringify(msg.id), msg)
        if (answers.size === 5) Deferred.unsafeDone(all, Effect.void)
      }
      // With pins, the proxy lists tools for itself (under ids of its own) before the first call.
      const proxy = yield* runProxy({ client: proxySide, server: fixtureServer(), grant: yield* grant({ act: anyTool, uses: { t: "count", v: 5 } }), pins: pinsOf(tools) }).pipe(
        Effect.scoped,
        Effect.provide(Layer.mergeAll(Signer.fromSeed(agent.seed), RandomBytes.seeded(new Uint8Array(32).fill(5)), Receipts.none)),
        Effect.fork
      )
      yield* Effect.promise(() => client.start())
      const send = (m: object) => Effect.promise(() => client.send(m as JSONRPCMessage))
      yield* send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
      yield* send({ jsonrpc: "2.0", method: "notifications/initialized" })
      yield* send({ jsonrpc: "2.0", id: "1", method: "tools/call", params: { name: "echo", arguments: { text: "string id" } } })
      yield* send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "number id" } } })
      yield* send({ jsonrpc: "2.0", id: "2", method: "ping" })
      // A tool call that names no tool has no pin: refused before anything is signed.
      yield* send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: {} })
      yield* Deferred.await(all).pipe(Effect.timeout("90 seconds"))
      expect((answers.get("1")!.result as JsonObject).protocolVersion).toBe("2025-11-25")
      expect((answers.get("\"1\"")!.result as JsonObject).structuredContent).toEqual({ text: "string id" })
      expect((answers.get("2")!.result as JsonObject).structuredContent).toEqual({ text: "number id" })
      expect(answers.get("\"2\"")!.result).toEqual({})
      expect(((answers.get("3")!.error as JsonObject).data as JsonObject).reason).toBe("unpinned_tool")
      yield* Effect.promise(() => client.close())
      yield* Fiber.join(proxy).pipe(Effect.timeout("60 seconds"))
    }), { timeout: 180_000 })
})
