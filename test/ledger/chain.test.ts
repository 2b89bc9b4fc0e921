// `verify` (beyond the seed): a changed, removed, reordered or cut line is found,
// each with its reason code; the lines a store recorded verify intact.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { LedgerStore, type Usd, usdBudget, verifyLedger } from "../../src/ledger/index.js"
import { action, cost, guardFor, memoryLedger, ran } from "./harness.js"

const lines = Effect.flatMap(LedgerStore, (s) => Effect.map(Stream.runCollect(s.lines), (c) => Array.from(c)))
const verify = (ls: ReadonlyArray<string>, head?: { seq: number; hash: string | null }) => verifyLedger(Stream.fromIterable(ls), head)

describe("verify", () => {
  it.effect("finds tampering, removal, reordering and truncation", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: usdBudget("1" as Usd) })
      for (let i = 0; i < 3; i++) yield* g.guard(action("llm", { i }, cost(1, "0.1")), ran(i, cost(1, "0.1")))
      const ls = yield* lines
      const head = yield* Effect.flatMap(LedgerStore, (s) => s.head)
      expect((yield* verify(ls, head)).lines).toBe(ls.length)
      const reason = (bad: ReadonlyArray<string>, h?: typeof head) => Effect.map(Effect.flip(verify(bad, h)), (e) => e._tag === "LedgerError" ? e.reason : e)
      expect(yield* reason(ls.map((l, i) => (i === 4 ? l.replace('"0.1"', '"0.01"') : l)))).toBe("chain_broken")
      expect(yield* reason(ls.filter((_, i) => i !== 3))).toBe("sequence_gap")
      expect(yield* reason([ls[0], ls[2], ls[1], ...ls.slice(3)])).toBe("sequence_gap")
      expect(yield* reason(ls.slice(0, -2), head)).toBe("head_mismatch")
      expect(yield* reason([...ls.slice(0, -1), ls.at(-1)!.slice(0, 40)])).toBe("invalid_event")
      expect(yield* reason(ls.slice(1))).toBe("sequence_gap")
      expect(yield* reason([ls[0].replace('"v":1', '"v":2')])).toBe("unsupported_version")
      expect(yield* reason(["x".repeat(300 * 1024)])).toBe("line_too_long")
      expect(yield* reason([])).toBe("ledger_missing")
    }).pipe(Effect.provide(memoryLedger())))
})
