// SQLite Writ executor stores (spec section 9): one file, WAL, on the shared connection of
// src/store/sqlite/client.ts, so `Atomic.transaction` makes the call store's pending entry and the
// Reservations rows of the count and total stores one SQLite transaction (section 7 steps 9 and
// 10), and every other atomic step likewise. Every table is append-or-update by key; nothing here
// is kept in process memory, so a restart (a new connection on the same file) sees exactly what
// was committed.
//
// JSON objects are stored as their RFC 8785 text and read back with the strict reader, so an
// answer from the store is byte for byte the answer first given (section 7 step 9).
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
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
  writStoresContext
} from "../../writ/executor/stores.js"
import type { StoreMigrations } from "../sql/migrations.js"
import type { AdmissionGate } from "../../writ/executor/admission-gate.js"
import { migrate, SqliteStore, type SqliteStoreOptions } from "./client.js"
import * as GroupCommitLayer from "./group-commit.js"
import { GroupCommit, type GroupCommitOptions } from "./group-commit.js"
import * as SqliteReservations from "./reservations.js"
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

/**
 * IF NOT EXISTS: a store written before the Migrator already has these tables (recorded as
 * "writ/001_executor_stores").
 */
export const migrations: StoreMigrations = {
  table: "mandate_migrations_writ",
  migrations: {
    "1_executor_stores": [
      `CREATE TABLE IF NOT EXISTS writ_calls (
        leaf TEXT NOT NULL, id TEXT NOT NULL, call TEXT NOT NULL, op TEXT NOT NULL, acc INTEGER NOT NULL,
        standing INTEGER NOT NULL, chain TEXT NOT NULL, issuers TEXT NOT NULL, exp INTEGER NOT NULL,
        reservation TEXT, state TEXT NOT NULL, tally TEXT, res TEXT,
        PRIMARY KEY (leaf, id))`,
      `CREATE INDEX IF NOT EXISTS writ_calls_pending ON writ_calls (state)`,
      `CREATE TABLE IF NOT EXISTS writ_tallies (
        tally TEXT PRIMARY KEY, call TEXT NOT NULL, acc INTEGER NOT NULL, forward INTEGER NOT NULL,
        chain TEXT NOT NULL, issuers TEXT NOT NULL, object TEXT NOT NULL, res TEXT)`,
      `CREATE TABLE IF NOT EXISTS writ_tally_writs (writ TEXT NOT NULL, tally TEXT NOT NULL, PRIMARY KEY (writ, tally))`,
      `CREATE TABLE IF NOT EXISTS writ_tally_issuers (iss TEXT NOT NULL, tally TEXT NOT NULL, PRIMARY KEY (iss, tally))`,
      `CREATE TABLE IF NOT EXISTS writ_revokes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, revoke TEXT NOT NULL, writ TEXT NOT NULL, iss TEXT NOT NULL,
        exp INTEGER, rcv INTEGER NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS writ_revokes_writ ON writ_revokes (writ, iss)`,
      `CREATE TABLE IF NOT EXISTS writ_reversals (target TEXT PRIMARY KEY, state TEXT NOT NULL, call TEXT NOT NULL, res TEXT)`,
      `CREATE TABLE IF NOT EXISTS writ_issued (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, leaf TEXT NOT NULL, id TEXT NOT NULL, writ TEXT NOT NULL,
        hld TEXT NOT NULL, above TEXT NOT NULL, above_issuers TEXT NOT NULL, object TEXT NOT NULL,
        UNIQUE (leaf, id, writ))`,
      `CREATE TABLE IF NOT EXISTS writ_subs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, leaf TEXT NOT NULL, id TEXT NOT NULL, sub_call TEXT NOT NULL,
        signer TEXT NOT NULL, object TEXT NOT NULL, UNIQUE (leaf, id, sub_call, signer))`,
      `CREATE TABLE IF NOT EXISTS writ_acks (revoke TEXT NOT NULL, ack TEXT NOT NULL, object TEXT NOT NULL, res TEXT NOT NULL,
        PRIMARY KEY (revoke, ack))`,
      `CREATE TABLE IF NOT EXISTS writ_audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, entry TEXT NOT NULL)`
    ]
  }
}

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

export const makeCallStore = Effect.map(SqlClient.SqlClient, (sql) => {
  const findOne = SqlSchema.findOne({
    Request: Schema.Struct({ leaf: Schema.String, id: Schema.String }),
    Result: CallRow,
    execute: ({ id, leaf }) => sql`SELECT * FROM writ_calls WHERE leaf = ${leaf} AND id = ${id}`
  })
  const findPending = SqlSchema.findAll({
    Request: none,
    Result: CallRow,
    execute: () => sql`SELECT * FROM writ_calls WHERE state = 'pending' ORDER BY rowid`
  })
  return CallStore.of({
    get: (leaf, id) => findOne({ leaf, id }).pipe(Effect.map(Option.map(callEntryFromRow)), op("writ.callStore.get")),
    insertPending: (a) =>
      Effect.flatMap(encodeCall(pendingRow(a)), (row) => sql`INSERT INTO writ_calls ${sql.insert(row)}`).pipe(
        Effect.asVoid,
        op("writ.callStore.insertPending")
      ),
    finalize: (leaf, id, tally, res) =>
      Effect.gen(function*() {
        const rows = yield* sql`UPDATE writ_calls SET state = 'final', tally = ${yield* json(tally)},
          res = ${yield* optionalJson(res)} WHERE leaf = ${leaf} AND id = ${id} RETURNING id`
        if (rows.length !== 1) return yield* Effect.fail(new Error(`call store: ${leaf}/${id} was never recorded`))
      }).pipe(op("writ.callStore.finalize")),
    pending: findPending(undefined).pipe(Effect.map((rows) => rows.map(acceptedFromRow)), op("writ.callStore.pending"))
  })
})

export const makeTallyStore = Effect.map(SqlClient.SqlClient, (sql) => {
  const findOne = SqlSchema.findOne({
    Request: Schema.String,
    Result: TallyRow,
    execute: (id) => sql`SELECT * FROM writ_tallies WHERE tally = ${id}`
  })
  // The tallies listed in one index table under one value. SQLite's default BINARY collation
  // compares bytes: ASCII order for identities (section 8.2).
  const under = (index: "writ_tally_writs" | "writ_tally_issuers", column: "writ" | "iss") =>
    SqlSchema.findAll({
      Request: Schema.String,
      Result: TallyRow,
      execute: (value) =>
        sql`SELECT t.* FROM ${sql(index)} x JOIN writ_tallies t ON t.tally = x.tally
          WHERE x.${sql(column)} = ${value} ORDER BY t.acc, t.tally`
    })
  const underWrit = under("writ_tally_writs", "writ")
  const underIssuer = under("writ_tally_issuers", "iss")
  return TallyStore.of({
    put: (h) =>
      Effect.gen(function*() {
        yield* sql`INSERT OR IGNORE INTO writ_tallies ${sql.insert(yield* encodeTally(h))}`
        // One statement per index, every row at once.
        const writs = [...new Set(h.chain)].map((writ) => ({ writ, tally: h.tally }))
        const keys = [...new Set(h.issuers)].map((iss) => ({ iss, tally: h.tally }))
        if (writs.length > 0) yield* sql`INSERT OR IGNORE INTO writ_tally_writs ${sql.insert(writs)}`
        if (keys.length > 0) yield* sql`INSERT OR IGNORE INTO writ_tally_issuers ${sql.insert(keys)}`
      }).pipe(op("writ.tallyStore.put")),
    get: (id) => findOne(id).pipe(Effect.map(Option.map(heldFromRow)), op("writ.tallyStore.get")),
    underWrit: (writ) => underWrit(writ).pipe(Effect.map((rows) => rows.map(heldFromRow)), op("writ.tallyStore.underWrit")),
    underIssuer: (iss) =>
      underIssuer(iss).pipe(Effect.map((rows) => rows.map(heldFromRow)), op("writ.tallyStore.underIssuer"))
  })
})

export const makeRevokeStore = Effect.map(SqlClient.SqlClient, (sql) =>
  RevokeStore.of({
    record: (r) =>
      sql`INSERT INTO writ_revokes ${
        sql.insert({ revoke: r.revoke, writ: r.writ, iss: r.iss, exp: r.exp, rcv: r.rcv })
      }`.pipe(Effect.asVoid, op("writ.revokeStore.record")),
    covers: (writs, issuers) =>
      Effect.map(
        sql`SELECT 1 AS hit FROM writ_revokes WHERE
          (writ <> '*' AND writ IN ${sql.in(writs.length > 0 ? writs : [""])})
          OR (writ = '*' AND iss IN ${sql.in(issuers.length > 0 ? issuers : [""])}) LIMIT 1`,
        (rows) => rows.length > 0
      ).pipe(op("writ.revokeStore.covers"))
  }))

export const makeReversalStore = Effect.map(SqlClient.SqlClient, (sql) => {
  const findOne = SqlSchema.findOne({
    Request: Schema.String,
    Result: ReversalRow,
    execute: (target) => sql`SELECT * FROM writ_reversals WHERE target = ${target}`
  })
  return ReversalStore.of({
    get: (target) => findOne(target).pipe(Effect.map(Option.map(reversalFromRow)), op("writ.reversalStore.get")),
    begin: (target, call) =>
      sql`INSERT INTO writ_reversals (target, state, call, res) VALUES (${target}, 'begun', ${call}, NULL)
        ON CONFLICT (target) DO UPDATE SET state = 'begun', call = excluded.call, res = NULL`.pipe(
        Effect.asVoid,
        op("writ.reversalStore.begin")
      ),
    succeed: (target, call, res) =>
      Effect.flatMap(optionalJson(res), (text) =>
        sql`INSERT INTO writ_reversals (target, state, call, res) VALUES (${target}, 'succeeded', ${call}, ${text})
        ON CONFLICT (target) DO UPDATE SET state = 'succeeded', call = excluded.call, res = excluded.res`).pipe(
          Effect.asVoid,
          op("writ.reversalStore.succeed")
        ),
    clear: (target) =>
      sql`DELETE FROM writ_reversals WHERE target = ${target}`.pipe(Effect.asVoid, op("writ.reversalStore.clear")),
    markBegunUnknown: Effect.map(
      sql`UPDATE writ_reversals SET state = 'unknown' WHERE state = 'begun' RETURNING target`,
      (rows) => rows.length
    ).pipe(op("writ.reversalStore.markBegunUnknown"))
  })
})

export const makeDelegationStore = Effect.map(SqlClient.SqlClient, (sql) => {
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
        ? sql`SELECT * FROM writ_issued WHERE EXISTS
            (SELECT 1 FROM json_each(writ_issued.above_issuers) WHERE value = ${iss}) ORDER BY seq`
        : sql`SELECT * FROM writ_issued WHERE EXISTS
            (SELECT 1 FROM json_each(writ_issued.above) WHERE value = ${writ}) ORDER BY seq`
  })
  return DelegationStore.of({
    recordIssued: (w) =>
      Effect.flatMap(
        encodeIssued({ ...w, above_issuers: w.aboveIssuers }),
        (row) => sql`INSERT OR IGNORE INTO writ_issued ${sql.insert(row)}`
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
})

export const makeAckStore = Effect.map(SqlClient.SqlClient, (sql) => {
  const forRevoke = SqlSchema.findAll({
    Request: Schema.String,
    Result: AckRow,
    execute: (revoke) => sql`SELECT * FROM writ_acks WHERE revoke = ${revoke} ORDER BY ack`
  })
  return AckStore.of({
    keep: (k) =>
      Effect.flatMap(encodeAck(k), (row) => sql`INSERT OR IGNORE INTO writ_acks ${sql.insert(row)}`).pipe(
        Effect.asVoid,
        op("writ.ackStore.keep")
      ),
    forRevoke: (revoke) => forRevoke(revoke).pipe(Effect.map((rows) => rows.map(ackFromRow)), op("writ.ackStore.forRevoke"))
  })
})

export const makeAuditLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Under group commit an entry written outside any step joins the next batch (one fsync for many
  // entries, group-commit.ts); it is still written before the request it records is answered.
  const group = yield* Effect.serviceOption(GroupCommit)
  const batched = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | StoreError> =>
    Option.isSome(group) ? group.value.run(self) : self
  const readAll = SqlSchema.findAll({
    Request: none,
    Result: AuditRow,
    execute: () => sql`SELECT entry FROM writ_audit ORDER BY seq`
  })
  return AuditLog.of({
    append: (e) =>
      batched(sql`INSERT INTO writ_audit (time, entry) VALUES (${e.time}, ${JSON.stringify(e)})`).pipe(
        Effect.asVoid,
        op("writ.auditLog.append")
      ),
    read: readAll(undefined).pipe(Effect.map((rows) => rows.map(auditFromRow)), op("writ.auditLog.read"))
  })
})

/**
 * Every Writ store on the SQLite connection in context; applies this module's migrations first. With
 * a GroupCommit in context, audit entries written outside any step are batched.
 */
export const storesLayer: Layer.Layer<WritStores, StoreError, SqlClient.SqlClient> = Layer.effectContext(
  Effect.gen(function*() {
    yield* migrate(migrations)
    return writStoresContext({
      calls: yield* makeCallStore,
      tallies: yield* makeTallyStore,
      revokes: yield* makeRevokeStore,
      reversals: yield* makeReversalStore,
      delegations: yield* makeDelegationStore,
      acks: yield* makeAckStore,
      audit: yield* makeAuditLog
    })
  })
)

export type SqliteWritContext = WritStores | Reservations | Atomic | AdmissionGate | GroupCommit | SqlClient.SqlClient

export interface SqliteWritOptions extends SqliteStoreOptions {
  /** Group commit (group-commit.ts): how many steps one transaction may hold. Default 64. */
  readonly groupCommit?: GroupCommitOptions
}

/**
 * The whole embedded executor store on one SQLite file (WAL): every Writ store, Reservations for
 * the count and total stores, and the Atomic boundary they share, which is group commit: every
 * atomic step and every admission (the AdmissionGate) joins the next batch, one transaction and one
 * fsync for up to 64 of them (group-commit.ts).
 */
export const layer = (
  filename: string,
  options: SqliteWritOptions = {}
): Layer.Layer<SqliteWritContext, StoreError> =>
  Layer.mergeAll(storesLayer, SqliteReservations.layer).pipe(
    Layer.provideMerge(GroupCommitLayer.layer(options.groupCommit ?? {})),
    Layer.provideMerge(SqliteStore.layer(filename, options))
  )
