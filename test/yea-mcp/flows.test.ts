// The approval flows end to end (SPEC-approval "Objective", SPEC-mcp-ts "Testing"), driven by the
// SDK's own Client over stdio and over Streamable HTTP: inside the policy (receipt), outside it with
// a form (wrong phrase refused, right phrase runs the shown plan and only it), a client without
// forms (consent code, approve, the retried call runs once), a replayed approval refused, undo.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { approve, start, text } from "./harness.js"

const T = { timeout: 180_000 }

for (const transport of ["stdio", "http"] as const) {
  describe(`job tools over ${transport}`, () => {
    it.live("inside the policy: the safest plan runs once and returns a receipt; undo reverts it once", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const s = yield* start({ transport })
          const r = yield* Effect.promise(() => s.call("reschedule", { event: "e42", to: "Thu 15:00" }))
          expect(r.isError).toBeFalsy()
          expect(text(r)).toMatch(/^✓ Move e42 to Thu 15:00 \(receipt r_[A-Za-z0-9_-]{12}\) · undo until /)
          const receipt = (r.structuredContent as { receipt: { id: string } }).receipt
          expect((yield* Effect.promise(() => s.book())).applied).toEqual([{ tool: "reschedule", summary: "Move e42 to Thu 15:00" }])
          const u = yield* Effect.promise(() => s.call("undo", { receipt: receipt.id }))
          expect(text(u)).toMatch(/^↶ undid r_/)
          const again = yield* Effect.promise(() => s.call("undo", { receipt: receipt.id }))
          expect(again.isError).toBe(true)
          expect(text(again)).toBe("✗ undo refused: this job was already undone")
          expect((yield* Effect.promise(() => s.book())).reverted.length).toBe(1)
          const unknown = yield* Effect.promise(() => s.call("undo", { receipt: "../x" }))
          expect(text(unknown)).toBe("✗ undo refused: no such receipt")
        })
      ), T)

    it.live("preview: true returns the plans and runs nothing", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const s = yield* start({ transport })
          const r = yield* Effect.promise(() => s.call("reschedule", { event: "e1", to: "Fri", preview: true }))
          expect(text(r)).toMatch(/^Preview \(nothing ran\):\n1 plan:\n\[1\] Move e1 to Fri/)
          expect((yield* Effect.promise(() => s.book())).applied).toEqual([])
        })
      ), T)

    it.live("outside the policy with a form: a wrong phrase asks again, the right one runs the chosen plan and only it", () =>
      Effect.scoped(
        Effect.gen(function* () {
          let round = 0
          const s = yield* start({
            transport,
            form: (req) => {
              round++
              const plans = (((req as { requestedSchema: { properties: unknown } }).requestedSchema.properties as Record<string, { oneOf?: Array<{ const: string }> }>).plan?.oneOf ?? []).map((o) => o.const)
              // Round 1: the model's guess ("approve") is not the phrase; round 2: the branch name, plan 2.
              return { action: "accept", content: round === 1 ? { plan: plans[1], confirm: "approve" } : { plan: plans[1], confirm: " OLD-NAV " } }
            }
          })
          const r = yield* Effect.promise(() => s.call("delete_branch", { branch: "old-nav" }))
          expect(s.forms.length).toBe(2)
          expect(s.forms[0].message).toContain("Approval needed: does not cover delete_branch.")
          expect(s.forms[0].message).toContain("to approve, type: old-nav")
          expect(s.forms[1].message).toContain('type "old-nav" exactly to approve')
          expect(r.isError).toBeFalsy()
          expect((yield* Effect.promise(() => s.book())).applied).toEqual([{ tool: "delete_branch", summary: "Delete branch old-nav and its tags" }])
        })
      ), T)

    it.live("three wrong phrases refuse; a decline runs nothing", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const s = yield* start({ transport, form: (req) => (req.message.includes("30.00") ? { action: "decline" } : { action: "accept", content: { confirm: "yes" } }) })
          const wrong = yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 2900 }))
          expect(s.forms.length).toBe(3)
          expect(text(wrong)).toBe("✗ refused: not approved after 3 tries; nothing ran")
          const declined = yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 3000 }))
          expect(text(declined)).toBe("✗ not approved: nothing ran")
          const bare = yield* Effect.promise(() => s.call("delete_customer", { customer: "c9" }))
          expect(bare.isError).toBe(true) // high risk: never offered in the form, consent codes instead
          expect(s.forms.length).toBe(4)
          expect((yield* Effect.promise(() => s.book())).applied).toEqual([])
        })
      ), T)

    it.live("a client without forms: consent codes, approve, the retried call runs once, a replay runs nothing", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const s = yield* start({ transport })
          const first = yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 7136 }))
          expect(first.isError).toBe(true)
          expect(text(first)).toContain("Ask the user to run `mandate yea approve <code>` in their terminal, then call again.")
          const codes = (first.structuredContent as { codes: Array<{ code: string }> }).codes
          expect(codes.length).toBe(1)
          expect((yield* Effect.promise(() => s.book())).applied).toEqual([])
          // A wrong phrase at the terminal approves nothing.
          yield* Effect.promise(() => approve(s.db, codes[0].code, "yes").then(() => Promise.reject(new Error("approved")), () => undefined))
          yield* Effect.promise(() => approve(s.db, codes[0].code))
          // Another input is another plan hash: the consent doesn't run it.
          const other = yield* Effect.promise(() => s.call("refund", { charge: "ch_2", cents: 7136 }))
          expect(other.isError).toBe(true)
          const retried = yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 7136 }))
          expect(retried.isError).toBeFalsy()
          expect(text(retried)).toMatch(/^✓ Refund 71.36 USD of ch_1 \(receipt r_/)
          const replay = yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 7136 }))
          expect(replay.isError).toBe(true)
          expect((yield* Effect.promise(() => s.book())).applied).toEqual([{ tool: "refund", summary: "Refund 71.36 USD of ch_1" }])
        })
      ), T)

    it.live("guard(): the original tool runs only inside the policy, its result returned with the receipt in _meta", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const s = yield* start({ transport })
          const preview = yield* Effect.promise(() => s.call("archive", { doc: "d1", preview: true }))
          expect((yield* Effect.promise(() => s.book())).archived).toEqual([])
          expect(text(preview)).toContain("Archive d1")
          const r = yield* Effect.promise(() => s.call("archive", { doc: "d1" }))
          expect(text(r)).toBe("archived d1")
          expect((r._meta as Record<string, { id: string }>)["dev.yea/receipt"].id).toMatch(/^r_/)
          expect((yield* Effect.promise(() => s.book())).archived).toEqual(["d1"])
        })
      ), T)
  })
}
