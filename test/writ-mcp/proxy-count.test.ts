// The SDK's MCP Client through the proxy to a real MCP server under Writ (docs/bindings.md): a
// grant of two uses gives ok, ok, count_exhausted; each result is the one rebuilt from its tally,
// and the receipts hold exactly the three verified tallies.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { anyTool, call, grant, session, statusOf } from "./support.js"

describe("mcp-proxy: a count of 2", () => {
  it.live("ok, ok, count_exhausted, with the receipts of all three", () =>
    Effect.gen(function*() {
      const s = yield* session({ grant: yield* grant({ act: anyTool, uses: { t: "count", v: 2 } }) })
      const listed = yield* Effect.promise(() => s.client.listTools())
      expect(listed.tools.map((t) => t.name)).toContain("echo")
      const outcomes = [
        yield* call(s.client, "echo", { text: "one" }),
        yield* call(s.client, "echo", { text: "two" }),
        yield* call(s.client, "echo", { text: "three" })
      ]
      expect(outcomes.map(statusOf)).toEqual(["ok", "ok", "count_exhausted"])
      const [first, , third] = outcomes.map((o) => (o._tag === "result" ? o.result : ({} as JsonObject)))
      expect(first.structuredContent).toEqual({ text: "one" })
      expect(first.isError).toBe(false)
      expect(first.content).toEqual([{ type: "text", text: encodeCanonical({ text: "one" }, "utf16") }])
      expect(third.isError).toBe(true)
      expect(third.structuredContent).toBeUndefined()
      expect(third.content).toEqual([{ type: "text", text: "Writ refused this call: count_exhausted" }])
      const receipts = yield* s.receipts
      expect(receipts.map((r) => [r.tool, (r.tally as JsonObject).st])).toEqual([["echo", "ok"], ["echo", "ok"], ["echo", "failed"]])
      expect(receipts[0].res).toEqual({ text: "one" })
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
