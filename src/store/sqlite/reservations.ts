// SQLite Reservations. Isolation: every operation is one SQLite transaction that holds the file's
// write lock from its first statement (client.ts), so the read-check-write of accounting/core.ts runs
// alone against the file, whichever process or connection made it. Amounts are stored as decimal
// text: they are bigints and may exceed SQLite's 64-bit integers (YEA amounts at a common scale).
import type { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, type Layer, Option } from "effect"
import type { ReservationBackend, ReservationStore } from "../../accounting/backend.js"
import type { Atomic, AtomicService, Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import type { StoreMigrations } from "../sql/migrations.js"
import {
  reservationMigrations,
  reservationOp as op,
  reservationRowOps,
  reservationsLayer,
  reservationStoreLayer,
  usageReader
} from "../sql/reservations.js"
import { migrate } from "./client.js"

export const migrations: StoreMigrations = reservationMigrations("TEXT")

export const makeSqliteBackend = (sql: SqlClient.SqlClient, atomic: AtomicService["transaction"]): ReservationBackend => {
  const findUsed = usageReader((key) => sql`SELECT used FROM accounting_usage WHERE key = ${key}`)
  const readUsed = (key: string) => Effect.map(findUsed(key), Option.match({ onNone: () => 0n, onSome: (r) => r.used }))
  return {
    atomic,
    // The transaction already holds the file's write lock: nothing more to serialize.
    lockId: () => Effect.void,
    ...reservationRowOps(sql),
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
    used: (key) => op("used", readUsed(key))
  }
}

/** The SQLite ReservationStore on the database in context (SqliteStore.layer); applies its migrations. */
export const storeLayer: Layer.Layer<
  ReservationStore,
  StoreError,
  SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic
> = reservationStoreLayer(
  migrate,
  migrations,
  makeSqliteBackend
)

/** Reservations (and its ReservationStore) on the SQLite database in context. */
export const layer: Layer.Layer<
  Reservations | ReservationStore,
  StoreError,
  SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic
> = reservationsLayer(storeLayer)
