// What `mandate gateway` and its key commands read from their options the same way: USD amounts
// (as micro-USD, the gateway's unit) and IANA time zones. A bad value is a usage message.
import { Either, Option, Schema } from "effect"
import { toNanos, Usd } from "../ledger/usd.js"

/** `--FLAG USD` as micro-USD (digits past the sixth are dropped); none when the option is absent. */
export const usdMicro = (flag: string, usd: Option.Option<string>): Either.Either<bigint | undefined, string> => {
  if (Option.isNone(usd)) return Either.right(undefined)
  if (!Schema.is(Usd)(usd.value) || usd.value.startsWith("-")) return Either.left(`--${flag} must be a USD decimal, e.g. 5 or 0.25: ${usd.value}`)
  return Either.right(toNanos(usd.value) / 1000n)
}

/** The zone when Intl knows it, else the usage message. */
export const timeZoneOf = (zone: string): Either.Either<string, string> => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone })
    return Either.right(zone)
  } catch {
    return Either.left(`unknown time zone ${zone}`)
  }
}
