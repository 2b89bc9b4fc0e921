// Section 3, the `narrows` relation, as properties for every bound type (fast-check, fixed seeds,
// 1,000 runs each): reflexive; transitive, both along random narrowing chains and as an
// implication over random triples from small domains (where its premises often hold); and a random
// widening or type change never narrows.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { boundOf, narrowOf, narrowsVerdict, retype, TYPES, widenBound, type Bound, type BoundType } from "./arbitraries.js"
import { depth } from "../support/depth.js"

const RUNS = depth(1000)

/** Small domains, so that random triples often satisfy both premises of transitivity. */
const smallBound = (t: BoundType): fc.Arbitrary<Bound> => {
  switch (t) {
    case "max":
    case "count":
    case "total":
      return fc.integer({ min: 0, max: 3 }).map((v) => ({ t, v }))
    case "prefix":
      return fc.constantFrom("a", "a/", "a/b", "a/b/", "a/a", "b", "ab").map((v) => ({ t, v }))
    case "set":
      return fc.subarray(["a", "b", 1, "1"] as Array<string | number>).map((v) => ({ t, v }))
    case "window":
      return fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })).map(([a, b]) => ({ t, v: a <= b ? [a, b] : [b, a] }))
  }
}

describe.each(TYPES.map((t) => [t] as const))("narrows on %s bounds", (t) => {
  const seed = 0x7a00 + TYPES.indexOf(t) * 16
  const options = (n: number) => ({ fastCheck: { numRuns: RUNS, seed: seed + n } })
  // A property whose coverage a later test checks runs at its written depth in every run.
  const covered = (n: number) => ({ fastCheck: { numRuns: 1000, seed: seed + n } })

  it.prop("is reflexive: every bound narrows itself", [boundOf(t)], ([b]) => {
    expect(narrowsVerdict(b, b)).toBe("accept")
  }, options(0))

  it.prop(
    "is transitive along random narrowing chains: c >= b >= a gives c >= a",
    [boundOf(t).chain((c) => narrowOf(c).chain((b) => narrowOf(b).map((a) => ({ a, b, c }))))],
    ([{ a, b, c }]) => {
      expect(narrowsVerdict(b, c)).toBe("accept")
      expect(narrowsVerdict(a, b)).toBe("accept")
      expect(narrowsVerdict(a, c)).toBe("accept")
    },
    options(1)
  )

  let premises = 0
  it.prop(
    "is transitive over random triples: narrows(a, b) and narrows(b, c) imply narrows(a, c)",
    [smallBound(t), smallBound(t), smallBound(t)],
    ([a, b, c]) => {
      if (narrowsVerdict(a, b) === "accept" && narrowsVerdict(b, c) === "accept") {
        premises++
        expect(narrowsVerdict(a, c)).toBe("accept")
      }
    },
    covered(2)
  )
  it("the transitivity implication was exercised, not vacuously true", () => {
    expect(premises).toBeGreaterThan(50)
  })

  it.prop(
    "a random widening never narrows (not_narrowed)",
    [boundOf(t), fc.integer({ min: 1, max: 1000 }), fc.nat()],
    ([b, k, pick]) => {
      expect(narrowsVerdict(widenBound(b, k, pick), b)).toBe("not_narrowed")
    },
    options(3)
  )

  it.prop(
    "a type change never narrows (not_narrowed), whatever the values",
    [boundOf(t), fc.constantFrom(...TYPES.filter((x) => x !== t)).chain(boundOf)],
    ([parent, child]) => {
      expect(narrowsVerdict(child, parent)).toBe("not_narrowed")
      expect(narrowsVerdict(retype(parent), parent)).toBe("not_narrowed")
    },
    options(4)
  )
})
