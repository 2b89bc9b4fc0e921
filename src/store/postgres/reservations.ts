// PostgreSQL Reservations, for many workers (processes) sharing one store. Isolation, at READ
// COMMITTED (each statement of a step sees what committed before it):
//   1. pg_advisory_xact_lock on the reservation id, so two steps on one id run one after the other
//      (the second sees the first's committed reservation and answers it as a replay);
//   2. one upsert that creates missing usage rows and row-locks every key of the request, in sorted
//      key order (the same order in every transaction, so reserves cannot deadlock each other);
//   3. the rule of accounting/core.ts on the latest committed consumption, then the writes, then
//      COMMIT releases the locks.
// A waiter on a row lock re-reads the row after the holder commits, so two reserves can never both
// take the last unit. Amounts are NUMERIC (exact, unbounded) exchanged as decimal strings.
//
// Reserve is one statement, `SELECT accounting_reserve(...)` (the function is a migration): steps
// 1-3 run on the server, in autocommit when the caller has no Atomic step open (the statement is its
// own transaction) and inside the caller's step otherwise. Measured on the composed step (`npm
// run bench -- reserve --diagnose`): 7 round trips per reserve (BEGIN, the id lock, the
// idempotency read, the lock upsert, the usage update, the insert, COMMIT), two tuple versions of
// the hot row per reserve, and the hot row locked across four of the round trips: 74% of the
// backends' samples waited on the lock holder's transaction (Lock:transactionid), 16% were the holder
// idle in transaction, waiting for the client's next statement. Now the lock is held from the upsert
// to the end of the statement's own commit, with no round trip inside, and the reservation row is
// written before the limit rows are locked. The holder then spent most of its hold flushing its
// COMMIT (IO:WALSync): a row takes one reserve per WAL flush, so reserves made outside any caller's
// step are batched, one statement and one flush for all that queued together (reserve-batch.ts).
// Settlement stays the composed step: it is not the path whose throughput one hot limit caps.
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { type ReservationBackend, ReservationStore } from "../../accounting/backend.js"
import { Atomic, type AtomicService, type Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import type { StoreMigrations } from "../sql/migrations.js"
import {
  reservationMigrations,
  reservationOp as op,
  reservationRowOps,
  reservationsLayer,
  usageReader
} from "../sql/reservations.js"
import { UsageRow } from "../sql/rows.js"
import { migrate, type PgLocation } from "./client.js"
import { batchedReserveStep, reserveBatchFunctions } from "./reserve-batch.js"
import { reserveFunction, singleReserveStep } from "./reserve-step.js"

export const migrations: StoreMigrations = {
  table: reservationMigrations("NUMERIC").table,
  migrations: {
    ...reservationMigrations("NUMERIC").migrations,
    "2_reserve_function": [reserveFunction],
    "3_reserve_batch": reserveBatchFunctions
  }
}

const LockedUsage = Schema.Array(Schema.extend(Schema.Struct({ key: Schema.String }), UsageRow))

export const makePgBackend = (
  sql: SqlClient.SqlClient,
  atomic: AtomicService["transaction"],
  reserveStep: ReservationBackend["reserveStep"] = singleReserveStep(sql)
): ReservationBackend => ({
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
    )),
  reserveStep
})

/**
 * The PostgreSQL ReservationStore on the database in context (PgStore.layer); applies its
 * migrations. A reserve inside a caller's Atomic step joins it as one statement; outside any, it
 * is batched with the reserves made at the same time (reserve-batch.ts, whose fiber this Layer owns).
 */
export const storeLayer: Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient | PgLocation | Atomic> = Layer.scoped(
  ReservationStore,
  Effect.gen(function*() {
    yield* migrate(migrations)
    const sql = yield* SqlClient.SqlClient
    const single = singleReserveStep(sql)
    const batched = yield* batchedReserveStep(sql, single)
    return makePgBackend(sql, (yield* Atomic).transaction, (r) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) => Option.isSome(open) ? single(r) : batched(r)))
  })
)

/** Reservations (and its ReservationStore) on the PostgreSQL database in context. */
export const layer: Layer.Layer<Reservations | ReservationStore, StoreError, SqlClient.SqlClient | PgLocation | Atomic> = reservationsLayer(storeLayer)
