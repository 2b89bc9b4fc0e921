// The proxy's own requester (src/bind/writ-mcp/rpc.ts `rawPeer`, behind `--print-pins`) on an
// in-memory transport: answers routed by id (`1` and `"1"` are different ids), a server that
// closes with a request open fails it at once rather than at its timeout, and a request made
// after the close fails too.
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, Fiber } from "effect"
import { rawPeer } from "../../src/bind/writ-mcp/rpc.js"

type Msg = Record<string, unknown>

/** A scripted server end: `seen` collects the requests, `answer` sends a message back. */
const scripted = () => {
  const [client, server] = InMemoryTransport.createLinkedPair()
  const seen: Array<Msg> = []
  server.onmessage = (m) => void seen.push(m as unknown as Msg)
  const answer = (m: Msg) => Effect.promise(() => server.send(m as unknown as JSONRPCMessage))
  const waitFor = (n: number) =>
    Effect.gen(function*() {
      while (seen.filter((m) => m.id !== undefined).length < n) yield* Effect.sleep("1 millis")
      return seen.filter((m) => m.id !== undefined)[n - 1]
    })
  return { client, server, answer, waitFor }
}

const initialized = (s: ReturnType<typeof scripted>) =>
  Effect.gen(function*() {
    const peer = yield* Effect.fork(rawPeer(s.client, "1 hour"))
    yield* Effect.promise(() => s.server.start())
    const init = yield* s.waitFor(1)
    // An answer under the string id "1" is not the answer to request 1.
    yield* s.answer({ jsonrpc: "2.0", id: String(init.id), result: { wrong: true } })
    yield* s.answer({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: "x", capabilities: {} } })
    return yield* Fiber.join(peer)
  })

describe("rawPeer", () => {
  it.scopedLive("routes answers by id, whatever their order", () =>
    Effect.gen(function*() {
      const s = scripted()
      const peer = yield* initialized(s)
      expect(peer.initialize).toEqual({ protocolVersion: "x", capabilities: {} })
      const a = yield* Effect.fork(peer.request("tools/list", {}))
      const ra = yield* s.waitFor(2)
      const b = yield* Effect.fork(peer.request("tools/list", { cursor: "c" }))
      const rb = yield* s.waitFor(3)
      yield* s.answer({ jsonrpc: "2.0", id: rb.id, result: { page: 2 } })
      yield* s.answer({ jsonrpc: "2.0", id: ra.id, result: { page: 1 } })
      expect(yield* Fiber.join(a)).toEqual({ page: 1 })
      expect(yield* Fiber.join(b)).toEqual({ page: 2 })
    }))

  it.scopedLive("a server that closes fails the open request at once, and every later one", () =>
    Effect.gen(function*() {
      const s = scripted()
      const peer = yield* initialized(s)
      const open = yield* Effect.fork(Effect.either(peer.request("tools/list", {})))
      yield* s.waitFor(2)
      yield* Effect.promise(() => s.server.close())
      const r = yield* Fiber.join(open)
      expect(Either.isLeft(r) && r.left.message).toBe("the server exited")
      const later = yield* Effect.either(peer.request("tools/list", {}))
      expect(Either.isLeft(later) && later.left.message).toBe("the server exited")
    }))
})
