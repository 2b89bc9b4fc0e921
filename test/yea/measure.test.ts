// Measures and quantities (SPEC §5.1): every well-formedness rule, the plain-decimal rendering,
// and exact-decimal arithmetic checked against an independent bigint oracle (property).
import fc from "fast-check"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  addDecimal,
  compareDecimal,
  decimal,
  decodeUses,
  formatQuantity,
  isQuantity,
  isUses,
  quantityValue,
  unitsAt
} from "../../src/yea/measure.js"
import { depth } from "../support/depth.js"

describe("quantity well-formedness (§5.1)", () => {
  const good: ReadonlyArray<unknown> = [
    { amount: 0 },
    { amount: 2 ** 53 - 1 },
    { amount: 1, scale: 0 },
    { amount: 1, scale: 18 },
    { amount: 1, unit: "U" },
    { amount: 1, unit: "A-Za_z0.9/%".padEnd(32, "x") },
    { amount: 1, unit: "GB/mo" }
  ]
  const bad: ReadonlyArray<[string, unknown]> = [
    ["negative amount", { amount: -1 }],
    ["amount past 2^53-1", { amount: 2 ** 53 }],
    ["fractional amount", { amount: 1.5 }],
    ["amount as a string", { amount: "1" }],
    ["no amount", { scale: 2 }],
    ["scale 19", { amount: 1, scale: 19 }],
    ["negative scale", { amount: 1, scale: -1 }],
    ["fractional scale", { amount: 1, scale: 0.5 }],
    ["null scale", { amount: 1, scale: null }],
    ["empty unit", { amount: 1, unit: "" }],
    ["unit of 33 characters", { amount: 1, unit: "U".repeat(33) }],
    ["unit with a space", { amount: 1, unit: "US D" }],
    ["unit with a non-ASCII letter", { amount: 1, unit: "€" }],
    ["unit not a string", { amount: 1, unit: 1 }],
    ["extra key", { amount: 1, currency: "USD" }],
    ["null", null],
    ["a list", [1]],
    ["a number", 1]
  ]
  it("accepts the edges of every range", () => {
    for (const q of good) expect(isQuantity(q)).toBe(true)
  })
  for (const [name, q] of bad) it(`refuses ${name}`, () => expect(isQuantity(q)).toBe(false))
})

describe("uses well-formedness (§5.1)", () => {
  it("accepts measure names of a-z 0-9 _ . - starting with a letter, 1–64 long", () => {
    expect(isUses({ a: { amount: 1 }, "a.b_c-9": { amount: 1 }, ["a".repeat(64)]: { amount: 1 } })).toBe(true)
    expect(isUses({})).toBe(true)
  })
  const bad: ReadonlyArray<[string, unknown]> = [
    ["an uppercase name", { Spend: { amount: 1 } }],
    ["a name starting with a digit", { "1st": { amount: 1 } }],
    ["a name starting with _", { _x: { amount: 1 } }],
    ["an empty name", { "": { amount: 1 } }],
    ["a name of 65 characters", { ["a".repeat(65)]: { amount: 1 } }],
    ["a name with a space", { "a b": { amount: 1 } }],
    ["a malformed quantity", { spend: { amount: -1 } }],
    ["a null quantity", { spend: null }],
    ["null", null],
    ["a list", [{ amount: 1 }]],
    ["a string", "spend"]
  ]
  for (const [name, u] of bad) {
    it(`refuses ${name}`, () => {
      expect(isUses(u)).toBe(false)
      expect(Either.isLeft(decodeUses(u))).toBe(true)
    })
  }
  it("the schema accepts what isUses accepts", () => expect(Either.isRight(decodeUses({ spend: { amount: 1, scale: 2, unit: "USD" } }))).toBe(true))
  it("a trailing newline does not sneak past the patterns", () => {
    expect(isUses({ "spend\n": { amount: 1 } })).toBe(false)
    expect(isQuantity({ amount: 1, unit: "USD\n" })).toBe(false)
  })
})

describe("plain decimal rendering (§9.2)", () => {
  const cases: ReadonlyArray<[Parameters<typeof formatQuantity>[0], string]> = [
    [{ amount: 2290, scale: 2, unit: "USD" }, "22.90 USD"],
    [{ amount: 5, scale: 3 }, "0.005"],
    [{ amount: 0, scale: 2 }, "0.00"],
    [{ amount: 1 }, "1"],
    [{ amount: 1234567, scale: 0 }, "1234567"],
    [{ amount: 10, scale: 1 }, "1.0"],
    [{ amount: 1, scale: 18 }, "0.000000000000000001"]
  ]
  for (const [q, s] of cases) it(`${JSON.stringify(q)} → ${s}`, () => expect(formatQuantity(q)).toBe(s))
})

describe("exact decimals (property, vs an independent bigint oracle)", () => {
  const dec = fc.record({
    amount: fc.bigInt({ min: 0n, max: 2n ** 53n - 1n }),
    scale: fc.integer({ min: 0, max: 18 })
  })
  // Oracle: a/10^sa ? b/10^sb  ⇔  a·10^sb ? b·10^sa (cross-multiplication, no common scale).
  const oracle = (a: { amount: bigint; scale: number }, b: { amount: bigint; scale: number }) => {
    const x = a.amount * 10n ** BigInt(b.scale)
    const y = b.amount * 10n ** BigInt(a.scale)
    return x < y ? -1 : x > y ? 1 : 0
  }
  it("compareDecimal agrees with cross-multiplication at random scales", () => {
    fc.assert(
      fc.property(dec, dec, (a, b) => {
        expect(compareDecimal(decimal(a.amount, a.scale), decimal(b.amount, b.scale))).toBe(oracle(a, b))
      }),
      { numRuns: depth(1000), seed: 1 }
    )
  })
  it("equal values at different scales compare equal (100 at 0 = 10000 at 2)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 9 }), (n, s, k) => {
        expect(compareDecimal(decimal(n, s), decimal(n * 10n ** BigInt(k), s + k))).toBe(0)
        if (n > 0n) expect(compareDecimal(decimal(n, s), decimal(n * 10n ** BigInt(k) - 1n, s + k))).toBe(1)
      }),
      { numRuns: depth(1000), seed: 2 }
    )
  })
  it("addDecimal is exact: (a + b) compared with c agrees with the oracle on the sum", () => {
    fc.assert(
      fc.property(dec, dec, dec, (a, b, c) => {
        const sum = addDecimal(decimal(a.amount, a.scale), decimal(b.amount, b.scale))
        // Oracle sum as a fraction over 10^(sa+sb).
        const num = a.amount * 10n ** BigInt(b.scale) + b.amount * 10n ** BigInt(a.scale)
        const den = a.scale + b.scale
        const expected = oracle({ amount: num, scale: den }, c)
        expect(compareDecimal(sum, decimal(c.amount, c.scale))).toBe(expected)
      }),
      { numRuns: depth(1000), seed: 3 }
    )
  })
  it("never uses floats: values past 2^53 at scale 18 stay exact", () => {
    const big = quantityValue({ amount: 2 ** 53 - 1, scale: 18 })
    const bigger = addDecimal(big, decimal(1n, 18))
    expect(compareDecimal(bigger, big)).toBe(1)
    expect(unitsAt(bigger, 18)).toBe(2n ** 53n)
    expect(() => unitsAt(decimal(1n, 3), 2)).toThrow()
  })
})
