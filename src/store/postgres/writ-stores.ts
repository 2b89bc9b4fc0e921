// PostgreSQL Writ executor stores (spec section 9) for several worker processes serving one
// executor key: the same stores as the SQLite file (src/store/sqlite/writ-stores.ts), with the same
// row Schemas (src/store/sql/writ-rows.ts), on one schema that every worker opens. Every write
// made inside `Atomic.transaction` joins the worker's PostgreSQL transaction (src/store/sql/
// transaction.ts), so a pending entry and its count and total consumption commit together
// (section 7 steps 9 and 10); the admission gate of src/store/postgres/writ-gate.ts wraps each
// step in such a transaction with its locks.
//
// Differences from the SQLite stores, all for several workers:
//   - pending calls and begun reversals carry the worker running them (writ-worker.ts); recovery
//     claims only those of workers that are gone (`claimOrphans`, `markBegunUnknown`), and a
//     final tally is written only by the worker that holds the record, so a worker wrongly taken
//     for gone can never overwrite the answer another gave (replays stay byte-identical);
//   - orderings by identity use COLLATE "C" (bytes, as ASCII order requires: section 8.2, 10).
import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { ReservationStore } from "../../accounting/backend.js"
import type { Atomic, Reservations } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import type { Json } from "../../kernel/json.js"
import {
  AckStore,
  AuditLog,
  CallStore,
  DelegationStore,
  ReversalStore,
  RevokeStore,
  TallyStore,
  type WritStores,
  type WritStoreServices,
  writStoresContext
} from "../../writ/executor/stores.js"
import type { AdmissionGate } from "../../writ/executor/admission-gate.js"
import {
  acceptedFromRow,
  AckRow,
  ackFromRow,
  AuditRow,
  auditFromRow,
  callEntryFromRow,
  CallRow,
  heldFromRow,
  issuedFromRow,
  IssuedRow,
  ObjectRow,
  pendingRow,
  ReversalRow,
  reversalFromRow,
  StoredJson,
  TallyRow
} from "../sql/writ-rows.js"
import { layer as pgLayer, migrate, type PgLocation, type PgStoreOptions } from "./client.js"
import * as PgReservations from "./reservations.js"
import * as WritGate from "./writ-gate.js"
import { CALL_COLUMNS, migrations, TALLY_COLUMNS } from "./writ-migrations.js"
import * as Worker from "./writ-worker.js"
import type { WritWorkerService } from "./writ-worker.js"

/** Maps every failure of a store operation (driver errors and undecodable rows included) to the shared StoreError. */
const op = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, StoreError, R> =>
  Effect.mapError(self, storeError(name))

const encodeCall = Schema.encode(CallRow)
const encodeTally = Schema.encode(TallyRow)
const encodeIssued = Schema.encode(IssuedRow)
const encodeAck = Schema.encode(AckRow)
const json = Schema.encode(StoredJson)
const optionalJson = (v: Option.Option<Json>) => Option.isSome(v) ? Effect.map(json(v.value), (t): string | null => t) : Effect.succeed(null)
const none = Schema.Void
const calls = (sql: SqlClient.SqlClient) => sql.literal(CALL_COLUMNS)

export const makeCallStore = (sql: SqlClient.SqlClient, worker: WritWorkerService) => {
  const findOne = SqlSchema.findOne({
    Request: Schema.Struct({ leaf: Schema.String, id: Schema.String }),
    Result: CallRow,
    execute: ({ id, leaf }) => sql`SELECT ${calls(sql)} FROM writ_calls WHERE leaf = ${leaf} AND id = ${id}`
  })
  const findPending = SqlSchema.findAll({
    Request: none,
    Result: CallRow,
    execute: () => sql`SELECT ${calls(sql)} FROM writ_calls WHERE state = 'pending' ORDER BY seq`
  })
  const Workers = Schema.Array(Schema.Struct({ worker: Schema.NullOr(Schema.Number) }))
  // Claims every pending record whose worker is gone. Under READ COMMITTED an UPDATE that waits
  // on a row another claimer took re-reads it and skips it (its worker is no longer in `gone`),
  // so two workers starting at once never both resolve one record.
  const claim = SqlSchema.findAll({
    Request: Schema.Array(Schema.Number),
    Result: CallRow,
    execute: (gone) =>
      sql`WITH claimed AS (UPDATE writ_calls SET worker = ${worker.id} WHERE state = 'pending'
          AND (worker IS NULL OR worker = ANY(${gone as Array<number>}::integer[])) RETURNING *)
        SELECT ${calls(sql)} FROM claimed ORDER BY seq`
  })
  return CallStore.of({
    get: (leaf, id) => findOne({ leaf, id }).pipe(Effect.map(Option.map(callEntryFromRow)), op("writ.callStore.get")),
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
        if (rows.length !== 1) {
          return yield* Effect.fail(new Error(`call store: ${leaf}/${id} is not pending under worker ${worker.id}`))
        }
      }).pipe(op("writ.callStore.finalize")),
    pending: findPending(undefined).pipe(Effect.map((rows) => rows.map(acceptedFromRow)), op("writ.callStore.pending")),
    claimOrphans: Effect.gen(function*() {
      const held = yield* Effect.flatMap(
        sql`SELECT DISTINCT worker FROM writ_calls WHERE state = 'pending' AND worker IS NOT NULL AND worker <> ${worker.id}`,
        Schema.decodeUnknown(Workers)
      )
      const gone = yield* worker.gone(held.flatMap((r) => (r.worker === null ? [] : [r.worker])))
      // In acceptance order, as `pending`.
      return (yield* claim(gone)).map(acceptedFromRow)
    }).pipe(op("writ.callStore.claimOrphans"))
  })
}

export const makeTallyStore = (sql: SqlClient.SqlClient) => {
  const findOne = SqlSchema.findOne({
    Request: Schema.String,
    Result: TallyRow,
    execute: (id) => sql`SELECT ${sql.literal(TALLY_COLUMNS)} FROM writ_tallies t WHERE t.tally = ${id}`
  })
  // Ascending acc, ties in ascending tally identity as bytes (section 8.2).
  const under = (index: "writ_tally_writs" | "writ_tally_issuers", column: "writ" | "iss") =>
    SqlSchema.findAll({
      Request: Schema.String,
      Result: TallyRow,
      execute: (value) =>
        sql`SELECT ${sql.literal(TALLY_COLUMNS)} FROM ${sql(index)} x JOIN writ_tallies t ON t.tally = x.tally
          WHERE x.${sql(column)} = ${value} ORDER BY t.acc, t.tally COLLATE "C"`
    })
  const underWrit = under("writ_tally_writs", "writ")
  const underIssuer = under("writ_tally_issuers", "iss")
  return TallyStore.of({
    put: (h) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO writ_tallies ${sql.insert(yield* encodeTally(h))} ON CONFLICT DO NOTHING`
        const writs = [...new Set(h.chain)].map((writ) => ({ writ, tally: h.tally }))
        const keys = [...new Set(h.issuers)].map((iss) => ({ iss, tally: h.tally }))
        if (writs.length > 0) yield* sql`INSERT INTO writ_tally_writs ${sql.insert(writs)} ON CONFLICT DO NOTHING`
        if (keys.length > 0) yield* sql`INSERT INTO writ_tally_issuers ${sql.insert(keys)} ON CONFLICT DO NOTHING`
      }).pipe(op("writ.tallyStore.put")),
    get: (id) => findOne(id).pipe(Effect.map(Option.map(heldFromRow)), op("writ.tallyStore.get")),
    underWrit: (writ) => underWrit(writ).pipe(Effect.map((rows) => rows.map(heldFromRow)), op("writ.tallyStore.underWrit")),
    underIssuer: (iss) =>
      underIssuer(iss).pipe(Effect.map((rows) => rows.map(heldFromRow)), op("writ.tallyStore.underIssuer"))
  })
}

export const makeRevokeStore = (sql: SqlClient.SqlClient) =>
  RevokeStore.of({
    record: (r) =>
      sql`INSERT INTO writ_revokes ${
        sql.insert({ revoke: r.revoke, writ: r.writ, iss: r.iss, exp: r.exp, rcv: r.rcv })
      }`.pipe(Effect.asVoid, op("writ.revokeStore.record")),
    covers: (writs, issuers) =>
      Effect.map(
        sql`SELECT 1 AS hit FROM writ_revokes WHERE
          (writ <> '*' AND writ = ANY(${writs as Array<string>}::text[]))
          OR (writ = '*' AND iss = ANY(${issuers as Array<string>}::text[])) LIMIT 1`,
        (rows) => rows.length > 0
      ).pipe(op("writ.revokeStore.covers"))
  })

export const makeReversalStore = (sql: SqlClient.SqlClient, worker: WritWorkerService) => {
  const findOne = SqlSchema.findOne({
    Request: Schema.String,
    Result: ReversalRow,
    execute: (target) => sql`SELECT target, state, call, res FROM writ_reversals WHERE target = ${target}`
  })
  const Workers = Schema.Array(Schema.Struct({ worker: Schema.NullOr(Schema.Number) }))
  return ReversalStore.of({
    get: (target) => findOne(target).pipe(Effect.map(Option.map(reversalFromRow)), op("writ.reversalStore.get")),
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
    clear: (target) =>
      sql`DELETE FROM writ_reversals WHERE target = ${target}`.pipe(Effect.asVoid, op("writ.reversalStore.clear")),
    // Section 8.1 after a restart: only reversals whose worker is gone never report; a live
    // worker's are still running.
    markBegunUnknown: Effect.gen(function*() {
      const held = yield* Effect.flatMap(
        sql`SELECT DISTINCT worker FROM writ_reversals WHERE state = 'begun' AND worker IS NOT NULL AND worker <> ${worker.id}`,
        Schema.decodeUnknown(Workers)
      )
      const gone = yield* worker.gone(held.flatMap((r) => (r.worker === null ? [] : [r.worker])))
      const rows = yield* sql`UPDATE writ_reversals SET state = 'unknown', worker = NULL WHERE state = 'begun'
        AND (worker IS NULL OR worker = ANY(${gone as Array<number>}::integer[])) RETURNING target`
      return rows.length
    }).pipe(op("writ.reversalStore.markBegunUnknown"))
  })
}

export const makeDelegationStore = (sql: SqlClient.SqlClient) => {
  const Call = Schema.Struct({ leaf: Schema.String, id: Schema.String })
  const issuedFor = SqlSchema.findAll({
    Request: Call,
    Result: ObjectRow,
    execute: ({ id, leaf }) => sql`SELECT object FROM writ_issued WHERE leaf = ${leaf} AND id = ${id} ORDER BY seq`
  })
  const subsFor = SqlSchema.findAll({
    Request: Call,
    Result: ObjectRow,
    execute: ({ id, leaf }) => sql`SELECT object FROM writ_subs WHERE leaf = ${leaf} AND id = ${id} ORDER BY seq`
  })
  const issuedUnder = SqlSchema.findAll({
    Request: Schema.Struct({ writ: Schema.String, iss: Schema.String }),
    Result: IssuedRow,
    execute: ({ iss, writ }) =>
      writ === "*"
        ? sql`SELECT leaf, id, writ, hld, above, above_issuers, object FROM writ_issued
            WHERE jsonb_exists(above_issuers::jsonb, ${iss}) ORDER BY seq`
        : sql`SELECT leaf, id, writ, hld, above, above_issuers, object FROM writ_issued
            WHERE jsonb_exists(above::jsonb, ${writ}) ORDER BY seq`
  })
  return DelegationStore.of({
    recordIssued: (w) =>
      Effect.flatMap(
        encodeIssued({ ...w, above_issuers: w.aboveIssuers }),
        (row) => sql`INSERT INTO writ_issued ${sql.insert(row)} ON CONFLICT DO NOTHING`
      ).pipe(Effect.asVoid, op("writ.delegationStore.recordIssued")),
    recordSub: (s) =>
      Effect.flatMap(json(s.object), (object) =>
        sql`INSERT INTO writ_subs (leaf, id, sub_call, signer, object)
        VALUES (${s.leaf}, ${s.id}, ${s.subCall}, ${s.signer}, ${object})
        ON CONFLICT (leaf, id, sub_call, signer) DO UPDATE SET object = excluded.object`).pipe(
          Effect.asVoid,
          op("writ.delegationStore.recordSub")
        ),
    forCall: (leaf, id) =>
      Effect.all({ wrt: issuedFor({ leaf, id }), sub: subsFor({ leaf, id }) }).pipe(
        Effect.map(({ sub, wrt }) => ({ wrt: wrt.map((r) => r.object), sub: sub.map((r) => r.object) })),
        op("writ.delegationStore.forCall")
      ),
    issuedUnder: (writ, iss) =>
      issuedUnder({ writ, iss }).pipe(Effect.map((rows) => rows.map(issuedFromRow)), op("writ.delegationStore.issuedUnder"))
  })
}

export const makeAckStore = (sql: SqlClient.SqlClient) => {
  const forRevoke = SqlSchema.findAll({
    Request: Schema.String,
    Result: AckRow,
    execute: (revoke) => sql`SELECT * FROM writ_acks WHERE revoke = ${revoke} ORDER BY ack COLLATE "C"`
  })
  return AckStore.of({
    keep: (k) =>
      Effect.flatMap(encodeAck(k), (row) => sql`INSERT INTO writ_acks ${sql.insert(row)} ON CONFLICT DO NOTHING`).pipe(
        Effect.asVoid,
        op("writ.ackStore.keep")
      ),
    forRevoke: (revoke) => forRevoke(revoke).pipe(Effect.map((rows) => rows.map(ackFromRow)), op("writ.ackStore.forRevoke"))
  })
}

export const makeAuditLog = (sql: SqlClient.SqlClient) => {
  const readAll = SqlSchema.findAll({
    Request: none,
    Result: AuditRow,
    execute: () => sql`SELECT entry FROM writ_audit ORDER BY seq`
  })
  return AuditLog.of({
    append: (e) =>
      sql`INSERT INTO writ_audit (time, entry) VALUES (${e.time}, ${JSON.stringify(e)})`.pipe(
        Effect.asVoid,
        op("writ.auditLog.append")
      ),
    read: readAll(undefined).pipe(Effect.map((rows) => rows.map(auditFromRow)), op("writ.auditLog.read"))
  })
}

/** Every Writ store on `sql`, stamping `worker` on the records it runs. */
export const makeStores = (sql: SqlClient.SqlClient, worker: WritWorkerService): WritStoreServices => ({
  calls: makeCallStore(sql, worker),
  tallies: makeTallyStore(sql),
  revokes: makeRevokeStore(sql),
  reversals: makeReversalStore(sql, worker),
  delegations: makeDelegationStore(sql),
  acks: makeAckStore(sql),
  audit: makeAuditLog(sql)
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
  Layer.mergeAll(storesLayer, PgReservations.layer, WritGate.layer).pipe(Layer.provideMerge(pgLayer(options)))
