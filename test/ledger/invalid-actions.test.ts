// Shadow mode must never block (seed "Applied decision versus recommendation": in Shadow "every
// proposed action is applied"): an action whose description does not decode is recorded as a
// would-refuse with its documented reason code, and runs, in shadow and recommend; enforce refuses it
// with that code (README: `non_json_metadata`, `invalid_usd`, `token_usage_not_additive`; anything
// else that does not decode, e.g. a bad id or kind, `invalid_action`), and nothing runs.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Action, type Mode, usdBudget, type Usd } from "../../src/ledger/index.js"
import { cost, events, guardFor, memoryLedger } from "./harness.js"

const base = { id: "ok-1", kind: "llm", metadata: { q: 1 }, estimate: cost(1, "0.01") }
const invalid: ReadonlyArray<readonly [string, unknown, string]> = [
  ["non-JSON metadata", { ...base, metadata: { when: new Map() } }, "non_json_metadata"],
  ["a class instance in metadata", { ...base, metadata: { at: new Date(0) } }, "non_json_metadata"],
  ["a bad id", { ...base, id: "has space" }, "invalid_action"],
  ["a bad kind", { ...base, kind: "Not A Kind" }, "invalid_action"],
  ["too many USD decimals", { ...base, estimate: cost(1, "0.0000000001") }, "invalid_usd"],
  ["a non-additive TokenUsage", { ...base, tokens_estimate: { uncached_input: 1, cached_input: 2, output: 3, reasoning: 4, total: 11 } }, "token_usage_not_additive"],
  ["no estimate at all", { id: "x", kind: "llm", metadata: {} }, "invalid_action"]
]

describe("shadow mode must never block", () => {
  for (const [what, proposed, code] of invalid) {
    it.effect(`shadow mode must never block: ${what} is refused in enforce with ${code}`, () =>
      Effect.gen(function*() {
        const g = yield* guardFor({ mode: "enforce", policy: usdBudget("1" as Usd) })
        let ran = false
        const e = yield* Effect.flip(g.guard(proposed as Action, Effect.sync(() => { ran = true; return { value: 1, actual: cost(1, "0.01") } })))
        expect(e).toMatchObject({ _tag: "LedgerError", reason: code })
        expect(ran).toBe(false)
      }).pipe(Effect.provide(memoryLedger())))

    for (const mode of ["shadow", "recommend"] as ReadonlyArray<Mode>) {
      it.effect(`shadow mode must never block: ${what} runs in ${mode}, recorded as a would-refuse with ${code}`, () =>
        Effect.gen(function*() {
          const g = yield* guardFor({ mode, policy: usdBudget("1" as Usd) })
          const r = yield* g.guardDetailed(proposed as Action, Effect.succeed({ value: "ran", actual: cost(1, "0.01") }))
          expect(r.value).toBe("ran")
          expect(r.decision).toMatchObject({ mode, allowed: true, recommended: false, reason: code })
          const decisions = (yield* events).flatMap((e) => (e.type === "decision" ? [e.decision] : []))
          expect(decisions).toEqual([expect.objectContaining({ allowed: true, recommended: false, reason: code })])
        }).pipe(Effect.provide(memoryLedger())))
    }
  }
})
