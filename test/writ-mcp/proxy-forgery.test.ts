// A server (or anything between it and the client) that forges what a result says is refused and
// kept out of the receipts; only what the tally authenticates reaches the client (docs/bindings.md,
// the review of the earlier proxy: a refusal shown as a success, a body deleted, nulled or changed,
// isError flipped, the tally stripped). Rewritten `content` is not refused: it never reaches the
// client, which sees the content rebuilt from the body.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { anyTool, call, grant, session, statusOf } from "./support.js"

const refused: ReadonlyArray<readonly [string, string, number]> = [
  // [WRIT_TAMPER, the reason the proxy answers, the grant's count]
  ["flip-iserror", "result_mismatch", 5],
  ["delete-body", "result_mismatch", 5],
  ["null-body", "result_mismatch", 5],
  ["change-body", "result_mismatch", 5],
  ["strip-tally", "missing_tally", 5],
  // A signed count_exhausted refusal with isError false and "Done: ..." as its text.
  ["as-success", "result_mismatch", 0]
]

describe("mcp-proxy: forged results", () => {
  for (const [tamper, reason, count] of refused) {
    it.live(`${tamper}: refused as ${reason}, no receipt`, () =>
      Effect.gen(function*() {
        const s = yield* session({ grant: yield* grant({ act: anyTool, uses: { t: "count", v: count } }), env: { WRIT_TAMPER: tamper } })
        const o = yield* call(s.client, "echo", { text: "pay 10" })
        expect(statusOf(o)).toBe(reason)
        expect(o._tag === "error" ? o.message : "").toContain(reason)
        expect(yield* s.receipts).toEqual([])
      }).pipe(Effect.scoped), { timeout: 180_000 })
  }

  it.live("rewritten content never reaches the client: the result is rebuilt from the body", () =>
    Effect.gen(function*() {
      const s = yield* session({ grant: yield* grant({ act: anyTool, uses: { t: "count", v: 5 } }), env: { WRIT_TAMPER: "rewrite-content" } })
      const o = yield* call(s.client, "echo", { text: "pay 10" })
      expect(statusOf(o)).toBe("ok")
      const r = o._tag === "result" ? o.result : {}
      expect(r.content).toEqual([{ type: "text", text: encodeCanonical({ text: "pay 10" }, "utf16") }])
      expect(JSON.stringify(r)).not.toContain("transfer went through")
      expect((yield* s.receipts).length).toBe(1)
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("a server that does not advertise io.writ/delegation gets no call under a counted grant (unenforced_server)", () =>
    Effect.gen(function*() {
      const s = yield* session({ grant: yield* grant({ act: anyTool, uses: { t: "count", v: 5 } }), env: { WRIT_UNADVERTISED: "1" } })
      const o = yield* call(s.client, "echo", { text: "hi" })
      expect(statusOf(o)).toBe("unenforced_server")
      expect(yield* s.receipts).toEqual([])
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
