// `writ mcp-gate --listen`: what the server behind the gate sends on its own reaches only the
// session it belongs to (src/bind/writ-mcp-gate/sessions.ts). Two SDK clients over Streamable HTTP
// on loopback, a plain server behind the gate (in memory) that, on every subscription, reports a
// change to B and then to the URI subscribed: a session gets the updates of its own subscriptions
// and never another's; an update to a URI no one subscribed to reaches no one; the server is
// unsubscribed only when the last session holding a URI lets it go. And the router on its own: a
// server's request goes to the one session with calls in flight, and is refused when it cannot be
// tied to one.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  ListResourcesRequestSchema, ListToolsRequestSchema, ResourceUpdatedNotificationSchema, SubscribeRequestSchema, UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Queue } from "effect"
import { startMcpGate } from "../../src/app/writ-mcp-gate.js"
import { keyHash, parseKeysFile } from "../../src/bind/mcp/remote.js"
import { type GateSession, gateSessions } from "../../src/bind/writ-mcp-gate/sessions.js"
import { BEARER, httpClient } from "../support/remote-mcp.js"
import { CLIENT_CAPABILITIES } from "../../src/bind/writ-mcp/rpc.js"
import { root, serverKey } from "./support.js"

const A = "file:///a.txt"
const B = "file:///b.txt"
const keys = Effect.runSync(parseKeysFile(`${keyHash(BEARER)}\n`))

const plain = (calls: Array<string>) => {
  const server = new Server({ name: "plain", version: "1" }, { capabilities: { tools: {}, resources: { subscribe: true } } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }))
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: A, name: "a" }, { uri: B, name: "b" }] }))
  server.setRequestHandler(SubscribeRequestSchema, async (r) => {
    calls.push(`subscribe ${r.params.uri}`)
    await server.notification({ method: "notifications/resources/updated", params: { uri: B } })
    await server.notification({ method: "notifications/resources/updated", params: { uri: r.params.uri } })
    return {}
  })
  server.setRequestHandler(UnsubscribeRequestSchema, (r) => {
    calls.push(`unsubscribe ${r.params.uri}`)
    return {}
  })
  return server
}

/** An SDK client over HTTP whose resources/updated notifications are queued, in arrival order. */
const watcher = (url: string) =>
  Effect.gen(function*() {
    const { client } = yield* httpClient(url, BEARER)
    const updates = yield* Queue.unbounded<string>()
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void Queue.unsafeOffer(updates, n.params.uri))
    return { client, updates }
  })

describe("mcp-gate --listen: the server's own messages reach the session they belong to", () => {
  it.scoped("resources/updated only to the sessions subscribed to its URI; unsubscribed when the last lets go", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const [upClient, upServer] = InMemoryTransport.createLinkedPair()
      yield* Effect.promise(() => plain(calls).connect(upServer))
      const gate = yield* startMcpGate({
        seed: serverKey.seed, roots: [root.did], upstream: upClient,
        client: { listen: { host: "127.0.0.1", port: 0, keys } },
        allow: ["resources/subscribe", "resources/unsubscribe"]
      })
      const one = yield* watcher(gate.url!)
      const two = yield* watcher(gate.url!)
      // One subscribes to A: the server reports B (no one's) then A; one gets A, and B was never
      // sent to it (its stream is ordered: B would have come first).
      yield* Effect.promise(() => one.client.subscribeResource({ uri: A }))
      expect(yield* Queue.take(one.updates)).toBe(A)
      // Two subscribes to B: two gets B twice; one gets nothing of it, which its next update shows.
      yield* Effect.promise(() => two.client.subscribeResource({ uri: B }))
      expect([yield* Queue.take(two.updates), yield* Queue.take(two.updates)]).toEqual([B, B])
      yield* Effect.promise(() => two.client.subscribeResource({ uri: A }))
      expect(yield* Queue.take(one.updates)).toBe(A)
      expect(yield* Queue.size(one.updates)).toBe(0)
      // Both hold A: one letting it go leaves the server subscribed; two letting it go ends it.
      yield* Effect.promise(() => one.client.unsubscribeResource({ uri: A }))
      expect(calls.filter((c) => c.startsWith("unsubscribe"))).toEqual([])
      yield* Effect.promise(() => two.client.unsubscribeResource({ uri: A }))
      expect(calls.filter((c) => c.startsWith("unsubscribe"))).toEqual([`unsubscribe ${A}`])
    }))

  it.scoped("a server's request: to the one session with calls in flight, or the only one; else refused", () =>
    Effect.gen(function*() {
      const [upClient, upServer] = InMemoryTransport.createLinkedPair()
      const server = new Server({ name: "asks", version: "1" }, { capabilities: {} })
      yield* Effect.promise(() => server.connect(upServer))
      const up = new Client({ name: "gate", version: "1" }, { capabilities: CLIENT_CAPABILITIES })
      const router = gateSessions(up)
      yield* Effect.acquireRelease(Effect.promise(() => up.connect(upClient)), () => Effect.promise(() => up.close()))
      const asked: Array<string> = []
      const fake = (name: string): GateSession => ({
        server: { request: () => Promise.resolve({ roots: [{ uri: `file:///${name}` }] }) } as never,
        ready: () => true,
        whenReady: () => Promise.resolve(),
        open: 0,
        subscriptions: new Set(),
        stale: () => undefined,
        relay: (send) => {
          asked.push(name)
          return send(1000)
        }
      })
      const roots = () => Effect.promise(() => server.listRoots().then((r) => r.roots.map((x) => x.uri), (e: unknown) => String(e)))
      expect(yield* roots()).toContain("cannot tell which of its 0 sessions")
      const a = fake("a")
      const removeA = router.add(a)
      expect(yield* roots()).toEqual(["file:///a"])
      const b = fake("b")
      router.add(b)
      expect(yield* roots()).toContain("cannot tell which of its 2 sessions this request is for (0 with calls in flight)")
      b.open = 1
      expect(yield* roots()).toEqual(["file:///b"])
      a.open = 1
      expect(yield* roots()).toContain("(2 with calls in flight)")
      yield* Effect.promise(removeA)
      expect(yield* roots()).toEqual(["file:///b"])
      expect(router.size()).toBe(1)
    }))
})
