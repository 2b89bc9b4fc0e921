// Exact decimal sums for the spend view: an amount is a decimal string (a ledger's USD, a YEA
// quantity, a Writ integer), added as a bigint at the larger of the two scales, never through
// floating point, so a total equals what the stores hold to the last digit.

/** `12.50` is 1250 at scale 2. */
export interface Dec { readonly units: bigint; readonly scale: number }

export const ZERO: Dec = { units: 0n, scale: 0 }

const DECIMAL = /^-?[0-9]{1,40}(\.[0-9]{1,18})?$/

/** A decimal string as a Dec, or null when it is not one (the caller names the reason). */
export const parseDec = (s: string): Dec | null => {
  if (!DECIMAL.test(s)) return null
  const neg = s.startsWith("-")
  const [int, frac = ""] = (neg ? s.slice(1) : s).split(".")
  const units = BigInt(int + frac)
  return { units: neg ? -units : units, scale: frac.length }
}

export const addDec = (a: Dec, b: Dec): Dec => {
  const scale = Math.max(a.scale, b.scale)
  return { units: a.units * 10n ** BigInt(scale - a.scale) + b.units * 10n ** BigInt(scale - b.scale), scale }
}

/** The larger of two amounts. */
export const maxDec = (a: Dec, b: Dec): Dec => (addDec(a, { units: -b.units, scale: b.scale }).units >= 0n ? a : b)

/** The shortest exact text: trailing zeros of the fraction dropped. */
export const showDec = (d: Dec): string => {
  if (d.scale === 0) return d.units.toString()
  const neg = d.units < 0n
  const digits = (neg ? -d.units : d.units).toString().padStart(d.scale + 1, "0")
  const frac = digits.slice(-d.scale).replace(/0+$/, "")
  const text = `${digits.slice(0, -d.scale)}${frac === "" ? "" : `.${frac}`}`
  return neg && text !== "0" ? `-${text}` : text
}
