// The rows of the SQL Reservations stores as Schemas: every row read is decoded, so a corrupted
// row (an unknown state, a malformed amount, limits and consumption of different lengths) is a
// StoreError naming what is wrong, never a wrong Reservation. Amounts are decimal strings (bigint,
// unbounded); limits keep request order because it is part of the reservation's identity.
import { Schema } from "effect"
import type { Reservation } from "../../accounting/reservations.js"

/** A non-negative integer amount written as decimal text (SQLite TEXT, PostgreSQL NUMERIC read as text). */
const Amount = Schema.NonNegativeBigInt

export const ReservationRow = Schema.Struct({
  id: Schema.String,
  on_failure: Schema.Literal("consume", "release"),
  state: Schema.Literal("held", "committed", "released", "failed"),
  /** [key, limit, amount] per limit, in request order. */
  limits: Schema.parseJson(Schema.Array(Schema.Tuple(Schema.String, Amount, Amount))),
  consumed: Schema.parseJson(Schema.Array(Amount))
}).pipe(
  Schema.filter((row) => row.limits.length === row.consumed.length || "one consumed amount per limit")
)
export type ReservationRow = typeof ReservationRow.Type

export const reservationFromRow = (row: ReservationRow): Reservation => ({
  id: row.id,
  onFailure: row.on_failure,
  state: row.state,
  limits: row.limits.map(([key, limit, amount]) => ({ key, limit, amount })),
  consumed: row.consumed
})

export const rowFromReservation = (r: Reservation): ReservationRow => ({
  id: r.id,
  on_failure: r.onFailure,
  state: r.state,
  limits: r.limits.map((l) => [l.key, l.limit, l.amount] as const),
  consumed: r.consumed
})

/** One key's consumption. */
export const UsageRow = Schema.Struct({ used: Amount })
