// The budget binds on real spend: an action that actually cost more than its estimate is charged in
// full (seed "Reservation and settlement": commit replaces the reservation with actual usage); what
// it spent beyond the remaining budget is recorded as an overrun, the budget is exhausted for later
// actions, and stats, aggregate_export and the budget agree to the nano-dollar. The property runs
// on several ledger handles (connections) on one SQLite file, and on PostgreSQL when reachable.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import fc from "fast-check"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { afterAll } from "vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import { openLedger, openStores, parseLocation } from "../../src/cli/ledger-open.js"
import {
  aggregate, budgetKey, createLedger, type Guard, LedgerStore, makeGuard, readLedger, stats, toNanos, tokenBudget, usdBudget,
  compose, type Usd
} from "../../src/ledger/index.js"
import { pgReachable } from "../accounting/pg.js"
import { action, cost, events, guardFor, memoryLedger, ran } from "./harness.js"
import { runWorker } from "./processes.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-real-spend-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const pg = await pgReachable()

const usedUsd = (ns: string) => Effect.flatMap(Reservations, (r) => r.used(budgetKey(ns, "usd", "usd")))

/** Everything the ledger says was spent, three ways: settlements' actuals, stats, aggregate_export. */
const readBack = Effect.gen(function*() {
  const store = yield* LedgerStore
  let actual = 0n
  let overrun = 0n
  yield* Stream.runForEach(readLedger(store.lines), (e) => Effect.sync(() => {
    if (e.type !== "settlement") return
    if (e.state !== "released") actual += toNanos(e.actual.usd)
    if (e.overrun_usd !== undefined) overrun += toNanos(e.overrun_usd)
  }))
  const s = yield* stats(readLedger(store.lines))
  const statsUsd = s.rows.filter((r) => r.protocol === "ledger").reduce((a, r) => a + toNanos(r.usd), 0n)
  const agg = yield* aggregate(readLedger(store.lines), 1)
  const aggUsd = agg.groups.filter((g) => g.event === "settlement").reduce((a, g) => a + toNanos(g.usd), 0n)
  return { actual, overrun, statsUsd, aggUsd, summary: s.summary }
})

describe("the budget binds on real spend", () => {
  it.effect("the budget binds on real spend: an actual above the estimate is charged in full, the excess is an overrun", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: usdBudget("1.00" as Usd) })
      let runs = 0
      const outcomes: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const r = yield* Effect.either(g.guard(action("llm", { i }, cost(1, "0.01")), Effect.sync(() => { runs++; return { value: i, actual: cost(50, "0.45") } })))
        outcomes.push(r._tag === "Right" ? "ran" : r.left._tag)
      }
      // 0.45, 0.90, then 0.91 fits the reserve of 0.01 and really costs 0.45: 1.35 used, 0.35 over.
      expect(runs).toBe(3)
      expect(outcomes.slice(3).every((o) => o === "ActionDenied")).toBe(true)
      expect(yield* usedUsd("t")).toBe(1_350_000_000n)
      const ev = yield* events
      const settlements = ev.flatMap((e) => (e.type === "settlement" ? [e] : []))
      expect(settlements.map((s) => s.kept_usd)).toEqual(["0.45", "0.45", "0.45"])
      expect(settlements.map((s) => s.reason)).toEqual(["committed", "committed", "budget_overrun"])
      expect(settlements[2]).toMatchObject({ overrun_usd: "0.35" })
      // Refusals after the overrun name the budget.
      const refused = ev.flatMap((e) => (e.type === "decision" && !e.decision.allowed ? [e.decision.reason] : []))
      expect(new Set(refused)).toEqual(new Set(["usd_budget_exhausted"]))
      const back = yield* readBack
      expect(back).toMatchObject({ actual: 1_350_000_000n, overrun: 350_000_000n, statsUsd: 1_350_000_000n, aggUsd: 1_350_000_000n })
      expect(back.summary).toContain("$1.35")
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("the budget binds on real spend: tokens too, and a measured failure above its estimate", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(tokenBudget(100n), usdBudget("10" as Usd)) })
      yield* g.guard(action("llm", {}, cost(10, "0.01")), ran(0, cost(70, "0.02")))
      class Boom { readonly _tag = "Boom" }
      yield* Effect.flip(g.guard(action("llm", { b: 1 }, cost(10, "0.01")), Effect.fail(new Boom()), { failureSpend: () => cost(60, "0.03") }))
      expect(yield* Effect.flatMap(Reservations, (r) => r.used(budgetKey("t", "tokens", "tokens")))).toBe(130n)
      expect(yield* usedUsd("t")).toBe(50_000_000n)
      const last = (yield* events).at(-1)
      expect(last).toMatchObject({ type: "settlement", state: "failed", kept_tokens: "60", overrun_tokens: "30" })
      const denied = yield* Effect.flip(g.guard(action("llm", { c: 1 }, cost(0, "0")), ran(0, cost(0, "0"))))
      expect(denied._tag === "ActionDenied" && denied.decision.reason).toBe("token_budget_exhausted")
    }).pipe(Effect.provide(memoryLedger())))

  /** One handle (connection, as a separate process has) on the store at `where`. */
  const handle = (where: string, i: number) => ({ i, l: Layer.fresh(openLedger(parseLocation(where), { ledger: "spend", maxConnections: 2, synchronous: "normal" })) })

  const property = (label: string, whereOf: (n: number) => string) =>
    fc.assert(fc.asyncProperty(
      fc.array(fc.record({ estimate: fc.integer({ min: 0, max: 40 }), actual: fc.integer({ min: 0, max: 90 }), fails: fc.boolean() }), { minLength: 1, maxLength: 14 }),
      fc.integer({ min: 10, max: 200 }),
      async (steps, budgetCents) => {
        const where = whereOf(++round)
        const cents = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")}` as Usd
        await Effect.runPromise(Effect.provide(createLedger({ ledger: "spend", mode: "local_full", key: undefined }), openStores(parseLocation(where), { ledger: "spend" })))
        const handles = [0, 1, 2].map((i) => handle(where, i))
        // Each handle runs its share of the steps, all three at once.
        await Promise.all(handles.map(({ l, i }) => Effect.runPromise(Effect.scoped(Effect.gen(function*() {
          const g: Guard = yield* makeGuard({ mode: "enforce", policy: usdBudget(cents(budgetCents)), namespace: "p", runId: `run-${i}`, owner: `w${i}` })
          yield* Effect.forEach(steps.filter((_, k) => k % 3 === i), (s, k) =>
            Effect.either(g.guard(
              { id: `a${i}-${k}`, kind: "llm", metadata: { k }, estimate: cost(s.estimate, cents(s.estimate)) },
              s.fails ? Effect.fail({ _tag: "Boom" as const }) : Effect.succeed({ value: k, actual: cost(s.actual, cents(s.actual)) }),
              { failureSpend: () => cost(s.actual, cents(s.actual)) }
            )), { concurrency: 2, discard: true })
        }).pipe(Effect.provide(l))))))
        const audit = await Effect.runPromise(Effect.gen(function*() {
          return { used: yield* usedUsd("p"), ...(yield* readBack) }
        }).pipe(Effect.provide(openStores(parseLocation(where), { ledger: "spend" }))))
        expect(audit.used).toBe(audit.actual)
        expect(audit.statsUsd).toBe(audit.actual)
        expect(audit.aggUsd).toBe(audit.actual)
        // Never more over the budget than the overruns recorded say.
        const limit = toNanos(cents(budgetCents))
        expect(audit.used - limit <= audit.overrun || audit.used <= limit).toBe(true)
      }
    ), { seed: 19, numRuns: label === "sqlite" ? 12 : 8 })

  it("the budget binds on real spend: worker processes on one SQLite file, actuals above estimates", async () => {
    const where = join(dir, "workers.db")
    await Effect.runPromise(Effect.provide(createLedger({ ledger: "proof", mode: "local_full", key: undefined }), openStores(parseLocation(where), { ledger: "proof" })))
    const tallies = await Promise.all([0, 1].map((w) => runWorker({ where, owner: `w${w}`, n: 120, budget: "4.00", from: w * 1000, concurrency: 8, overEvery: 4 })))
    expect(tallies.flatMap((t) => t!.other)).toEqual([])
    // The real spend passed the budget, and later actions were refused.
    expect(tallies.reduce((a, t) => a + t!.denied, 0)).toBeGreaterThan(0)
    const audit = await Effect.runPromise(Effect.gen(function*() {
      return { used: yield* usedUsd("proof"), ...(yield* readBack) }
    }).pipe(Effect.provide(openStores(parseLocation(where), { ledger: "proof" }))))
    expect(audit.used).toBe(audit.actual)
    expect(audit.statsUsd).toBe(audit.actual)
    expect(audit.aggUsd).toBe(audit.actual)
    // Exhausted: used reached the budget; what it ends over it by is covered by the overruns recorded
    // (each settlement's overrun is what it took past the limit at the time; a later settlement for
    // less than its reservation may give some of the excess back).
    expect(audit.used).toBeGreaterThanOrEqual(4_000_000_000n)
    expect(audit.overrun >= audit.used - 4_000_000_000n).toBe(true)
  }, 240_000)

  let round = 0
  it("the budget binds on real spend: budget used == sum of actual costs, several handles on one SQLite file (property)", async () => {
    await property("sqlite", (n) => join(dir, `spend-${n}.db`))
  }, 240_000)

  it.skipIf(!pg)("the budget binds on real spend: budget used == sum of actual costs, several handles on PostgreSQL (property)", async () => {
    const stamp = randomUUID().replace(/-/g, "").slice(0, 10)
    await property("pg", (n) => `postgres://postgres@127.0.0.1:5432/test#i19_spend_${stamp}_${n}`)
  }, 240_000)
})
