// The proxy's two policies (docs/bindings.md, "Pinned tools and closed-world arguments"): only
// pinned definitions are listed; a tool with no pin is refused `unpinned_tool`; a definition
// changed after approval and announced by `list_changed` gets no further calls (`tool_changed`);
// closed-world mode refuses an unbound argument, a `count` bound's name and a reserved name used as
// arguments (`unbound_argument`). Pins are made the way `--print-pins` makes them.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { pinOf, pinsOf } from "../../src/bind/writ-mcp/policy.js"
import { listAllTools, rawPeer } from "../../src/bind/writ-mcp/rpc.js"
import { anyTool, call, fixtureServer, grant, session, statusOf } from "./support.js"

const counted = (n: number) => grant({ act: anyTool, uses: { t: "count", v: n } })

describe("mcp-proxy: pinned tools", () => {
  it.live("lists and calls only approved definitions; a rewritten one is neither listed nor called", () =>
    Effect.gen(function*() {
      // --print-pins: the definitions as the server lists them, hashed.
      const tools = yield* Effect.scoped(Effect.flatMap(rawPeer(fixtureServer()), (p) => listAllTools(p.request)))
      const all = pinsOf(tools)
      expect(Object.keys(all).sort()).toEqual(["aborted", "ask", "echo", "progress", "slow"])
      // `ask` is not approved.
      const { ask: _ask, ...pins } = all
      const s = yield* session({ grant: yield* counted(10), pins, env: { WRIT_CHANGE_AFTER: "1" } })
      const listed = yield* Effect.promise(() => s.client.listTools())
      expect(listed.tools.map((t) => t.name).sort()).toEqual(["aborted", "echo", "progress", "slow"])
      expect(statusOf(yield* call(s.client, "ask"))).toBe("unpinned_tool")
      expect(statusOf(yield* call(s.client, "nonesuch"))).toBe("unpinned_tool")
      // The first echo runs; the server then rewrites echo's description and says list_changed.
      expect(statusOf(yield* call(s.client, "echo", { text: "one" }))).toBe("ok")
      expect(statusOf(yield* call(s.client, "echo", { text: "two" }))).toBe("tool_changed")
      const again = yield* Effect.promise(() => s.client.listTools())
      expect(again.tools.map((t) => t.name)).not.toContain("echo")
      // Other pinned tools still run; only the one echo that ran has a receipt.
      expect(statusOf(yield* call(s.client, "aborted"))).toBe("ok")
      expect((yield* s.receipts).map((r) => r.tool)).toEqual(["echo", "aborted"])
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it("a pin covers the whole definition", () => {
    const d = { name: "echo", description: "a", inputSchema: { type: "object" } }
    expect(pinOf({ ...d })).toBe(pinOf({ inputSchema: { type: "object" }, description: "a", name: "echo" }))
    expect(pinOf({ ...d, description: "b" })).not.toBe(pinOf(d))
    expect(pinOf({ ...d, annotations: { readOnlyHint: true } })).not.toBe(pinOf(d))
    expect(pinOf({ ...d, title: "Echo" })).not.toBe(pinOf(d))
  })
})

describe("mcp-proxy: closed-world arguments", () => {
  it.live("refuses any argument the grant has no application bound for", () =>
    Effect.gen(function*() {
      const g = yield* grant({ act: anyTool, uses: { t: "count", v: 10 }, text: { t: "set", v: ["hi"] } })
      const s = yield* session({ grant: g, closed: true })
      expect(statusOf(yield* call(s.client, "echo", { text: "hi" }))).toBe("ok")
      for (const extra of ["bcc", "uses", "act", "depth"]) {
        const o = yield* call(s.client, "echo", { text: "hi", [extra]: "x" })
        expect(statusOf(o)).toBe("unbound_argument")
        expect(o._tag === "error" ? o.message : "").toContain(extra)
      }
      expect((yield* s.receipts).length).toBe(1)
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("without --closed, an unbound argument is signed and sent (spec 7.2 leaves it open)", () =>
    Effect.gen(function*() {
      const g = yield* grant({ act: anyTool, uses: { t: "count", v: 10 }, text: { t: "set", v: ["hi"] } })
      const s = yield* session({ grant: g })
      expect(statusOf(yield* call(s.client, "echo", { text: "hi", bcc: "x" }))).toBe("ok")
      // A call the grant's bounds do not admit is refused with its section 11 reason, never sent.
      const o = yield* call(s.client, "echo", { text: "something else" })
      expect(statusOf(o)).toBe("out_of_bounds")
      expect((yield* s.receipts).length).toBe(1)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
