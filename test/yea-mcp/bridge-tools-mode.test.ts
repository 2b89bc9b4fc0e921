// SPEC-bridge "Tools": a service past 25 capabilities gets two generic tools (`<service>_ask`,
// `<service>_intent`) instead of one per capability, other services keep theirs, `--tools` forces
// a mode; a generic call runs as the capability's own tool would; and the BRIEF's `more` handles
// are EXPANDed at start, so a capability list too long for one BRIEF still gives every tool. In
// process: services run in memory, the SDK's Client on an in-memory transport.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { bridgeTools } from "../../src/bind/mcp/bridge-tools.js"
import { describeService } from "../../src/bind/mcp/bridge-service.js"
import { shopService } from "../../src/examples/shop.js"
import { ask, intent, plans, type ServiceSpec } from "../../src/yea/service/define.js"
import { bridgeOver, grantOf, principalKey, text } from "./inproc-bridge.js"

/** A service of `n` asks (`big.q0`...) and one intent, each summary `pad` characters long. */
const big = (n: number, pad = 10): Effect.Effect<ServiceSpec> =>
  Effect.succeed({
    id: "big.example",
    name: "Big",
    trust: [principalKey],
    capabilities: {
      ...Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`big.q${i}`, ask({ summary: `Question ${i} ${"x".repeat(pad)}`, params: { "n?": "int" }, run: ({ params }) => Effect.succeed({ i, n: params.n ?? null }) })])
      ),
      "big.note": intent({
        summary: "Write a note",
        params: { text: "string" },
        risk: "low",
        plan: ({ params }) => Effect.succeed(plans({ summary: `Note ${String(params.text)}`, effects: [{ op: "create", target: "note" }], action: params.text, undoWindow: 60 })),
        commit: (action) => Effect.succeed({ wrote: action }),
        undo: () => Effect.succeed(null)
      })
    }
  })

describe("generic tools", () => {
  it.scoped("31 capabilities: two generic tools beside the shop's own; ask and intent through them; the instructions list the capabilities", () =>
    Effect.gen(function* () {
      const grant = yield* grantOf([{ svc: ["big.example", "shop.example"] }])
      const b = yield* bridgeOver([big(30), shopService([principalKey])], [grant])
      const tools = (yield* Effect.promise(() => b.client.listTools())).tools
      expect(tools.map((t) => t.name).sort()).toEqual(["big_example_ask", "big_example_intent", "shop_order", "shop_search", "yea_consent", "yea_expand", "yea_undo"])
      expect(b.client.getInstructions()).toContain("big.q29 — Question 29")
      const answer = yield* b.call("big_example_ask", { capability: "big.q7", params: { n: 3 } })
      expect(text(answer)).toContain("7")
      const wrote = yield* b.call("big_example_intent", { capability: "big.note", params: { text: "hi" } })
      expect(text(wrote)).toMatch(/^✓ Note hi/)
      const bad = yield* b.call("big_example_ask", { capability: "shop.search" })
      expect(bad.isError).toBe(true)
      expect(text(bad)).toMatch(/^✗ invalid_params: capability must be one of/)
      expect(text(yield* b.call("big_example_intent", { capability: "big.note", params: "hi" }))).toBe("✗ invalid_params: params must be an object")
    }))

  it.scoped("--tools forces a mode: per-capability past 25, generic below it", () =>
    Effect.gen(function* () {
      const grant = yield* grantOf([{ svc: ["big.example", "shop.example"] }])
      const per = yield* bridgeOver([big(30)], [grant], { tools: "per-capability" })
      expect((yield* Effect.promise(() => per.client.listTools())).tools.length).toBe(31 + 3)
      const gen = yield* bridgeOver([shopService([principalKey])], [grant], { tools: "generic" })
      expect((yield* Effect.promise(() => gen.client.listTools())).tools.map((t) => t.name).sort()).toEqual(["shop_example_ask", "shop_example_intent", "yea_consent", "yea_expand", "yea_undo"])
    }))

  it("a generic name that clashes gets the suffix; a service with no intents gets no intent tool; past 200 per-capability tools are named", () => {
    const caps = Array.from({ length: 30 }, (_, i) => ({ service: "a.b", name: `q${i}`, kind: "ask" as const }))
    const { tools } = bridgeTools([...caps, { service: "x", name: "a_b_ask", kind: "ask" }])
    expect(tools.map((t) => t.tool).filter((n) => n.startsWith("a_b_ask"))).toEqual([expect.stringMatching(/^a_b_ask_[A-Za-z0-9_-]{6}$/), expect.stringMatching(/^a_b_ask_[A-Za-z0-9_-]{6}$/)])
    expect(tools.some((t) => t.tool.startsWith("a_b_intent"))).toBe(false)
    const many = Array.from({ length: 205 }, (_, i) => ({ service: "m", name: `q${i}`, kind: "ask" as const }))
    const r = bridgeTools(many, "per-capability")
    expect(r.tools.length).toBe(200)
    expect(r.skipped.length).toBe(5)
  })
})

describe("more handles at start", () => {
  // A service whose BRIEF had to elide its capability list (SPEC §8: the list root is halved,
  // whole entries dropped, one `more` handle for the rest), faked at the client's interface.
  const cap = (i: number) => ({ name: `c${i}`, kind: "ask" as const, summary: `cap ${i}` })
  const fake = (slices: ReadonlyArray<ReadonlyArray<unknown>>, first = 2) => {
    let expands = 0
    const client = {
      hello: () => Effect.succeed({ yea: "1", id: "b", re: "h", kind: "BRIEF", service: { id: "s.example", name: "S" }, capabilities: [cap(0), cap(1)].slice(0, first), more: [{ handle: "h0", path: "capabilities", remaining: 9, est: 9 }] }),
      expand: (handle: string) =>
        Effect.sync(() => {
          expands++
          const n = Number(handle.slice(1))
          const last = n + 1 >= slices.length
          return { yea: "1", id: "e", re: "x", kind: "ANSWER", data: { items: slices[n] }, ...(last ? {} : { more: [{ handle: `h${n + 1}`, path: "data.items", remaining: 1, est: 1 }] }) }
        })
    }
    return { client: client as never, expands: () => expands }
  }

  it.effect("every handle on the list is EXPANDed, slices with their own more too; a bad or repeated entry is skipped and named", () =>
    Effect.gen(function* () {
      const f = fake([[cap(2), cap(3)], [cap(4), { nope: true }, cap(2)]])
      const d = yield* describeService(f.client)
      expect(d.service.capabilities.map((c) => c.name)).toEqual(["c0", "c1", "c2", "c3", "c4"])
      expect(f.expands()).toBe(2)
      expect(d.skipped).toEqual(["s.example: a capability entry that doesn't parse", "s.example/c2: the name is repeated"])
    }))

  it.effect("a list that needs more than 64 EXPANDs is refused, by reason", () =>
    Effect.gen(function* () {
      const f = fake(Array.from({ length: 70 }, (_, i) => [cap(i + 2)]))
      const e = yield* Effect.flip(describeService(f.client))
      expect(e._tag === "BridgeServiceRefused" && e.reason).toBe("too_many_expands")
    }))
})
