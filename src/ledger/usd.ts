// Direct USD as an exact decimal (never a float). On the wire a
// decimal string with at most 9 places; in accounting an integer count of nano-dollars (10^-9 USD),
// so budgets compare and add exactly in bigint (accounting/decimal.ts), never through floating point.
import { Effect, Option, Schema } from "effect"
import { rescale } from "../accounting/decimal.js"
import { ledgerError, type LedgerError } from "./reason.js"

/** Decimal places kept: nano-dollars. */
export const USD_SCALE = 9

const pattern = /^-?(0|[1-9][0-9]{0,17})(\.[0-9]{1,9})?$/

/** A USD amount: an exact decimal string, e.g. "0.0125", at most 9 places and 18 integer digits. */
export const Usd = Schema.String.pipe(
  Schema.filter((s) => pattern.test(s) && s !== "-0" && !/^-0(\.0+)?$/.test(s), {
    message: () => "invalid_usd: an exact decimal with at most 9 places, e.g. \"0.0125\""
  }),
  Schema.brand("Usd")
).annotations({ identifier: "Usd" })
export type Usd = typeof Usd.Type

/** A non-negative USD amount (a cost; a gain may be negative). */
export const UsdNonNegative = Usd.pipe(Schema.filter((s) => !s.startsWith("-"), { message: () => "invalid_usd: must not be negative" }))

/** The amount in nano-dollars. */
export const toNanos = (usd: Usd | string): bigint => {
  const neg = usd.startsWith("-")
  const [int, frac = ""] = (neg ? usd.slice(1) : usd).split(".")
  const n = Option.getOrThrow(rescale(BigInt(int + frac), frac.length, USD_SCALE))
  return neg ? -n : n
}

/** Nano-dollars as the shortest exact decimal string. */
export const fromNanos = (n: bigint): Usd => {
  const neg = n < 0n
  const a = neg ? -n : n
  const int = a / 10n ** BigInt(USD_SCALE)
  const frac = (a % 10n ** BigInt(USD_SCALE)).toString().padStart(USD_SCALE, "0").replace(/0+$/, "")
  return `${neg ? "-" : ""}${int}${frac.length > 0 ? "." + frac : ""}` as Usd
}

/** Parses untrusted text as USD, failing with reason `invalid_usd`. */
export const parseUsd = (s: string): Effect.Effect<Usd, LedgerError> =>
  Schema.decodeUnknown(Usd)(s).pipe(Effect.mapError(() => ledgerError("invalid_usd", `not an exact USD decimal: ${JSON.stringify(s.slice(0, 40))}`)))
