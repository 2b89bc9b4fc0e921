// Section 3, the `narrows` relation, as properties for every bound type (fast-check, fixed seeds,
// 1,000 runs each): reflexive; transitive, both along random narrowing chains and as an
// implication over random triples from small domains (where its premises often hold); and a random
// widening or type change never narrows.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { boundOf, narrowOf, narrowsVerdict, retype, TYPES, widenBound, type Bound, type BoundType } from "./arbitraries.js"

const RUNS = 1000

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

  it("is reflexive: every bound narrows itself", () => {
    fc.assert(fc.property(boundOf(t), (b) => {
        expect(narrowsVerdict(b, b)).toBe("accept")
      }), { numRuns: RUNS, seed })
  })

  it("is transitive along random narrowing chains: c >= b >= a gives c >= a", () => {
    const triple = boundOf(t).chain((c) => narrowOf(c).chain((b) => narrowOf(b).map((a) => ({ a, b, c }))))
    fc.assert(
      fc.property(triple, ({ a, b, c }) => {
        expect(narrowsVerdict(b, c)).toBe("accept")
        expect(narrowsVerdict(a, b)).toBe("accept")
        expect(narrowsVerdict(a, c)).toBe("accept")
      }),
      { numRuns: RUNS, seed: seed + 1 }
    )
  })

  it("is transitive over random triples: narrows(a, b) and narrows(b, c) imply narrows(a, c)", () => {
    let premises = 0
    fc.assert(
      fc.property(smallBound(t), smallBound(t), smallBound(t), (a, b, c) => {
        if (narrowsVerdict(a, b) === "accept" && narrowsVerdict(b, c) === "accept") {
          premises++
          expect(narrowsVerdict(a, c)).toBe("accept")
        }
      }),
      { numRuns: RUNS, seed: seed + 2 }
    )
    // The implication was exercised, not vacuously true.
    expect(premises).toBeGreaterThan(50)
  })

  it("a random widening never narrows (not_narrowed)", () => {
    fc.assert(
      fc.property(boundOf(t), fc.integer({ min: 1, max: 1000 }), fc.nat(), (b, k, pick) => {
        expect(narrowsVerdict(widenBound(b, k, pick), b)).toBe("not_narrowed")
      }),
      { numRuns: RUNS, seed: seed + 3 }
    )
  })

  it("a type change never narrows (not_narrowed), whatever the values", () => {
    fc.assert(
      fc.property(boundOf(t), fc.constantFrom(...TYPES.filter((x) => x !== t)).chain(boundOf), (parent, child) => {
        expect(narrowsVerdict(child, parent)).toBe("not_narrowed")
        expect(narrowsVerdict(retype(parent), parent)).toBe("not_narrowed")
      }),
      { numRuns: RUNS, seed: seed + 4 }
    )
  })
})
