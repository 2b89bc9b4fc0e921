// Row encoding of a Reservation shared by the SQL stores. Amounts are decimal strings (bigint,
// unbounded); limits keep request order because it is part of the reservation's identity.
import type { OnFailure, Reservation, ReservationState } from "../../accounting/reservations.js"

export interface ReservationRow {
  readonly id: string
  readonly on_failure: string
  readonly state: string
  readonly limits: string
  readonly consumed: string
}

export const encodeRow = (r: Reservation): ReservationRow => ({
  id: r.id,
  on_failure: r.onFailure,
  state: r.state,
  limits: JSON.stringify(r.limits.map((l) => [l.key, l.limit.toString(), l.amount.toString()])),
  consumed: JSON.stringify(r.consumed.map((c) => c.toString()))
})

export const decodeRow = (row: ReservationRow): Reservation => ({
  id: row.id,
  onFailure: row.on_failure as OnFailure,
  state: row.state as ReservationState,
  limits: (JSON.parse(row.limits) as Array<[string, string, string]>).map(([key, limit, amount]) => ({
    key,
    limit: BigInt(limit),
    amount: BigInt(amount)
  })),
  consumed: (JSON.parse(row.consumed) as Array<string>).map((c) => BigInt(c))
})
