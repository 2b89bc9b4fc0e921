// `writ mcp-proxy`: the grant bounds every listing and every notification (src/bind/writ-mcp/scope.ts;
// docs/mcp-gate.md, "Which methods a grant governs"). The SDK client -> the proxy (in this process)
// -> a plain SDK server over in-memory transports that lists two of everything and, when a URI is
// subscribed, reports changes to one outside the grant first: tools, resources and prompts outside
// the grant are never listed, `resources/subscribe` outside it is refused and never reaches the
// server, its updates are not relayed, and a completion for a prompt outside it is refused.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CompleteRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema, ReadResourceRequestSchema, ResourceUpdatedNotificationSchema, SubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import type { Json } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { runProxy } from "../../src/bind/writ-mcp/proxy.js"
import { Receipts } from "../../src/bind/writ-mcp/receipts.js"
import { outsideGrant, visibleUnder } from "../../src/bind/writ-mcp/scope.js"
import { agent, grant } from "./support.js"

const A = "file:///granted.txt"
const B = "file:///secret.txt"

/** The plain server: two tools, resources, templates and prompts; it records subscriptions, and
 * on each reports a change to B, then one to the URI subscribed. */
const plainServer = (subscribed: Array<string>) => {
  const server = new Server({ name: "two-of-each", version: "1" }, {
    capabilities: { tools: {}, resources: { subscribe: true, listChanged: true }, prompts: {}, completions: {} }
  })
  const schema = { type: "object" as const, properties: {} }
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "seen", inputSchema: schema }, { name: "hidden", inputSchema: schema }] }))
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: A, name: "granted" }, { uri: B, name: "secret" }] }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [{ uriTemplate: "file:///{path}", name: "files" }] }))
  server.setRequestHandler(ReadResourceRequestSchema, () => ({ contents: [] }))
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: "p1" }, { name: "p2" }] }))
  server.setRequestHandler(GetPromptRequestSchema, () => ({ messages: [] }))
  server.setRequestHandler(CompleteRequestSchema, () => ({ completion: { values: ["done"] } }))
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscribed.push(request.params.uri)
    await server.notification({ method: "notifications/resources/updated", params: { uri: B } })
    await server.notification({ method: "notifications/resources/updated", params: { uri: request.params.uri } })
    return {}
  })
  return server
}

/** The SDK client through the proxy under `chain`, with `--allow` for subscribe and completion. */
const through = (chain: ReadonlyArray<Json>) =>
  Effect.gen(function*() {
    const subscribed: Array<string> = []
    const [upClient, upServer] = InMemoryTransport.createLinkedPair()
    yield* Effect.promise(() => plainServer(subscribed).connect(upServer))
    const [clientSide, proxySide] = InMemoryTransport.createLinkedPair()
    yield* runProxy({ client: proxySide, server: upClient, grant: chain, allow: ["resources/subscribe", "completion/complete"] }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(Signer.fromSeed(agent.seed), RandomBytes.seeded(new Uint8Array(32).fill(3)), Receipts.none)),
      Effect.forkScoped
    )
    const client = new Client({ name: "scope-test", version: "1" })
    const updates: Array<string> = []
    const updatedA = yield* Deferred.make<void>()
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri)
      if (n.params.uri === A) Deferred.unsafeDone(updatedA, Effect.void)
    })
    yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientSide)), () => Effect.promise(() => client.close()))
    return { client, subscribed, updates, updatedA }
  })

const failure = (p: () => Promise<unknown>) => Effect.promise(() => p().then(() => "passed", (e: unknown) => String(e)))

describe("mcp-proxy: the grant bounds every listing and notification", () => {
  it.scoped("a grant to read one URI: only it listed, subscribed and reported; no tools, no prompts", () =>
    Effect.gen(function*() {
      const s = yield* through(yield* grant({ act: { t: "prefix", v: "mcp/resources/read" }, uri: { t: "set", v: [A] } }))
      expect((yield* Effect.promise(() => s.client.listResources())).resources.map((r) => r.uri)).toEqual([A])
      expect((yield* Effect.promise(() => s.client.listResourceTemplates())).resourceTemplates).toHaveLength(1)
      expect((yield* Effect.promise(() => s.client.listTools())).tools).toEqual([])
      expect(s.client.getServerCapabilities()?.prompts).toBeUndefined()
      // Outside the grant: refused, and the server never hears of it.
      expect(yield* failure(() => s.client.subscribeResource({ uri: B }))).toContain("method_refused")
      expect(s.subscribed).toEqual([])
      // Inside: subscribed; the server then reports B and A, and only A reaches the client (the
      // proxy relays in order, so B, sent first, would have arrived first).
      yield* Effect.promise(() => s.client.subscribeResource({ uri: A }))
      yield* Deferred.await(s.updatedA)
      expect(s.subscribed).toEqual([A])
      expect(s.updates).toEqual([A])
      // Completion of a template: the grant names resources/read, so it passes; of any prompt: refused.
      expect(yield* failure(() => s.client.complete({ ref: { type: "ref/resource", uri: "file:///{path}" }, argument: { name: "path", value: "" } }))).toBe("passed")
      expect(yield* failure(() => s.client.complete({ ref: { type: "ref/prompt", name: "p1" }, argument: { name: "a", value: "" } }))).toContain("method_refused")
    }))

  it.scoped("a grant naming one prompt: only it listed and completed; no resources, templates or tools", () =>
    Effect.gen(function*() {
      const s = yield* through(yield* grant({ act: { t: "prefix", v: "mcp/prompts/p1" } }))
      expect((yield* Effect.promise(() => s.client.listPrompts())).prompts.map((p) => p.name)).toEqual(["p1"])
      expect((yield* Effect.promise(() => s.client.listTools())).tools).toEqual([])
      expect(s.client.getServerCapabilities()?.resources).toBeUndefined()
      expect(yield* failure(() => s.client.complete({ ref: { type: "ref/prompt", name: "p1" }, argument: { name: "a", value: "" } }))).toBe("passed")
      expect(yield* failure(() => s.client.complete({ ref: { type: "ref/prompt", name: "p2" }, argument: { name: "a", value: "" } }))).toContain("method_refused")
      expect(yield* failure(() => s.client.complete({ ref: { type: "ref/resource", uri: "file:///{path}" }, argument: { name: "path", value: "" } }))).toContain("method_refused")
      expect(yield* failure(() => s.client.subscribeResource({ uri: A }))).toContain("method_refused")
      expect(s.subscribed).toEqual([])
    }))

  it.scoped("a grant naming one tool: only it listed", () =>
    Effect.gen(function*() {
      const s = yield* through(yield* grant({ act: { t: "prefix", v: "mcp/tools/seen" } }))
      expect((yield* Effect.promise(() => s.client.listTools())).tools.map((t) => t.name)).toEqual(["seen"])
    }))

  it.effect("scope.ts on its own: other notifications and requests pass; a missing URI is outside", () =>
    Effect.gen(function*() {
      const leaf = { act: { t: "prefix", v: "mcp/resources/read" }, uri: { t: "set", v: [A] } } as never
      expect(visibleUnder(leaf, "notifications/resources/list_changed", {})).toBe(true)
      expect(visibleUnder(leaf, "notifications/resources/updated", {})).toBe(false)
      expect(visibleUnder(leaf, "notifications/resources/updated", { uri: A })).toBe(true)
      expect(outsideGrant(leaf, "logging/setLevel", { level: "info" })).toBeUndefined()
      expect(outsideGrant(leaf, "resources/subscribe", {})?.reason).toBe("method_refused")
    }))
})
