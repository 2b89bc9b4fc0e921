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
import { Effect, type Layer, Option, Schema } from "effect"
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
import { UsageRow } from "../sql/rows.js"
import { migrate, type PgLocation } from "./client.js"

export const migrations: StoreMigrations = reservationMigrations("NUMERIC")

const LockedUsage = Schema.Array(Schema.extend(Schema.Struct({ key: Schema.String }), UsageRow))

export const makePgBackend = (sql: SqlClient.SqlClient, atomic: AtomicService["transaction"]): ReservationBackend => ({
  atomic,
  lockId: (id) => op("lockId", sql`SELECT pg_advisory_xact_lock(hashtextextended(${id}, 0))`.pipe(Effect.asVoid)),
  ...reservationRowOps(sql),
  lockUsage: (keys) =>
    keys.length === 0 ? Effect.succeed(new Map()) : op("lockUsage", Effect.map(
      // DO UPDATE (not DO NOTHING) so existing rows are row-locked too; input order = lock order.
      Effect.flatMap(
        sql`
        INSERT INTO accounting_usage (key, used)
        SELECT k, 0 FROM unnest(${keys}::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n
        ON CONFLICT (key) DO UPDATE SET used = accounting_usage.used
        RETURNING key, used::text AS used`,
        Schema.decodeUnknown(LockedUsage)
      ),
      (rows) => new Map(rows.map((r) => [r.key, r.used] as const))
    )),
  addUsage: (deltas) =>
    deltas.length === 0 ? Effect.void : op("addUsage", sql`
      UPDATE accounting_usage AS u SET used = u.used + d.delta
      FROM unnest(${deltas.map(([k]) => k)}::text[], ${deltas.map(([, d]) => d.toString())}::numeric[]) AS d(key, delta)
      WHERE u.key = d.key`.pipe(Effect.asVoid)),
  used: (key) =>
    op("used", Effect.map(
      usageReader((k) => sql`SELECT used::text AS used FROM accounting_usage WHERE key = ${k}`)(key),
      Option.match({ onNone: () => 0n, onSome: (r) => r.used })
    ))
})

/** The PostgreSQL ReservationStore on the database in context (PgStore.layer); applies its migrations. */
export const storeLayer: Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient | PgLocation | Atomic> = reservationStoreLayer(
  migrate,
  migrations,
  makePgBackend
)

/** Reservations (and its ReservationStore) on the PostgreSQL database in context. */
export const layer: Layer.Layer<Reservations | ReservationStore, StoreError, SqlClient.SqlClient | PgLocation | Atomic> = reservationsLayer(storeLayer)
