// PostgreSQL Reservations, for many workers (processes) sharing one store. Isolation, inside one
// READ COMMITTED transaction per step:
//   1. pg_advisory_xact_lock on the reservation id, so two steps on one id run one after the other
//      (the second sees the first's committed reservation and answers it as a replay);
//   2. one upsert that creates missing usage rows and row-locks every key of the request, in sorted
//      key order (the same order in every transaction, so reserves cannot deadlock each other), and
//      returns the latest committed consumption;
//   3. the check in accounting/core.ts, then the writes, then COMMIT releases the locks.
// A waiter on a row lock re-reads the row after the holder commits, so two reserves can never both
// take the last unit. Amounts are NUMERIC (exact, unbounded) exchanged as decimal strings.
import type { SqlClient } from "@effect/sql"
import { Effect, type Layer } from "effect"
import type { ReservationBackend, ReservationStore } from "../../accounting/backend.js"
import type { Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import type { Migration } from "../sql/migrations.js"
import {
  reservationMigrations,
  reservationOp as op,
  reservationRowOps,
  reservationsLayer,
  reservationStoreLayer
} from "../sql/reservations.js"
import { makeTransaction, migrate } from "./client.js"

export const migrations: ReadonlyArray<Migration> = reservationMigrations("NUMERIC")

export const makePgBackend = (sql: SqlClient.SqlClient): ReservationBackend => ({
  atomic: makeTransaction(sql),
  lockId: (id) => op("lockId", sql`SELECT pg_advisory_xact_lock(hashtextextended(${id}, 0))`.pipe(Effect.asVoid)),
  ...reservationRowOps(sql),
  lockUsage: (keys) =>
    keys.length === 0 ? Effect.succeed(new Map()) : op("lockUsage", Effect.map(
      // DO UPDATE (not DO NOTHING) so existing rows are row-locked too; input order = lock order.
      sql<{ key: string; used: string }>`
        INSERT INTO accounting_usage (key, used)
        SELECT k, 0 FROM unnest(${keys}::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n
        ON CONFLICT (key) DO UPDATE SET used = accounting_usage.used
        RETURNING key, used::text AS used`,
      (rows) => new Map(rows.map((r) => [r.key, BigInt(r.used)] as const))
    )),
  addUsage: (deltas) =>
    deltas.length === 0 ? Effect.void : op("addUsage", sql`
      UPDATE accounting_usage AS u SET used = u.used + d.delta
      FROM unnest(${deltas.map(([k]) => k)}::text[], ${deltas.map(([, d]) => d.toString())}::numeric[]) AS d(key, delta)
      WHERE u.key = d.key`.pipe(Effect.asVoid)),
  used: (key) =>
    op("used", Effect.map(
      sql<{ used: string }>`SELECT used::text AS used FROM accounting_usage WHERE key = ${key}`,
      (rows) => (rows.length === 0 ? 0n : BigInt(rows[0].used))
    ))
})

/** The PostgreSQL ReservationStore on the database in context (PgStore.layer); applies its migrations. */
export const storeLayer: Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient> = reservationStoreLayer(
  migrate,
  migrations,
  makePgBackend
)

/** Reservations (and its ReservationStore) on the PostgreSQL database in context. */
export const layer: Layer.Layer<Reservations | ReservationStore, StoreError, SqlClient.SqlClient> = reservationsLayer(storeLayer)
