// MCP's lifecycle through the gate (basic/lifecycle, "Initialization"): the plain server is
// connected before the client, and what it sends before the client has initialized must not reach
// the client ahead of its initialize result. Its requests (here roots/list) wait for the client's
// `notifications/initialized` and are then answered; its notifications before it are dropped.
// In process: a plain SDK server and the gate over in-memory transports, the client a raw transport
// that records every message in order.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { startMcpGate } from "../../src/app/writ-mcp-gate.js"
import { root, serverKey } from "./support.js"

describe("mcp-gate and the client's initialization", () => {
  it.live("the server's roots/list waits for the client's initialized, and its list_changed before it is dropped", () =>
    Effect.gen(function*() {
      const plain = new McpServer({ name: "plain", version: "1" }, { capabilities: { tools: { listChanged: true } } })
      plain.registerTool("noop", { description: "does nothing" }, () => ({ content: [] }))
      const [upClient, upServer] = InMemoryTransport.createLinkedPair()
      yield* Effect.promise(() => plain.connect(upServer))
      const [clientSide, gateSide] = InMemoryTransport.createLinkedPair()
      yield* startMcpGate({ seed: serverKey.seed, roots: [root.did], client: gateSide, upstream: upClient, connectTimeout: 30_000 })

      const received: Array<JSONRPCMessage> = []
      const answered = yield* Deferred.make<void>()
      const asked = yield* Deferred.make<JSONRPCMessage>()
      clientSide.onmessage = (m) => {
        received.push(m)
        if ("id" in m && m.id === 1 && !("method" in m)) Deferred.unsafeDone(answered, Effect.void)
        if ("method" in m && m.method === "roots/list") Deferred.unsafeDone(asked, Effect.succeed(m))
      }
      yield* Effect.promise(() => clientSide.start())

      // The plain server speaks first, before the client has said anything.
      yield* Effect.promise(() => plain.server.sendToolListChanged())
      const roots = Effect.runPromise(Effect.promise(() => plain.server.listRoots(undefined, { timeout: 60_000 })))
      // Lets what the gate relays arrive now, if it relays it early (nothing below waits on time).
      yield* Effect.sleep("50 millis")

      yield* Effect.promise(() => clientSide.send({
        jsonrpc: "2.0", id: 1, method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: { roots: {} }, clientInfo: { name: "raw", version: "1" } }
      }))
      yield* Deferred.await(answered).pipe(Effect.timeout("30 seconds"))
      // The initialize result is the first thing the client got.
      expect(received.map((m) => ("method" in m ? m.method : `answer ${String((m as { id: unknown }).id)}`))).toEqual(["answer 1"])

      yield* Effect.promise(() => clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" }))
      const request = yield* Deferred.await(asked).pipe(Effect.timeout("30 seconds"))
      yield* Effect.promise(() => clientSide.send({ jsonrpc: "2.0", id: (request as { id: number }).id, result: { roots: [{ uri: "file:///srv", name: "srv" }] } }))
      expect(yield* Effect.promise(() => roots)).toEqual({ roots: [{ uri: "file:///srv", name: "srv" }] })
      // The list_changed sent before initialization never reached the client.
      expect(received.filter((m) => "method" in m && m.method === "notifications/tools/list_changed")).toEqual([])
      yield* Effect.promise(() => clientSide.close())
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
