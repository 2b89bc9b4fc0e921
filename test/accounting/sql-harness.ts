// What the SQL Reservations suites (sqlite.test.ts, postgres.test.ts) share: the caller's own
// table, written inside Atomic.transaction to show that the caller's write and the reserve are one
// step, and the Harness built around a store's Layer.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { ReservationStore } from "../../src/accounting/backend.js"
import type { Atomic, Reservations } from "../../src/accounting/reservations.js"
import type { StoreError } from "../../src/accounting/store-error.js"
import type { StoreMigrations } from "../../src/store/sql/migrations.js"
import type { Harness } from "./suite.js"

const callerRows: StoreMigrations = {
  table: "mandate_migrations_test_caller",
  migrations: { "1_caller_rows": ["CREATE TABLE caller_rows (name TEXT PRIMARY KEY)"] }
}

/** `reservations` and the caller's table, both on the database `client` opens. */
export const withCallerTable = <RS, RC, R extends RC>(
  reservations: Layer.Layer<RS, StoreError, R>,
  migrate: (migrations: StoreMigrations) => Effect.Effect<void, StoreError, R>,
  client: Layer.Layer<RC, StoreError>
) => Layer.mergeAll(reservations, Layer.effectDiscard(migrate(callerRows))).pipe(Layer.provideMerge(client))

/** The Harness of a SQL store whose `layer` was made by `withCallerTable`. */
export const sqlHarness = (options: {
  readonly name: string
  readonly layer: Layer.Layer<SqlClient.SqlClient | ReservationStore | Reservations | Atomic, StoreError>
  readonly propertyRuns: number
}): Harness<SqlClient.SqlClient | ReservationStore> => ({
  name: options.name,
  layer: options.layer,
  backend: ReservationStore,
  callerWrite: (name) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO caller_rows (name) VALUES (${name})`).pipe(
      Effect.asVoid,
      Effect.orDie
    ),
  callerHas: (name) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT name FROM caller_rows WHERE name = ${name}`).pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    ),
  propertyRuns: options.propertyRuns,
  racers: 50
})
