// PostgreSQL Writ executor stores (spec section 9) for several worker processes serving one
// executor key: the stores of src/store/sql/writ-stores.ts (shared with the SQLite file) in
// PostgreSQL's dialect, with the same row Schemas (src/store/sql/writ-rows.ts), on one schema that
// every worker opens. Every write made inside `Atomic.transaction` joins the worker's PostgreSQL
// transaction (src/store/sql/transaction.ts), so a pending entry and its count and total
// consumption commit together (section 7 steps 9 and 10); the admission gate of
// src/store/postgres/writ-gate.ts wraps each step in such a transaction with its locks.
//
// Differences from the SQLite stores, all for several workers:
//   - pending calls and begun reversals carry the worker running them (writ-worker.ts); recovery
//     claims only those of workers that are gone (`claimOrphans`, `markBegunUnknown`), and a
//     final tally is written only by the worker that holds the record, so a worker wrongly taken
//     for gone can never overwrite the answer another gave (replays stay byte-identical);
//   - orderings by identity use COLLATE "C" (bytes, as ASCII order requires: section 8.2, 10).
import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import type { ReservationStore } from "../../accounting/backend.js"
import type { Atomic, Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import {
  type CallStoreService,
  type ReversalStoreService,
  type WritStores,
  type WritStoreServices,
  writStoresContext
} from "../../writ/executor/stores.js"
import type { AdmissionGate } from "../../writ/executor/admission-gate.js"
import { acceptedFromRow, CallRow, pendingRow } from "../sql/writ-rows.js"
import * as Shared from "../sql/writ-stores.js"
import { json, op, optionalJson, type WritDialect } from "../sql/writ-stores.js"
import { layer as pgLayer, migrate, type PgLocation, type PgStoreOptions } from "./client.js"
import * as PgReservations from "./reservations.js"
import * as WritGate from "./writ-gate.js"
import { CALL_COLUMNS, migrations, TALLY_COLUMNS } from "./writ-migrations.js"
import * as Worker from "./writ-worker.js"
import type { WritWorkerService } from "./writ-worker.js"

/**
 * PostgreSQL's dialect: BIGINT columns read as float8 (writ-migrations.ts), acceptance in `seq`
 * order, identities ordered COLLATE "C", `ON CONFLICT DO NOTHING`, `= ANY(array)` and `jsonb_exists`
 * over the JSON array text.
 */
export const dialect: WritDialect = {
  columns: { calls: CALL_COLUMNS, tallies: TALLY_COLUMNS, reversals: "target, state, call, res", issued: "leaf, id, writ, hld, above, above_issuers, object" },
  acceptanceOrder: "seq",
  bytes: (column) => `${column} COLLATE "C"`,
  insertIgnore: (sql, table, rows) => sql`INSERT INTO ${sql(table)} ${sql.insert(rows)} ON CONFLICT DO NOTHING`,
  oneOf: (sql, column, values) => sql`${sql(column)} = ANY(${values as Array<string>}::text[])`,
  jsonArrayHas: (sql, column, value) => sql`jsonb_exists(${sql(column)}::jsonb, ${value})`
}

const encodeCall = Schema.encode(CallRow)
const Workers = Schema.Array(Schema.Struct({ worker: Schema.NullOr(Schema.Number) }))

/** The workers other than this one holding records of `table` in `state` that are gone. */
const goneHolders = (sql: SqlClient.SqlClient, worker: WritWorkerService, table: "writ_calls" | "writ_reversals", state: string) =>
  Effect.gen(function*() {
    const held = yield* Effect.flatMap(
      sql`SELECT DISTINCT worker FROM ${sql(table)} WHERE state = ${state} AND worker IS NOT NULL AND worker <> ${worker.id}`,
      Schema.decodeUnknown(Workers)
    )
    return yield* worker.gone(held.flatMap((r) => (r.worker === null ? [] : [r.worker])))
  })

/** The call store, its pending records stamped with `worker` and claimed from workers that are gone. */
export const makeCallStore = (sql: SqlClient.SqlClient, worker: WritWorkerService): CallStoreService => {
  // Claims every pending record whose worker is gone. Under READ COMMITTED an UPDATE that waits
  // on a row another claimer took re-reads it and skips it (its worker is no longer in `gone`),
  // so two workers starting at once never both resolve one record.
  const claim = SqlSchema.findAll({
    Request: Schema.Array(Schema.Number),
    Result: CallRow,
    execute: (gone) =>
      sql`WITH claimed AS (UPDATE writ_calls SET worker = ${worker.id} WHERE state = 'pending'
          AND (worker IS NULL OR worker = ANY(${gone as Array<number>}::integer[])) RETURNING *)
        SELECT ${sql.literal(CALL_COLUMNS)} FROM claimed ORDER BY seq`
  })
  return {
    ...Shared.makeCallStore(sql, dialect),
    insertPending: (a) =>
      Effect.flatMap(
        encodeCall(pendingRow(a)),
        (row) => sql`INSERT INTO writ_calls ${sql.insert({ ...row, worker: worker.id })}`
      ).pipe(Effect.asVoid, op("writ.callStore.insertPending")),
    finalize: (leaf, id, tally, res) =>
      Effect.gen(function*() {
        const rows = yield* sql`UPDATE writ_calls SET state = 'final', tally = ${yield* json(tally)},
          res = ${yield* optionalJson(res)}
          WHERE leaf = ${leaf} AND id = ${id} AND state = 'pending' AND worker = ${worker.id} RETURNING id`
        // Not held by this worker any more: another resolved it (its answer is the one to give).
        return rows.length === 1 || (yield* Shared.notPendingHere(sql, leaf, id))
      }).pipe(op("writ.callStore.finalize")),
    claimOrphans: Effect.gen(function*() {
      const gone = yield* goneHolders(sql, worker, "writ_calls", "pending")
      // In acceptance order, as `pending`.
      return (yield* claim(gone)).map(acceptedFromRow)
    }).pipe(op("writ.callStore.claimOrphans"))
  }
}

/** The reversal store, its begun reversals stamped with `worker`. */
export const makeReversalStore = (sql: SqlClient.SqlClient, worker: WritWorkerService): ReversalStoreService => ({
  ...Shared.makeReversalStore(sql, dialect),
  begin: (target, call) =>
    sql`INSERT INTO writ_reversals (target, state, call, res, worker) VALUES (${target}, 'begun', ${call}, NULL, ${worker.id})
      ON CONFLICT (target) DO UPDATE SET state = 'begun', call = excluded.call, res = NULL, worker = excluded.worker`.pipe(
      Effect.asVoid,
      op("writ.reversalStore.begin")
    ),
  succeed: (target, call, res) =>
    Effect.flatMap(optionalJson(res), (text) =>
      sql`INSERT INTO writ_reversals (target, state, call, res) VALUES (${target}, 'succeeded', ${call}, ${text})
      ON CONFLICT (target) DO UPDATE SET state = 'succeeded', call = excluded.call, res = excluded.res, worker = NULL`).pipe(
        Effect.asVoid,
        op("writ.reversalStore.succeed")
      ),
  // Section 8.1 after a restart: only reversals whose worker is gone never report; a live
  // worker's are still running.
  markBegunUnknown: Effect.gen(function*() {
    const gone = yield* goneHolders(sql, worker, "writ_reversals", "begun")
    const rows = yield* sql`UPDATE writ_reversals SET state = 'unknown', worker = NULL WHERE state = 'begun'
      AND (worker IS NULL OR worker = ANY(${gone as Array<number>}::integer[])) RETURNING target`
    return rows.length
  }).pipe(op("writ.reversalStore.markBegunUnknown"))
})

/** Every Writ store on `sql`, stamping `worker` on the records it runs. */
export const makeStores = (sql: SqlClient.SqlClient, worker: WritWorkerService): WritStoreServices => ({
  ...Shared.makeStores(sql, dialect),
  calls: makeCallStore(sql, worker),
  reversals: makeReversalStore(sql, worker)
})

/**
 * Every Writ store on the database in context, after this module's migrations, and this process's
 * worker identity (held until the Layer is released).
 */
export const storesLayer: Layer.Layer<WritStores | Worker.WritWorker, StoreError, SqlClient.SqlClient | PgLocation> =
  Layer.scopedContext(Effect.gen(function*() {
    yield* migrate(migrations)
    const sql = yield* SqlClient.SqlClient
    const worker = yield* Worker.make
    return Context.add(writStoresContext(makeStores(sql, worker)), Worker.WritWorker, worker)
  }))

export type PgWritContext =
  | WritStores
  | Worker.WritWorker
  | Reservations
  | ReservationStore
  | Atomic
  | AdmissionGate
  | SqlClient.SqlClient
  | PgLocation

/**
 * One worker's whole executor store on PostgreSQL: every Writ store, Reservations for the count and
 * total stores, the Atomic boundary they share and the admission gate that lets several workers
 * serve one executor key.
 */
export const layer = (options: PgStoreOptions = {}): Layer.Layer<PgWritContext, StoreError> =>
  Layer.provideMerge(WritGate.layer, Layer.mergeAll(storesLayer, PgReservations.layer)).pipe(Layer.provideMerge(pgLayer(options)))
