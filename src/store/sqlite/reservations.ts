// SQLite Reservations. Isolation: every operation is one SQLite transaction that holds the file's
// write lock from its first statement (client.ts), so the read-check-write of accounting/core.ts runs
// alone against the file, whichever process or connection made it. Amounts are stored as decimal
// text: they are bigints and may exceed SQLite's 64-bit integers (YEA amounts at a common scale).
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { type ReservationBackend, ReservationStore } from "../../accounting/backend.js"
import * as Core from "../../accounting/core.js"
import type { Reservation, Reservations } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import type { Migration } from "../sql/migrations.js"
import { makeTransaction, migrate } from "./client.js"
import { decodeRow, encodeRow, type ReservationRow } from "../sql/rows.js"

export const migrations: ReadonlyArray<Migration> = [{
  name: "accounting/001_reservations",
  statements: [
    "CREATE TABLE accounting_usage (key TEXT PRIMARY KEY, used TEXT NOT NULL)",
    `CREATE TABLE accounting_reservations (
      id TEXT PRIMARY KEY, on_failure TEXT NOT NULL, state TEXT NOT NULL,
      limits TEXT NOT NULL, consumed TEXT NOT NULL)`
  ]
}]

export const makeSqliteBackend = (sql: SqlClient.SqlClient): ReservationBackend => {
  const op = <A>(name: string, eff: Effect.Effect<A, unknown>): Effect.Effect<A, StoreError> =>
    Effect.mapError(eff, storeError(`reservations.${name}`))
  const readUsed = (key: string) =>
    Effect.map(
      sql<{ used: string }>`SELECT used FROM accounting_usage WHERE key = ${key}`,
      (rows) => (rows.length === 0 ? 0n : BigInt(rows[0].used))
    )
  return {
    atomic: makeTransaction(sql),
    // The transaction already holds the file's write lock: nothing more to serialize.
    lockId: () => Effect.void,
    load: (id) =>
      op("load", Effect.map(
        sql<ReservationRow>`SELECT id, on_failure, state, limits, consumed FROM accounting_reservations WHERE id = ${id}`,
        (rows) => (rows.length === 0 ? Option.none() : Option.some(decodeRow(rows[0])))
      )),
    lockUsage: (keys) =>
      op("lockUsage", Effect.map(
        Effect.forEach(keys, (k) => Effect.map(readUsed(k), (u) => [k, u] as const)),
        (pairs) => new Map(pairs)
      )),
    addUsage: (deltas) =>
      op("addUsage", Effect.forEach(deltas, ([key, delta]) =>
        Effect.flatMap(readUsed(key), (before) => {
          const after = (before + delta).toString()
          return sql`INSERT INTO accounting_usage (key, used) VALUES (${key}, ${after})
                     ON CONFLICT (key) DO UPDATE SET used = excluded.used`
        }), { discard: true })),
    insert: (r: Reservation) => {
      const row = encodeRow(r)
      return op("insert", sql`INSERT INTO accounting_reservations (id, on_failure, state, limits, consumed)
        VALUES (${row.id}, ${row.on_failure}, ${row.state}, ${row.limits}, ${row.consumed})`)
    },
    update: (r: Reservation) => {
      const row = encodeRow(r)
      return op("update", sql`UPDATE accounting_reservations SET state = ${row.state}, consumed = ${row.consumed}
        WHERE id = ${row.id}`)
    },
    used: (key) => op("used", readUsed(key))
  }
}

/** The SQLite ReservationStore on the database in context (SqliteStore.layer); applies its migrations. */
export const storeLayer: Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient> = Layer.effect(
  ReservationStore,
  Effect.gen(function*() {
    yield* migrate(migrations)
    return makeSqliteBackend(yield* SqlClient.SqlClient)
  })
)

/** Reservations (and its ReservationStore) on the SQLite database in context. */
export const layer: Layer.Layer<Reservations | ReservationStore, StoreError, SqlClient.SqlClient> = Core.layer.pipe(
  Layer.provideMerge(storeLayer)
)
