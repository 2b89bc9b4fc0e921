// The SQL shape shared by the SQLite and PostgreSQL Reservations stores: the two tables, the
// reading and writing of a reservation row, and the Layers over a backend. What differs between
// the two stays in each store: the column type of a usage amount (exact NUMERIC in PostgreSQL,
// decimal text in SQLite, whose integers are 64-bit) and how usage rows are locked and updated
// (each store's isolation, described in its own module).
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { type ReservationBackend, ReservationStore } from "../../accounting/backend.js"
import * as Core from "../../accounting/core.js"
import { Atomic, type AtomicService, type Reservation, type Reservations } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import type { StoreMigrations } from "./migrations.js"
import { ReservationRow, reservationFromRow, rowFromReservation, UsageRow } from "./rows.js"

/**
 * The Reservations tables, with `usedType` the column type of a usage amount. IF NOT EXISTS: a store
 * written before the Migrator already has them (recorded as "accounting/001_reservations").
 */
export const reservationMigrations = (usedType: "NUMERIC" | "TEXT"): StoreMigrations => ({
  table: "mandate_migrations_accounting",
  migrations: {
    "1_reservations": [
      `CREATE TABLE IF NOT EXISTS accounting_usage (key TEXT PRIMARY KEY, used ${usedType} NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS accounting_reservations (
        id TEXT PRIMARY KEY, on_failure TEXT NOT NULL, state TEXT NOT NULL,
        limits TEXT NOT NULL, consumed TEXT NOT NULL)`
    ]
  }
})

/** One key's consumption read through UsageRow (0 for an unknown key); `select` returns `used` as text. */
export const usageReader = (select: (key: string) => Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
  SqlSchema.findOne({ Request: Schema.String, Result: UsageRow, execute: select })

/** Maps every failure of a reservations operation (driver errors included) to the shared StoreError. */
export const reservationOp = <A>(name: string, eff: Effect.Effect<A, unknown>): Effect.Effect<A, StoreError> =>
  Effect.mapError(eff, storeError(`reservations.${name}`))

/** The backend operations on `accounting_reservations`, the same statements in both stores. */
export const reservationRowOps = (
  sql: SqlClient.SqlClient
): Pick<ReservationBackend, "load" | "insert" | "update"> => ({
  load: (id) =>
    reservationOp("load", findReservation(sql)(id).pipe(Effect.map((row) => row.pipe(Option.map(reservationFromRow))))),
  insert: (r: Reservation) =>
    reservationOp("insert", Effect.flatMap(encodeRow(r), (row) =>
      sql`INSERT INTO accounting_reservations (id, on_failure, state, limits, consumed)
        VALUES (${row.id}, ${row.on_failure}, ${row.state}, ${row.limits}, ${row.consumed})`)),
  update: (r: Reservation) =>
    reservationOp("update", Effect.flatMap(encodeRow(r), (row) =>
      sql`UPDATE accounting_reservations SET state = ${row.state}, consumed = ${row.consumed}
        WHERE id = ${row.id}`))
})

const findReservation = (sql: SqlClient.SqlClient) =>
  SqlSchema.findOne({
    Request: Schema.String,
    Result: ReservationRow,
    execute: (id) => sql`SELECT id, on_failure, state, limits, consumed FROM accounting_reservations WHERE id = ${id}`
  })

const encodeRow = (r: Reservation) => Schema.encode(ReservationRow)(rowFromReservation(r))

/**
 * The ReservationStore made by `makeBackend` on the database in context (its steps are the store's
 * Atomic transactions), after `migrate` applied `migrations`.
 */
export const reservationStoreLayer = <R>(
  migrate: (migrations: StoreMigrations) => Effect.Effect<void, StoreError, R>,
  migrations: StoreMigrations,
  makeBackend: (sql: SqlClient.SqlClient, atomic: AtomicService["transaction"]) => ReservationBackend
): Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient | Atomic | R> =>
  Layer.effect(
    ReservationStore,
    Effect.gen(function*() {
      yield* migrate(migrations)
      return makeBackend(yield* SqlClient.SqlClient, (yield* Atomic).transaction)
    })
  )

/** Reservations (and its ReservationStore) over `storeLayer`. */
export const reservationsLayer = <R>(
  storeLayer: Layer.Layer<ReservationStore, StoreError, R>
): Layer.Layer<Reservations | ReservationStore, StoreError, R> =>
  Core.layer.pipe(Layer.provideMerge(storeLayer))
