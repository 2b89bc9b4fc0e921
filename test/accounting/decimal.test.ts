// Exact decimals for limit amounts (YEA §5.1): rescaling and comparison agree with rational
// arithmetic at random scales, never through floating point.
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Option } from "effect"
import { compareDecimal, rescale } from "../../src/accounting/decimal.js"
import { depth } from "../support/depth.js"

const amount = fc.bigInt({ min: 0n, max: 2n ** 53n - 1n })
const scale = fc.integer({ min: 0, max: 18 })

describe("exact decimals", () => {
  it("fixed cases", () => {
    expect(compareDecimal(100n, 0, 10000n, 2)).toBe(0)
    expect(compareDecimal(2287n, 2, 22n, 0)).toBe(1)
    expect(compareDecimal(1n, 18, 0n, 0)).toBe(1)
    expect(rescale(2287n, 2, 18)).toEqual(Option.some(2287n * 10n ** 16n))
    expect(rescale(2287n, 2, 1)).toEqual(Option.none())
    expect(rescale(2280n, 2, 1)).toEqual(Option.some(228n))
  })

  it.prop("compareDecimal agrees with cross-multiplied rationals", [amount, scale, amount, scale], ([a, sa, b, sb]) => {
    // a/10^sa vs b/10^sb  <=>  a*10^sb vs b*10^sa
    const x = a * 10n ** BigInt(sb)
    const y = b * 10n ** BigInt(sa)
    expect(compareDecimal(a, sa, b, sb)).toBe(x < y ? -1 : x > y ? 1 : 0)
  }, { fastCheck: { numRuns: depth(1000) } })

  it.prop("rescale is exact or refuses, and round-trips", [amount, scale, scale], ([a, from, to]) => {
    const r = rescale(a, from, to)
    if (Option.isSome(r)) {
      expect(compareDecimal(a, from, r.value, to)).toBe(0)
      expect(rescale(r.value, to, from)).toEqual(Option.some(a))
    } else {
      expect(to).toBeLessThan(from)
      expect(a % 10n ** BigInt(from - to)).not.toBe(0n)
    }
  }, { fastCheck: { numRuns: depth(1000) } })
})
