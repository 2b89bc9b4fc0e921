// Replay over a ledger holding several runs keys each action by its run and by its place in the
// ledger (seed "Replay"): runs that reuse action ids replay as every action they proposed, and a
// replay under the policy that was recorded reports zero changes, whatever the runs, their modes,
// their interleaving, and their actions' outcomes (property, fixed seed).
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, FastCheck as fc, Fiber, Layer, Stream } from "effect"
import {
  compose, dedup, GuardAbort, kindLimit, LedgerStore, makeGuard, type Mode, readLedger, replay, tokenBudget, usdBudget, type Usd
} from "../../src/ledger/index.js"
import * as MemoryLedger from "../../src/store/memory/ledger.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"
import { cost, memoryLedger } from "./harness.js"

const fresh = () => Layer.provideMerge(MemoryLedger.layer, MemoryReservations.layer)
const recorded = Effect.flatMap(LedgerStore, (s) => Effect.map(Stream.runCollect(s.lines), (c) => Array.from(c)))

describe("replay keys by run and action", () => {
  it.effect("replay keys by run and action: two runs reusing ids replay as all their actions, with no false diff", () =>
    Effect.gen(function*() {
      const policy = usdBudget("1" as Usd)
      for (const runId of ["run-1", "run-2"]) {
        const g = yield* makeGuard({ mode: "enforce", policy, namespace: "t", runId, owner: runId })
        for (let i = 1; i <= 4; i++) {
          yield* Effect.either(g.guard({ id: `x${i}`, kind: "llm", metadata: { runId, i }, estimate: cost(10, "0.30") }, Effect.succeed({ value: i, actual: cost(10, "0.20") })))
        }
      }
      const lines = yield* recorded
      const r = yield* replay(readLedger(Stream.fromIterable(lines)), policy, fresh())
      expect(r.actions).toBe(8)
      expect(r.unchanged).toBe(8)
      expect(r.newly_allowed.count).toBe(0)
      expect(r.newly_denied.count).toBe(0)
    }).pipe(Effect.provide(memoryLedger())))

  const policy = compose(usdBudget("1.50" as Usd), tokenBudget(400n), kindLimit("tool", 4), dedup("exact"))
  const step = fc.record({
    run: fc.integer({ min: 0, max: 2 }),
    id: fc.integer({ min: 0, max: 3 }),
    kind: fc.constantFrom("llm", "tool"),
    meta: fc.integer({ min: 0, max: 4 }),
    estimate: fc.integer({ min: 0, max: 60 }),
    actual: fc.integer({ min: 0, max: 90 }),
    outcome: fc.constantFrom("ok", "ok", "ok", "fail", "abort"),
    // How many later steps start before this one settles (interleaving, as concurrent workers do).
    overlap: fc.integer({ min: 0, max: 2 })
  })

  it.effect.prop(
    "replay keys by run and action: a replay under the recorded policy reports zero changes (property)",
    [fc.array(step, { minLength: 1, maxLength: 24 }), fc.array(fc.constantFrom<Mode>("enforce", "shadow", "recommend"), { minLength: 3, maxLength: 3 })],
    ([steps, modes]) =>
      Effect.gen(function*() {
        const guards = yield* Effect.forEach(modes, (mode, run) => makeGuard({ mode, policy, namespace: "t", runId: `run-${run}`, owner: `w${run}` }))
        const cents = (c: number) => `0.${String(c).padStart(2, "0")}` as Usd
        const inFlight: Array<{ settle: Deferred.Deferred<void>; fiber: Fiber.RuntimeFiber<unknown, unknown>; left: number }> = []
        const settleDue = Effect.gen(function*() {
          for (const f of inFlight) f.left--
          for (const f of inFlight.filter((x) => x.left < 0)) {
            yield* Deferred.succeed(f.settle, undefined)
            yield* Fiber.await(f.fiber)
          }
          inFlight.splice(0, inFlight.length, ...inFlight.filter((x) => x.left >= 0))
        })
        for (const s of steps) {
          const settle = yield* Deferred.make<void>()
          const started = yield* Deferred.make<void>()
          const body = Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(settle))
          const run = s.outcome === "ok" ? Effect.as(body, { value: 0, actual: cost(s.actual * 5, cents(s.actual)) })
            : s.outcome === "abort" ? Effect.zipRight(body, Effect.fail(new GuardAbort({ detail: "stopped" })))
            : Effect.zipRight(body, Effect.fail({ _tag: "Boom" as const }))
          const fiber = yield* Effect.fork(Effect.either(guards[s.run].guard(
            { id: `a${s.id}`, kind: s.kind, metadata: { m: s.meta }, estimate: cost(s.estimate * 5, cents(s.estimate)) },
            run, { failureSpend: () => cost(s.actual * 5, cents(s.actual)) }
          )))
          // Wait until it runs (reserved) or was refused.
          yield* Effect.raceFirst(Deferred.await(started), Effect.asVoid(Fiber.await(fiber)))
          inFlight.push({ settle, fiber, left: s.overlap })
          yield* settleDue
        }
        for (const f of inFlight) {
          yield* Deferred.succeed(f.settle, undefined)
          yield* Fiber.await(f.fiber)
        }
        const lines = yield* recorded
        const actions = lines.filter((l) => l.includes(`"type":"action"`)).length
        const r = yield* replay(readLedger(Stream.fromIterable(lines)), policy, fresh())
        expect(r.actions).toBe(actions)
        expect({ unchanged: r.unchanged, newly_allowed: r.newly_allowed.count, newly_denied: r.newly_denied.count }).toEqual({ unchanged: actions, newly_allowed: 0, newly_denied: 0 })
      }).pipe(Effect.provide(memoryLedger())),
    { fastCheck: { numRuns: 100, seed: 1919 } }
  )
})
