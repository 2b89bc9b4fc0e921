// A ledger opened on SQLite commits its atomic steps in groups (src/app/ledger-open.ts, the store's
// group commit): the reserve step and the settle step of concurrent guarded actions share COMMITs,
// each step a savepoint. Here steps fail inside such batches, injected by a trigger that refuses
// chosen lines, and whatever fails, fails alone: the chain verifies against the stored head, the
// actions whose reserve step failed left no line and no reservation, the settlements that failed
// are settled by `recover`, and the budget's used amount is exactly what the settlements kept, never
// over the budget. fast-check picks the actions, the failures and the budget.
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Logger, LogLevel, Stream } from "effect"
import fc from "fast-check"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import { openLedger, openStores } from "../../src/app/ledger-open.js"
import { budgetKey, createLedger, LedgerStore, makeGuard, readLedger, toNanos, type Usd, usdBudget, verifyLedger } from "../../src/ledger/index.js"
import { cost } from "./harness.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-group-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

// Refuses a reservation line of an action whose id ends in -rf (its reserve step fails) and a
// settlement line of one ending in -sf (its settle step fails): RAISE(ABORT) fails the statement,
// and the step's savepoint rolls back what the step wrote before it.
const TRIGGERS = [
  `CREATE TRIGGER inject_reserve_failure BEFORE INSERT ON ledger_lines
     WHEN NEW.line LIKE '%"type":"reservation"%' AND NEW.line LIKE '%-rf"%'
     BEGIN SELECT RAISE(ABORT, 'injected reserve failure'); END`,
  `CREATE TRIGGER inject_settle_failure BEFORE INSERT ON ledger_lines
     WHEN NEW.line LIKE '%"type":"settlement"%' AND NEW.line LIKE '%-sf"%' AND NEW.line NOT LIKE '%recovered_after_crash%'
     BEGIN SELECT RAISE(ABORT, 'injected settle failure'); END`
]

type Fate = "ok" | "rf" | "sf"

const scenario = fc.record({
  budgetCents: fc.integer({ min: 5, max: 60 }),
  actions: fc.array(fc.record({ fate: fc.constantFrom<Fate>("ok", "ok", "ok", "rf", "sf"), cents: fc.integer({ min: 1, max: 4 }), spentCents: fc.integer({ min: 0, max: 5 }) }), { minLength: 8, maxLength: 40 })
})

interface Scenario {
  readonly budgetCents: number
  readonly actions: ReadonlyArray<{ readonly fate: Fate; readonly cents: number; readonly spentCents: number }>
}

const runScenario = (s: Scenario) =>
  Effect.gen(function*() {
    const file = join(dir, `ledger-${++files}.db`)
    const where = { store: "sqlite", file } as const
    yield* Effect.provide(createLedger({ ledger: "g", mode: "local_full", key: undefined }), openStores(where, { ledger: "g" }))
    const budget = (s.budgetCents / 100).toFixed(2) as Usd
    const outcome = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const t of TRIGGERS) yield* sql.unsafe(t)
      const guard = yield* makeGuard({ mode: "enforce", policy: usdBudget(budget), namespace: "t", runId: "run", owner: "w0" })
      const exits = yield* Effect.forEach(s.actions, (a, i) =>
        Effect.exit(guard.guard(
          { id: `a-${i}-${a.fate}`, kind: "llm", metadata: { i }, estimate: cost(10, (a.cents / 100).toFixed(2)) },
          // Never above the estimate: an overrun is charged in full, past the budget (guard.ts).
          Effect.succeed({ value: i, actual: cost(8, (Math.min(a.spentCents, a.cents) / 100).toFixed(2)) })
        )), { concurrency: 16 })
      // The settlements that failed left their reservations held: recover settles them.
      const recovered = yield* guard.recover
      const used = yield* Effect.flatMap(Reservations, (r) => r.used(budgetKey("t", "usd", "usd")))
      const store = yield* LedgerStore
      const verified = yield* verifyLedger(store.lines, yield* store.head)
      const events = Array.from(yield* Stream.runCollect(readLedger(store.lines)))
      const held = yield* sql<{ n: number }>`SELECT count(*) AS n FROM accounting_reservations WHERE state = 'held'`
      return { exits, recovered, used, verified, events, held: Number(held[0].n) }
    }).pipe(Effect.provide(openLedger(where, { ledger: "g" })))

    const { exits, events } = outcome
    expect(outcome.verified.lines).toBe(events.length)
    expect(outcome.held).toBe(0)
    // Exactly what the settlements kept is used, and never more than the budget.
    const kept = events.reduce((sum, e) => (e.type === "settlement" ? sum + toNanos(e.kept_usd) : sum), 0n)
    expect(outcome.used).toBe(kept)
    expect(outcome.used <= toNanos(budget)).toBe(true)
    const reservations = events.filter((e) => e.type === "reservation").length
    expect(events.filter((e) => e.type === "settlement").length).toBe(reservations)
    let settleFailed = 0
    s.actions.forEach((a, i) => {
      const id = `a-${i}-${a.fate}`
      const exit = exits[i]
      const mine = events.filter((e) => "action_id" in e && e.action_id === id || e.type === "action" && e.action.id === id || e.type === "decision" && e.decision.action_id === id)
      if (a.fate === "rf") {
        // Its reserve step failed inside its batch: refused with the store's error, and nothing of it
        // (no action, decision or reservation line, no reservation) stayed.
        if (Exit.isFailure(exit) && mine.length === 0) return
        // Refused before any reserve step (the budget was out): only its refusal is recorded.
        expect(Exit.isFailure(exit)).toBe(true)
        expect(mine.map((e) => e.type)).toEqual(["action", "decision"])
        return
      }
      if (Exit.isSuccess(exit)) {
        const settlement = mine.find((e) => e.type === "settlement")
        expect(settlement).toBeDefined()
        if (a.fate === "sf") {
          settleFailed++
          expect(settlement).toMatchObject({ reason: "recovered_after_crash" })
        } else {
          expect(settlement).toMatchObject({ state: "committed" })
        }
      } else {
        expect(mine.map((e) => e.type)).toEqual(["action", "decision"])
      }
    })
    expect(outcome.recovered).toBe(settleFailed)
    // A reserve-step failure surfaced as the store's error, never as a denial.
    const rfFailed = s.actions.flatMap((a, i) => (a.fate === "rf" && Exit.isFailure(exits[i]) ? [exits[i]] : []))
    for (const e of rfFailed) {
      expect(Exit.isFailure(e) && e.cause._tag === "Fail" ? (e.cause.error as { readonly _tag: string })._tag : "").toMatch(/StoreError|ActionDenied/)
    }
    return s.actions.filter((a, i) => a.fate === "rf" && Exit.isFailure(exits[i])).length
  }).pipe(
    // The guard logs each settlement it could not record (recover settles it): expected here.
    Logger.withMinimumLogLevel(LogLevel.Error)
  )

describe("the ledger on SQLite, group commit", () => {
  it("concurrent guarded actions with failing steps keep the chain valid and the budget exact", { timeout: 120_000 }, async () => {
    await fc.assert(fc.asyncProperty(scenario, (s) => Effect.runPromise(Effect.asVoid(runScenario(s)))), { numRuns: 12, seed: 20261203 })
  })

  it.effect("a reserve step failing in a batch leaves its neighbours committed", () =>
    Effect.gen(function*() {
      const actions = Array.from({ length: 24 }, (_, i) => ({ fate: (i % 3 === 1 ? "rf" : i % 3 === 2 ? "sf" : "ok") as Fate, cents: 1, spentCents: 1 }))
      const refused = yield* runScenario({ budgetCents: 100, actions })
      // With the budget ample, every -rf action failed at its reserve step, and only those.
      expect(refused).toBe(8)
    }), { timeout: 60_000 })
})
