// Section 6.2 step 7 as a property (fast-check, fixed seed, 1,000 runs): in a tally tree of random
// depth below a call chain of random length, where every writ narrows its parent's `max` and
// `total` bounds at random and every tally's `used` covers its sub-tally's (so step 10 holds), a
// leaf tally whose `used` exceeds one of its writ's `max` or `total` bounds always makes the tree
// `signed_unauthorized` with reason `out_of_bounds`; the same tree with the leaf's `used` within
// that bound is `valid` (so the property is not satisfied by a verifier that rejects everything).
import { Effect } from "effect"
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { hashOf, key, nonce, tally, writ, type Key } from "../support/writ-builders.js"
import { verifyChain } from "../../src/writ/chain.js"
import { verifyTallyTree } from "../../src/writ/tally.js"
import type { Obj } from "../support/writ-builders.js"
import type { Json } from "../../src/kernel/json.js"
import { depth } from "../support/depth.js"

const RUNS = depth(1000)
const T0 = 1_800_000_000
const EXP = T0 + 100_000
const OP = "op/run"
/** KEYS[0] issues the root; KEYS[i + 1] holds writ i (call chain first, then the delegations). */
const KEYS: ReadonlyArray<Key> = Array.from({ length: 7 }, (_, i) => key(`prop-tally${i}`))
const CALL_ID = nonce("prop-tally/call", 32)

interface Shape {
  /** Writs in the call chain (1 or 2), then delegations below its leaf (0 to 3). */
  readonly chainLength: number
  readonly depth: number
  /** Per writ, root first: the `max` bound `amount` and the `total` bound `spend`, each <= the parent's. */
  readonly amounts: ReadonlyArray<number>
  readonly spends: ReadonlyArray<number>
  /** Which bound the leaf tally exceeds, by how much, and how far below the other bound it stays. */
  readonly over: "amount" | "spend"
  readonly excess: number
  readonly under: number
}

const nonIncreasing = (n: number, top: number): fc.Arbitrary<Array<number>> =>
  n === 0 ? fc.constant([]) : fc.integer({ min: 0, max: top }).chain((v) => nonIncreasing(n - 1, v).map((rest) => [v, ...rest]))

const shape: fc.Arbitrary<Shape> = fc
  .record({ chainLength: fc.integer({ min: 1, max: 2 }), depth: fc.integer({ min: 0, max: 3 }) })
  .chain(({ chainLength, depth }) =>
    fc.record({
      chainLength: fc.constant(chainLength),
      depth: fc.constant(depth),
      amounts: nonIncreasing(chainLength + depth, 1_000_000),
      spends: nonIncreasing(chainLength + depth, 5_000_000),
      over: fc.constantFrom("amount" as const, "spend" as const),
      excess: fc.integer({ min: 1, max: 1_000_000 }),
      under: fc.nat()
    })
  )

/** The writs, root first: the call chain, then each delegation a child of the one before. */
const writsOf = (s: Shape): Array<Obj> => {
  const out: Array<Obj> = []
  for (let i = 0; i < s.chainLength + s.depth; i++) {
    out.push(
      writ(`prop-tally/${i}`, {
        iss: KEYS[i],
        hld: KEYS[i + 1].did,
        bnd: { act: { t: "prefix", v: "op" }, amount: { t: "max", v: s.amounts[i] }, spend: { t: "total", v: s.spends[i] } },
        prv: i === 0 ? null : hashOf(out[i - 1]),
        exp: EXP - i
      })
    )
  }
  return out
}

/** The tally tree, built from the leaf up: each tally reports `used` and lists the one below. */
const treeOf = (s: Shape, writs: ReadonlyArray<Obj>, leafUsed: Obj): Obj => {
  const top = s.chainLength - 1
  let below: Obj | undefined
  for (let i = writs.length - 1; i >= top; i--) {
    below = tally(KEYS[i + 1], {
      call: i === top ? CALL_ID : nonce(`prop-tally/sub-call${i}`, 32),
      writ: hashOf(writs[i]),
      op: OP,
      acc: T0 + 10,
      used: leafUsed,
      sub: below === undefined ? [] : [below],
      wrt: i + 1 < writs.length ? [writs[i + 1]] : []
    })
  }
  return below!
}

const verdictOf = (s: Shape, writs: ReadonlyArray<Obj>, t: Obj) =>
  Effect.runSync(
    Effect.gen(function* () {
      const chain = yield* verifyChain(writs.slice(0, s.chainLength))
      return yield* verifyTallyTree(t as Json, { callId: CALL_ID, op: OP, chain })
    })
  )

describe("section 6.2: a tally tree whose leaf used exceeds a bound", () => {
  it.prop("always fails with out_of_bounds (signed_unauthorized); within the bound it is valid", [shape], ([s]) => {
        const writs = writsOf(s)
        const leaf = writs.length - 1
        const bound = { amount: s.amounts[leaf], spend: s.spends[leaf] }
        const other = s.over === "amount" ? "spend" : "amount"
        const within = { [s.over]: bound[s.over] - (s.under % (bound[s.over] + 1)), [other]: bound[other] - (s.under % (bound[other] + 1)) }
        const over = { ...within, [s.over]: bound[s.over] + s.excess }

        const good = verdictOf(s, writs, treeOf(s, writs, within))
        expect(good.verdict).toBe("valid")

        const bad = verdictOf(s, writs, treeOf(s, writs, over))
        expect(bad.verdict).toBe("signed_unauthorized")
        expect(bad.verdict === "valid" ? undefined : bad.error.reason).toBe("out_of_bounds")
  }, { fastCheck: { numRuns: RUNS, seed: 0x7a11 } })
})
