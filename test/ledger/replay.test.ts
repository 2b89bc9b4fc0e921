// Replay under a stricter policy reports the exact counts and sums it changed, shadow mode
// leaves the agent's sequence of actions identical to no guard, and the
// subscriber records protocol decisions in the same ledger.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { publishDecision } from "../../src/accounting/decision-events.js"
import {
  compose, dedup, kindLimit, ledgerSubscriber, LedgerStore, readLedger, replay, REPLAY_NOTE, stats, usdBudget, type Usd
} from "../../src/ledger/index.js"
import * as MemoryLedger from "../../src/store/memory/ledger.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"
import { action, cost, events, guardFor, memoryLedger, ran } from "./harness.js"

const fresh = () => Layer.provideMerge(MemoryLedger.layer, MemoryReservations.layer)
const recordedLines = Effect.flatMap(LedgerStore, (s) => Effect.map(Stream.runCollect(s.lines), (c) => Array.from(c)))

describe("replay", () => {
  it.effect("under a stricter policy: exact counts and sums changed, per reason code", () =>
    Effect.gen(function*() {
      // Recorded under a $1.00 budget: five actions of $0.30 estimate, actual $0.20; the fifth is
      // denied ($0.80 used + $0.30 > $1.00).
      const g = yield* guardFor({ policy: usdBudget("1" as Usd) })
      for (let i = 0; i < 5; i++) yield* Effect.either(g.guard(action("llm", { i }, cost(100, "0.30")), ran(i, cost(70, "0.20"))))
      const lines = yield* recordedLines
      // Under $0.50: two actions fit ($0.30, then $0.20 + $0.30); the third and fourth become denied,
      // saving what they spent (2 x $0.20, 2 x 70 tokens); the fifth stays denied.
      const strict = yield* replay(readLedger(Stream.fromIterable(lines)), usdBudget("0.50" as Usd), fresh())
      expect(strict.actions).toBe(5)
      expect(strict.newly_denied).toEqual({ count: 2, tokens: 140, usd: "0.4" })
      expect(strict.unchanged).toBe(3)
      expect(strict.newly_allowed).toEqual({ count: 0, tokens: 0, usd: "0" })
      expect(strict.by_reason).toEqual({ usd_budget_exhausted: { count: 2, tokens: 140, usd: "0.4" } })
      expect(strict.note).toBe(REPLAY_NOTE)
      expect(strict.note).toContain("not causal")
      // Under a looser one, the denied fifth would have run: counted at its estimate.
      const loose = yield* replay(readLedger(Stream.fromIterable(lines)), usdBudget("5" as Usd), fresh())
      expect(loose.newly_allowed).toEqual({ count: 1, tokens: 100, usd: "0.3" })
      expect(loose.by_reason).toEqual({ usd_budget_exhausted: { count: 1, tokens: 100, usd: "0.3" } })
      const perKind = yield* replay(readLedger(Stream.fromIterable(lines)), compose(usdBudget("1" as Usd), kindLimit("llm", 1)), fresh())
      expect(perKind.newly_denied).toEqual({ count: 3, tokens: 210, usd: "0.6" })
      expect(Object.keys(perKind.by_reason)).toEqual(["kind_limit_reached"])
    }).pipe(Effect.provide(memoryLedger())))
})

describe("shadow mode", () => {
  // An agent: a fixed plan of actions, some duplicates, some over budget, run concurrently in pairs.
  const plan = Array.from({ length: 24 }, (_, i) => ({ i, meta: { task: i % 5 }, usd: `0.${String(10 + (i * 7) % 40)}` }))
  const agent = (step: (p: (typeof plan)[number], run: Effect.Effect<number>) => Effect.Effect<number, unknown>) =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      yield* Effect.forEach(plan, (p) => Effect.map(step(p, Effect.sync(() => { seen.push(p.i); return p.i * 2 })), (v) => v), { concurrency: 2 }).pipe(
        Effect.map((results) => seen.push(...results.map((r) => -r)))
      )
      return seen
    })

  it.effect("leaves the agent's sequence of actions identical to no guard", () =>
    Effect.gen(function*() {
      const unguarded = yield* agent((_, run) => run)
      const g = yield* guardFor({ mode: "shadow", policy: compose(usdBudget("1" as Usd), dedup("exact"), kindLimit("llm", 3)) })
      const shadowed = yield* agent((p, run) =>
        g.guard(action("llm", p.meta, cost(10, p.usd)), Effect.map(run, (value) => ({ value, actual: cost(10, p.usd) }))))
      expect(shadowed).toEqual(unguarded)
      // ... while the ledger kept what enforce would have refused.
      const ev = yield* events
      const decisions = ev.flatMap((e) => (e.type === "decision" ? [e.decision] : []))
      expect(decisions).toHaveLength(24)
      expect(decisions.every((d) => d.allowed)).toBe(true)
      expect(decisions.filter((d) => !d.recommended).length).toBeGreaterThan(0)
      expect(new Set(decisions.map((d) => d.reason))).toEqual(new Set(["allowed", "duplicate_action", "kind_limit_reached", "usd_budget_exhausted"].filter((r) => decisions.some((d) => d.reason === r))))
    }).pipe(Effect.provide(memoryLedger())))
})

describe("protocol decisions in the ledger", () => {
  it.effect("the subscriber writes what protocols publish, and stats groups it by protocol, principal and reason", () =>
    Effect.gen(function*() {
      yield* publishDecision({ protocol: "writ", kind: "accepted", principal: "did:key:zA", subject: "call-1", operation: "book", amounts: [{ name: "count", amount: "1" }] })
      yield* publishDecision({ protocol: "writ", kind: "refused", principal: "did:key:zA", subject: "call-2", reason: "expired" })
      yield* publishDecision({ protocol: "yea", kind: "consent_required", principal: "alice", subject: "p-1" })
      const g = yield* guardFor({ policy: usdBudget("1" as Usd) })
      yield* g.guard(action("llm", {}, cost(5, "0.5"), { principal: "agent-1" }), ran(0, cost(5, "0.25")))
      const s = yield* stats(Effect.flatMap(LedgerStore, (st) => Effect.succeed(readLedger(st.lines))).pipe(Stream.unwrap))
      expect(s.rows.filter((r) => r.protocol === "writ").map((r) => [r.principal, r.reason, r.count])).toEqual([["did:key:zA", "accepted", 1], ["did:key:zA", "expired", 1]])
      expect(s.rows.find((r) => r.protocol === "yea")).toMatchObject({ principal: "alice", reason: "consent_required", count: 1 })
      expect(s.rows.find((r) => r.reason === "committed")).toMatchObject({ principal: "agent-1", usd: "0.25", tokens: 5 })
      expect(s.summary).toBe(
        "1 guarded action: 1 allowed, 0 refused; they spent 5 tokens and $0.25. " +
        "Writ: 1 call accepted, 1 refused (mostly expired (1)); drawn: 1 count. YEA: 1 needed a person's consent. 3 principals appear in this ledger."
      )
    }).pipe(Effect.provide(ledgerSubscriber.pipe(Layer.provideMerge(memoryLedger())))))
})
