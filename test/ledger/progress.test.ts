// The progress bar of long exports and replays (only on a terminal, counted in
// items), and the plain-language summary that ends `mandate ledger stats`.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { makeProgress, renderBar } from "../../src/cli/ledger-progress.js"
import { compose, kindLimit, LedgerStore, readLedger, replay, stats, tokenBudget, usdBudget, type Usd } from "../../src/ledger/index.js"
import { publishDecision } from "../../src/accounting/decision-events.js"
import { ledgerSubscriber } from "../../src/ledger/index.js"
import * as MemoryLedger from "../../src/store/memory/ledger.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"
import { Layer } from "effect"
import { action, cost, guardFor, memoryLedger, ran } from "./harness.js"

const sink = (isTTY: boolean) => {
  const out: Array<string> = []
  return { out, sink: { isTTY, write: (t: string) => void out.push(t) } }
}

describe("the progress bar", () => {
  it("renders share, percent and counts; a count alone without a total", () => {
    expect(renderBar("export", 0, 4)).toBe(`export [${".".repeat(30)}]   0% 0/4`)
    expect(renderBar("export", 1, 4)).toBe(`export [${"#".repeat(8)}${".".repeat(22)}]  25% 1/4`)
    expect(renderBar("export", 4, 4)).toBe(`export [${"#".repeat(30)}] 100% 4/4`)
    expect(renderBar("record", 17, 0)).toBe("record 17")
  })

  it.effect("draws on a terminal every `every` items and at the end, then a newline; nothing on a pipe", () =>
    Effect.gen(function*() {
      const tty = sink(true)
      const bar = makeProgress("replay", tty.sink, 2)
      for (let i = 1; i <= 5; i++) yield* bar.tick(i, 5)
      yield* bar.done
      expect(tty.out).toEqual([`\r${renderBar("replay", 2, 5)}`, `\r${renderBar("replay", 4, 5)}`, `\r${renderBar("replay", 5, 5)}`, `\r${renderBar("replay", 5, 5)}`, "\n"])
      const pipe = sink(false)
      const quiet = makeProgress("replay", pipe.sink, 1)
      for (let i = 1; i <= 5; i++) yield* quiet.tick(i, 5)
      yield* quiet.done
      expect(pipe.out).toEqual([])
      // Nothing ticked: nothing drawn, not even the newline.
      const idle = sink(true)
      yield* makeProgress("x", idle.sink).done
      expect(idle.out).toEqual([])
    }))

  it.effect("replay reports every action done of the recorded total", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: usdBudget("1" as Usd) })
      for (let i = 0; i < 3; i++) yield* g.guard(action("llm", { i }, cost(1, "0.1")), ran(i, cost(1, "0.1")))
      const lines = yield* Effect.flatMap(LedgerStore, (s) => Stream.runCollect(s.lines))
      const seen: Array<[number, number]> = []
      yield* replay(readLedger(Stream.fromIterable(lines)), tokenBudget(10n), Layer.provideMerge(MemoryLedger.layer, MemoryReservations.layer), (d, t) => Effect.sync(() => void seen.push([d, t])))
      expect(seen).toEqual([[1, 3], [2, 3], [3, 3]])
    }).pipe(Effect.provide(memoryLedger())))
})

describe("the stats summary", () => {
  it.effect("says what was allowed, refused (mostly why) and spent, per protocol, with Writ's chain draws counted once", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(usdBudget("1" as Usd), kindLimit("search", 1)) })
      yield* g.guard(action("search", {}, cost(10, "0.5"), { principal: "agent-1" }), ran(0, cost(7, "0.25")))
      yield* Effect.either(g.guard(action("search", {}, cost(10, "0.1"), { principal: "agent-1" }), ran(0, cost(1, "0.1"))))
      yield* Effect.either(g.guard(action("llm", {}, cost(10, "0.9"), { principal: "agent-2" }), ran(0, cost(1, "0.1"))))
      // A call on a two-writ chain draws count and total on both writs: consumed once.
      const draws = [{ name: "count:AAAAAAAA", amount: "1" }, { name: "count:BBBBBBBB", amount: "1" }, { name: "total:amount:AAAAAAAA", amount: "600" }, { name: "total:amount:BBBBBBBB", amount: "600" }]
      yield* publishDecision({ protocol: "writ", kind: "accepted", principal: "did:key:zB", subject: "c1" })
      yield* publishDecision({ protocol: "writ", kind: "consumed", principal: "did:key:zB", subject: "c1", amounts: draws })
      yield* publishDecision({ protocol: "writ", kind: "refused", principal: "did:key:zB", subject: "c2", reason: "count_exhausted" })
      yield* publishDecision({ protocol: "yea", kind: "commit", principal: "ed25519:k", subject: "p1" })
      yield* publishDecision({ protocol: "yea", kind: "uses_spent", principal: "ed25519:k", subject: "p1", amounts: [{ name: "spend:USD", amount: "12.50" }] })
      yield* publishDecision({ protocol: "yea", kind: "uses_spent", principal: "ed25519:k", subject: "p2", amounts: [{ name: "spend:USD", amount: "0.5" }] })
      const s = yield* stats(Stream.unwrap(Effect.map(LedgerStore, (st) => readLedger(st.lines))))
      expect(s.summary).toBe(
        "3 guarded actions: 1 allowed, 2 refused (mostly kind_limit_reached (1), usd_budget_exhausted (1)); they spent 7 tokens and $0.25. " +
        "Writ: 1 call accepted, 1 call drew on count or total, 1 refused (mostly count_exhausted (1)); drawn: 1 count, 600 total:amount. " +
        "YEA: 1 committed, 2 spent declared uses; drawn: 13.00 spend:USD. " +
        "4 principals appear in this ledger."
      )
      expect(s.protocols).toEqual({
        writ: { kinds: { accepted: 1, consumed: 1, refused: 1 }, refused: { count_exhausted: 1 }, drawn: { count: "1", "total:amount": "600" } },
        yea: { kinds: { commit: 1, uses_spent: 2 }, refused: {}, drawn: { "spend:USD": "13.00" } }
      })
      // The rows' USD column: YEA's uses in USD are money drawn; Writ totals name no currency.
      const usd = (protocol: string, reason: string) => s.rows.find((r) => r.protocol === protocol && r.reason === reason)?.usd
      expect(usd("yea", "uses_spent")).toBe("13")
      expect(usd("writ", "consumed")).toBe("0")
    }).pipe(Effect.provide(ledgerSubscriber.pipe(Layer.provideMerge(memoryLedger())))))

  it.effect("an empty ledger says so", () =>
    Effect.map(stats(Stream.empty), (s) => expect(s.summary).toBe("This ledger records no decision yet.")))
})
