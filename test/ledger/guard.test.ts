// The guard: budgets, per-kind limits, dedup, the verification reserve, the value
// rule, settlement of success, abort, failure and interruption, and the modes.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { Reservations } from "../../src/accounting/reservations.js"
import {
  budgetKey, compose, dedup, GuardAbort, kindLimit, tokenBudget, usdBudget, valueVsCost, verificationReserve,
  type Usd, type ValueEstimate
} from "../../src/ledger/index.js"
import { action, cost, events, guardFor, memoryLedger, ran } from "./harness.js"

const usedUsd = Effect.flatMap(Reservations, (r) => r.used(budgetKey("t", "usd", "usd")))
const usedTokens = Effect.flatMap(Reservations, (r) => r.used(budgetKey("t", "tokens", "tokens")))

describe("guard, enforce", () => {
  it.effect("reserves the estimate, commits the actual usage, refuses what does not fit", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(usdBudget("1.00" as Usd), tokenBudget(1000n)) })
      const v = yield* g.guard(action("llm", { q: 1 }, cost(400, "0.40")), ran("ok", cost(300, "0.25")))
      expect(v).toBe("ok")
      expect(yield* usedUsd).toBe(250_000_000n)
      expect(yield* usedTokens).toBe(300n)
      // 0.25 + 0.80 > 1.00: refused, nothing ran, nothing stays reserved.
      let ranIt = false
      const denied = yield* Effect.flip(g.guard(action("llm", { q: 2 }, cost(100, "0.80")), Effect.sync(() => { ranIt = true; return { value: 1, actual: cost(0, "0") } })))
      expect(denied._tag).toBe("ActionDenied")
      expect(denied._tag === "ActionDenied" && denied.decision).toMatchObject({ allowed: false, recommended: false, reason: "usd_budget_exhausted" })
      expect(ranIt).toBe(false)
      expect(yield* usedUsd).toBe(250_000_000n)
      // Tokens: 300 + 800 > 1000.
      const t = yield* Effect.flip(g.guard(action("llm", { q: 3 }, cost(800, "0.01")), ran(1, cost(0, "0"))))
      expect(t._tag === "ActionDenied" && t.decision.reason).toBe("token_budget_exhausted")
      const ev = yield* events
      expect(ev.map((e) => e.type)).toEqual(["ledger", "action", "decision", "reservation", "settlement", "action", "decision", "action", "decision"])
      expect(ev[4]).toMatchObject({ type: "settlement", state: "committed", reason: "committed", kept_usd: "0.25", kept_tokens: "300" })
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("charges an actual usage above the estimate in full (within the budget: no overrun)", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: usdBudget("1" as Usd) })
      yield* g.guard(action("llm", {}, cost(10, "0.10")), ran(0, cost(10, "0.30")))
      expect(yield* usedUsd).toBe(300_000_000n)
      const ev = yield* events
      expect(ev.at(-1)).toMatchObject({ type: "settlement", reason: "committed", kept_usd: "0.3", actual: { usd: "0.30" } })
      expect(ev.at(-1)).not.toHaveProperty("overrun_usd")
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("releases on abort, keeps measured or estimated spend on failure and interruption", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(usdBudget("10" as Usd), dedup("exact")) })
      const aborted = yield* Effect.flip(g.guard(action("tool", { x: 1 }, cost(0, "1")), Effect.fail(new GuardAbort({ detail: "user cancelled" }))))
      expect(aborted._tag).toBe("GuardAbort")
      expect(yield* usedUsd).toBe(0n)
      class Boom { readonly _tag = "Boom" }
      yield* Effect.flip(g.guard(action("tool", { x: 1 }, cost(0, "1")), Effect.fail(new Boom()), { failureSpend: () => cost(0, "0.4") }))
      expect(yield* usedUsd).toBe(400_000_000n)
      yield* Effect.flip(g.guard(action("tool", { x: 1 }, cost(0, "1")), Effect.fail(new Boom())))
      expect(yield* usedUsd).toBe(1_400_000_000n)
      // A failed action is never a completed duplicate: the same action may still run, and then is one.
      expect(yield* g.guard(action("tool", { x: 1 }, cost(0, "1")), ran("third time", cost(0, "1")))).toBe("third time")
      const dup = yield* Effect.flip(g.guard(action("tool", { x: 1 }, cost(0, "1")), ran(0, cost(0, "1"))))
      expect(dup._tag === "ActionDenied" && dup.decision.reason).toBe("duplicate_action")
      // Interrupted while running: conservatively the whole estimate stays spent.
      const fiber = yield* Effect.fork(g.guard(action("tool", { x: 2 }, cost(0, "2")), Effect.never))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      expect(yield* usedUsd).toBe(4_400_000_000n)
      const ev = yield* events
      const settlements = ev.filter((e) => e.type === "settlement").map((e) => e.type === "settlement" && [e.state, e.reason, e.kept_usd])
      expect(settlements).toEqual([
        ["released", "released_on_abort", "0"],
        ["failed", "failure_settled", "0.4"],
        ["failed", "failure_settled", "1"],
        ["committed", "committed", "1"],
        ["failed", "failure_settled", "2"]
      ])
      expect(ev.filter((e) => e.type === "failure").map((e) => e.type === "failure" && [e.error, e.measured])).toEqual([["Boom", true], ["Boom", false], ["Interrupted", false]])
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("one guard, a policy and run per action (GuardOptions): each action is held to its own limits and recorded under its run", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: usdBudget("100" as Usd) })
      const small = usdBudget("0.50" as Usd, "small")
      const usedSmall = Effect.flatMap(Reservations, (r) => r.used(budgetKey("t", "usd", "small")))
      yield* g.guard(action("llm", { q: 1 }, cost(0, "0.40")), ran(1, cost(0, "0.40")), { policy: small, runId: "run-a" })
      expect(yield* usedSmall).toBe(400_000_000n)
      expect(yield* usedUsd).toBe(0n)
      // 0.40 + 0.40 > 0.50 under the per-action policy, though the guard's own budget would hold it.
      const denied = yield* Effect.flip(g.guard(action("llm", { q: 2 }, cost(0, "0.40")), ran(2, cost(0, "0.40")), { policy: small, runId: "run-b" }))
      expect(denied._tag === "ActionDenied" && denied.decision.reason).toBe("usd_budget_exhausted")
      // Without options: the guard's own policy and run.
      yield* g.guard(action("llm", { q: 3 }, cost(0, "0.40")), ran(3, cost(0, "0.40")))
      expect(yield* usedUsd).toBe(400_000_000n)
      const runs = (yield* events).flatMap((e) => ("run_id" in e ? [`${e.type}:${e.run_id}`] : []))
      expect(runs).toEqual([
        "action:run-a", "decision:run-a", "reservation:run-a", "settlement:run-a",
        "action:run-b", "decision:run-b",
        "action:run-1", "decision:run-1", "reservation:run-1", "settlement:run-1"
      ])
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("per-kind limit, and the verification reserve that only `verify` may draw on", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(tokenBudget(1000n), verificationReserve({ tokens: 300n }), kindLimit("search", 2)) })
      yield* g.guard(action("generate", {}, cost(600, "0")), ran(0, cost(600, "0")))
      const starved = yield* Effect.flip(g.guard(action("generate", {}, cost(200, "0")), ran(0, cost(200, "0"))))
      expect(starved._tag === "ActionDenied" && starved.decision).toMatchObject({ reason: "verification_reserve_protected", policy: "verification_reserve" })
      yield* g.guard(action("verify", {}, cost(300, "0")), ran(0, cost(300, "0")))
      const over = yield* Effect.flip(g.guard(action("verify", {}, cost(200, "0")), ran(0, cost(200, "0"))))
      expect(over._tag === "ActionDenied" && over.decision.reason).toBe("token_budget_exhausted")
      // Over the lowered limit, even an action that costs nothing is not generation's to run.
      const zero = yield* Effect.flip(g.guard(action("search", {}, cost(0, "0")), ran(0, cost(0, "0"))))
      expect(zero._tag === "ActionDenied" && zero.decision.reason).toBe("verification_reserve_protected")
      const k = yield* guardFor({ policy: kindLimit("search", 2) })
      yield* k.guard(action("search", {}, cost(0, "0")), ran(0, cost(0, "0")))
      yield* k.guard(action("search", {}, cost(0, "0")), ran(0, cost(0, "0")))
      const third = yield* Effect.flip(k.guard(action("search", {}, cost(0, "0")), ran(0, cost(0, "0"))))
      expect(third._tag === "ActionDenied" && third.decision.reason).toBe("kind_limit_reached")
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("value versus cost, exact in decimals", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: valueVsCost("1.5" as Usd) })
      const value = (gain: string): ValueEstimate => ({
        expected_gain_usd: gain as Usd, uncertainty_usd: "0" as Usd, confidence: 1, sample_size: 1, provenance: "explicit",
        estimator: { id: "me", version: "1", training_data_fingerprint: "A".repeat(43) }
      })
      yield* g.guard(action("buy", {}, cost(0, "0.2"), { value: value("0.3") }), ran(0, cost(0, "0.2")))
      const low = yield* Effect.flip(g.guard(action("buy", {}, cost(0, "0.2"), { value: value("0.299999999") }), ran(0, cost(0, "0.2"))))
      expect(low._tag === "ActionDenied" && low.decision.reason).toBe("value_below_cost")
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("refuses non-JSON metadata and a non-additive TokenUsage with their reason codes", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: dedup("exact") })
      const bad = yield* Effect.flip(g.guard(action("x", { when: new Map() }, cost(0, "0")), ran(0, cost(0, "0"))))
      expect(bad).toMatchObject({ _tag: "LedgerError", reason: "non_json_metadata" })
      const tokens = { uncached_input: 1, cached_input: 2, output: 3, reasoning: 4, total: 11 }
      const nonAdditive = yield* Effect.flip(g.guard(action("x", {}, cost(0, "0"), { tokens_estimate: tokens }), ran(0, cost(0, "0"))))
      expect(nonAdditive).toMatchObject({ _tag: "LedgerError", reason: "token_usage_not_additive" })
      expect(nonAdditive._tag === "LedgerError" && nonAdditive.detail).toContain("token_usage_not_additive")
      const usd = yield* Effect.flip(g.guard(action("x", {}, cost(0, "0.0000000001")), ran(0, cost(0, "0"))))
      expect(usd).toMatchObject({ _tag: "LedgerError", reason: "invalid_usd" })
    }).pipe(Effect.provide(memoryLedger())))
})

describe("guard, shadow and recommend", () => {
  it.effect("applies everything, keeps the recommendation, and gives concurrent duplicates separate reservations", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ mode: "shadow", policy: compose(usdBudget("1" as Usd), dedup("exact")) })
      const results = yield* Effect.all(
        [1, 2, 3].map((i) => g.guardDetailed(action("llm", { same: true }, cost(0, "0.6")), Effect.map(Effect.sleep(0), () => ({ value: i, actual: cost(0, "0.5") })))),
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => r.value)).toEqual([1, 2, 3])
      expect(results.map((r) => [r.decision.allowed, r.decision.recommended])).toEqual([[true, true], [true, false], [true, false]])
      const ev = yield* events
      const ids = ev.flatMap((e) => (e.type === "reservation" ? [e.reservation_id] : []))
      expect(new Set(ids).size).toBe(3)
      expect(ev.filter((e) => e.type === "settlement").every((e) => e.type === "settlement" && e.state === "committed")).toBe(true)
      expect(yield* usedUsd).toBe(1_500_000_000n)
      expect(Option.isSome(yield* Effect.flatMap(Reservations, (r) => r.get(ids[0])))).toBe(true)
    }).pipe(Effect.provide(memoryLedger())))
})
