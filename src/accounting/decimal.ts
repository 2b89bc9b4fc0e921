// Exact decimals for limit amounts (YEA §5.1: a quantity's value is amount × 10^−scale; values
// compare and add exactly whatever their scales, never through floating point). Reservations works
// in bigint at one scale per key; callers bring every amount for a key to that scale with `rescale`.
import { Option } from "effect"

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/**
 * `amount × 10^−from` expressed at scale `to`, or None when that is not an integer (a value with
 * more decimal places than `to` holds). Scales must be non-negative integers.
 */
export const rescale = (amount: bigint, from: number, to: number): Option.Option<bigint> => {
  if (to >= from) return Option.some(amount * pow10(to - from))
  const d = pow10(from - to)
  return amount % d === 0n ? Option.some(amount / d) : Option.none()
}

/** Compares `a × 10^−sa` with `b × 10^−sb` exactly: -1, 0 or 1. */
export const compareDecimal = (a: bigint, sa: number, b: bigint, sb: number): -1 | 0 | 1 => {
  const s = Math.max(sa, sb)
  const x = a * pow10(s - sa)
  const y = b * pow10(s - sb)
  return x < y ? -1 : x > y ? 1 : 0
}
