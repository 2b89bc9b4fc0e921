// The reservation row's codec on the hot path (a reserve writes a row, a settlement reads and
// rewrites it): the Schema codec of rows.ts (ReservationRow) builds a parse tree per call, with
// parseJson, BigInt and the filter, which the issue 30 profile of `npm run bench -- ledger` shows
// as ~2% of a guarded action. These functions take the direct path when the value is of the plain
// form the store itself writes, and hand every other value to the Schema codec, so their answer is
// the Schema's by construction: the same Right (byte-identical text) or the same Left. A property
// test (test/store/reservation-row-codec.test.ts) holds them to the Schema codec on generated rows.
import { Either, type ParseResult, Schema } from "effect"
import { ReservationRow } from "./rows.js"

const schemaEncode = Schema.encodeEither(ReservationRow)
const schemaDecode = Schema.decodeUnknownEither(ReservationRow)

type Encoded = typeof ReservationRow.Encoded
type Row = typeof ReservationRow.Type

const ON_FAILURE = new Set(["consume", "release"])
const STATE = new Set(["held", "committed", "released", "failed"])
/** The decimal form String(bigint) gives a non-negative amount; any other text goes to the Schema. */
const PLAIN = /^(0|[1-9][0-9]*)$/

const amount = (x: unknown): x is bigint => typeof x === "bigint" && x >= 0n

/** ReservationRow's encoding of `row` (the Schema's answer, faster for a well-formed row). */
export const encodeReservationRow = (row: Row): Either.Either<Encoded, ParseResult.ParseError> => {
  const { id, on_failure, state, limits, consumed } = row
  if (typeof id !== "string" || !ON_FAILURE.has(on_failure) || !STATE.has(state) || !Array.isArray(limits) || !Array.isArray(consumed) || limits.length !== consumed.length) {
    return schemaEncode(row)
  }
  let l = "["
  for (let i = 0; i < limits.length; i++) {
    const t = limits[i]
    if (!Array.isArray(t) || t.length !== 3 || typeof t[0] !== "string" || !amount(t[1]) || !amount(t[2])) return schemaEncode(row)
    l += `${i === 0 ? "" : ","}[${JSON.stringify(t[0])},"${t[1]}","${t[2]}"]`
  }
  let c = "["
  for (let i = 0; i < consumed.length; i++) {
    const v = consumed[i]
    if (!amount(v)) return schemaEncode(row)
    c += `${i === 0 ? "" : ","}"${v}"`
  }
  return Either.right({ id, on_failure, state, limits: `${l}]`, consumed: `${c}]` })
}

const parsed = (text: unknown): unknown => {
  if (typeof text !== "string") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** ReservationRow's decoding of a stored row (the Schema's answer, faster for a row of the store's own form). */
export const decodeReservationRow = (input: unknown): Either.Either<Row, ParseResult.ParseError> => {
  if (typeof input !== "object" || input === null) return schemaDecode(input)
  const r = input as Record<string, unknown>
  const { id, on_failure, state } = r
  if (typeof id !== "string" || typeof on_failure !== "string" || !ON_FAILURE.has(on_failure) || typeof state !== "string" || !STATE.has(state)) return schemaDecode(input)
  const limits = parsed(r.limits)
  const consumed = parsed(r.consumed)
  if (!Array.isArray(limits) || !Array.isArray(consumed) || limits.length !== consumed.length) return schemaDecode(input)
  const ls: Array<readonly [string, bigint, bigint]> = []
  for (const t of limits as Array<unknown>) {
    if (!Array.isArray(t) || t.length !== 3) return schemaDecode(input)
    const [k, lim, amt] = t as Array<unknown>
    if (typeof k !== "string" || typeof lim !== "string" || typeof amt !== "string" || !PLAIN.test(lim) || !PLAIN.test(amt)) return schemaDecode(input)
    ls.push([k, BigInt(lim), BigInt(amt)])
  }
  const cs: Array<bigint> = []
  for (const v of consumed as Array<unknown>) {
    if (typeof v !== "string" || !PLAIN.test(v)) return schemaDecode(input)
    cs.push(BigInt(v))
  }
  return Either.right({ id, on_failure: on_failure as Row["on_failure"], state: state as Row["state"], limits: ls, consumed: cs })
}
