// Measures and quantities (SPEC §5.1 `uses`, §6.3 limits): what a commit uses up, as exact decimals.
//
// A quantity's value is `amount × 10^−scale`. Values are compared and added in bigint after
// bringing both sides to the larger scale (§6.3 "Values are exact"); no float ever touches them.
// Names and units are opaque strings matched exactly; nothing is converted.
import { Either, ParseResult, Predicate, Schema } from "effect"

/** §5.1: 1–64 characters of a-z, 0-9, `_`, `.`, `-`, starting with a letter. */
export const MEASURE_NAME = /^[a-z][a-z0-9_.-]{0,63}$/
/** §5.1: 1–32 characters of A-Z, a-z, 0-9, `_`, `.`, `/`, `%`, `-`. */
export const UNIT = /^[A-Za-z0-9_./%-]{1,32}$/
/** §5.1: `amount` is in [0, 2^53−1]. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER
/** §5.1: `scale` is in [0, 18]. */
export const MAX_SCALE = 18

export const MeasureName = Schema.String.pipe(Schema.pattern(MEASURE_NAME), Schema.annotations({ identifier: "MeasureName" }))
export const Unit = Schema.String.pipe(Schema.pattern(UNIT), Schema.annotations({ identifier: "Unit" }))
export const Amount = Schema.Int.pipe(Schema.between(0, MAX_AMOUNT))
export const Scale = Schema.Int.pipe(Schema.between(0, MAX_SCALE))

const exact = { parseOptions: { onExcessProperty: "error" as const } }

/**
 * `{"amount": int, "scale"?: int, "unit"?: string}` (§5.1). Any other member makes it malformed
 * (the vectors' "extra key" case: `{"amount": 1, "currency": "USD"}` is not a quantity).
 */
export const Quantity = Schema.Struct({
  amount: Amount,
  scale: Schema.optional(Scale),
  unit: Schema.optional(Unit)
}).annotations({ identifier: "Quantity", ...exact })
export type Quantity = typeof Quantity.Type


const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

/** Whether `v` is a well-formed quantity (§5.1). Same rule as the `Quantity` schema, without allocation. */
export const isQuantity = (v: unknown): v is Quantity => {
  if (!Predicate.isRecord(v)) return false
  let n = 0
  for (const k in v) {
    if (!has(v, k)) continue
    n++
    if (k !== "amount" && k !== "scale" && k !== "unit") return false
  }
  if (!has(v, "amount")) return false
  const a = v.amount
  if (typeof a !== "number" || !Number.isSafeInteger(a) || a < 0) return false
  if (has(v, "scale")) {
    const s = v.scale
    if (typeof s !== "number" || !Number.isInteger(s) || s < 0 || s > MAX_SCALE) return false
  }
  if (has(v, "unit")) {
    const u = v.unit
    if (typeof u !== "string" || !UNIT.test(u)) return false
  }
  return n >= 1
}

/** Whether `v` is a well-formed `uses` (§5.1): an object of measure name → quantity. `{}` is fine. */
export const isUses = (v: unknown): v is Readonly<Record<string, Quantity>> => {
  if (!Predicate.isRecord(v)) return false
  for (const k of Object.keys(v)) {
    if (!MEASURE_NAME.test(k) || !isQuantity(v[k])) return false
  }
  return true
}

/** `uses` (§5.1): measure name → quantity. Decoding refuses any malformed name or quantity. */
export const Uses = Schema.declare((u: unknown): u is Readonly<Record<string, Quantity>> => isUses(u), {
  identifier: "Uses",
  description: "an object mapping measure names (§5.1) to quantities",
  // The published shape of the same rule (schema/yea): names by pattern, values as quantities.
  jsonSchema: {
    type: "object",
    propertyNames: { type: "string", pattern: MEASURE_NAME.source },
    additionalProperties: {
      type: "object",
      required: ["amount"],
      properties: {
        amount: { type: "integer", minimum: 0, maximum: MAX_AMOUNT },
        scale: { type: "integer", minimum: 0, maximum: MAX_SCALE },
        unit: { type: "string", pattern: UNIT.source }
      },
      additionalProperties: false
    }
  }
})
export type Uses = typeof Uses.Type

export const decodeUses = (u: unknown): Either.Either<Uses, ParseResult.ParseError> => Schema.decodeUnknownEither(Uses)(u)

// ---------------------------------------------------------------------------------------------
// Exact decimals

/** `units × 10^−scale`, with `units` a bigint. */
export interface Decimal {
  readonly units: bigint
  readonly scale: number
}

const POW10: ReadonlyArray<bigint> = Array.from({ length: 2 * MAX_SCALE + 1 }, (_, i) => 10n ** BigInt(i))
const pow10 = (n: number): bigint => POW10[n] ?? 10n ** BigInt(n)

export const decimal = (units: bigint | number, scale = 0): Decimal => ({ units: BigInt(units), scale })

/** The value of a quantity (or of a limit's `max`/`scale`). */
export const quantityValue = (q: { readonly amount: number; readonly scale?: number }): Decimal =>
  ({ units: BigInt(q.amount), scale: q.scale ?? 0 })

/** `d` expressed in units of 10^−scale; `scale` must be ≥ `d.scale` (exact, never rounds). */
export const unitsAt = (d: Decimal, scale: number): bigint => {
  if (scale < d.scale) throw new RangeError(`cannot rescale ${d.scale} down to ${scale} exactly`)
  return d.units * pow10(scale - d.scale)
}

/** −1, 0 or 1, comparing exact values whatever the scales (`100` at 0 equals `10000` at 2). */
export const compareDecimal = (a: Decimal, b: Decimal): -1 | 0 | 1 => {
  const s = Math.max(a.scale, b.scale)
  const x = unitsAt(a, s)
  const y = unitsAt(b, s)
  return x < y ? -1 : x > y ? 1 : 0
}

export const addDecimal = (a: Decimal, b: Decimal): Decimal => {
  const s = Math.max(a.scale, b.scale)
  return { units: unitsAt(a, s) + unitsAt(b, s), scale: s }
}

/**
 * Plain decimal with exactly `scale` digits after the point, then ` unit` if any (§9.2): no sign,
 * no grouping. `{amount: 5, scale: 3}` → `0.005`. Only for well-formed quantities.
 */
export const formatQuantity = (q: Quantity): string => {
  const scale = q.scale ?? 0
  const digits = String(q.amount)
  let text: string
  if (scale === 0) text = digits
  else {
    const padded = digits.padStart(scale + 1, "0")
    text = `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`
  }
  return q.unit === undefined ? text : `${text} ${q.unit}`
}

/** Units match exactly: both the same string, or both absent (§6.3 "Units must match exactly"). */
export const sameUnit = (a: { readonly unit?: string }, b: { readonly unit?: string }): boolean => a.unit === b.unit
