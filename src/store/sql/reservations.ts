// The SQL shape shared by the SQLite and PostgreSQL Reservations stores: the two tables, the
// reading and writing of a reservation row, and the Layers over a backend. What differs between
// the two stays in each store: the column type of a usage amount (exact NUMERIC in PostgreSQL,
// decimal text in SQLite, whose integers are 64-bit) and how usage rows are locked and updated
// (each store's isolation, described in its own module).
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { type ReservationBackend, ReservationStore } from "../../accounting/backend.js"
import * as Core from "../../accounting/core.js"
import type { Reservation, Reservations } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import type { Migration } from "./migrations.js"
import { decodeRow, encodeRow, type ReservationRow } from "./rows.js"

/** The Reservations tables, with `usedType` the column type of a usage amount. */
export const reservationMigrations = (usedType: "NUMERIC" | "TEXT"): ReadonlyArray<Migration> => [{
  name: "accounting/001_reservations",
  statements: [
    `CREATE TABLE accounting_usage (key TEXT PRIMARY KEY, used ${usedType} NOT NULL)`,
    `CREATE TABLE accounting_reservations (
      id TEXT PRIMARY KEY, on_failure TEXT NOT NULL, state TEXT NOT NULL,
      limits TEXT NOT NULL, consumed TEXT NOT NULL)`
  ]
}]

/** Maps every failure of a reservations operation (driver errors included) to the shared StoreError. */
export const reservationOp = <A>(name: string, eff: Effect.Effect<A, unknown>): Effect.Effect<A, StoreError> =>
  Effect.mapError(eff, storeError(`reservations.${name}`))

/** The backend operations on `accounting_reservations`, the same statements in both stores. */
export const reservationRowOps = (
  sql: SqlClient.SqlClient
): Pick<ReservationBackend, "load" | "insert" | "update"> => ({
  load: (id) =>
    reservationOp("load", Effect.map(
      sql<ReservationRow>`SELECT id, on_failure, state, limits, consumed FROM accounting_reservations WHERE id = ${id}`,
      (rows) => (rows.length === 0 ? Option.none() : Option.some(decodeRow(rows[0])))
    )),
  insert: (r: Reservation) => {
    const row = encodeRow(r)
    return reservationOp("insert", sql`INSERT INTO accounting_reservations (id, on_failure, state, limits, consumed)
      VALUES (${row.id}, ${row.on_failure}, ${row.state}, ${row.limits}, ${row.consumed})`)
  },
  update: (r: Reservation) => {
    const row = encodeRow(r)
    return reservationOp("update", sql`UPDATE accounting_reservations SET state = ${row.state}, consumed = ${row.consumed}
      WHERE id = ${row.id}`)
  }
})

/** The ReservationStore made by `makeBackend` on the database in context, after `migrate` applied `migrations`. */
export const reservationStoreLayer = (
  migrate: (migrations: ReadonlyArray<Migration>) => Effect.Effect<void, StoreError, SqlClient.SqlClient>,
  migrations: ReadonlyArray<Migration>,
  makeBackend: (sql: SqlClient.SqlClient) => ReservationBackend
): Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient> =>
  Layer.effect(
    ReservationStore,
    Effect.gen(function*() {
      yield* migrate(migrations)
      return makeBackend(yield* SqlClient.SqlClient)
    })
  )

/** Reservations (and its ReservationStore) over `storeLayer`. */
export const reservationsLayer = (
  storeLayer: Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient>
): Layer.Layer<Reservations | ReservationStore, StoreError, SqlClient.SqlClient> =>
  Core.layer.pipe(Layer.provideMerge(storeLayer))
