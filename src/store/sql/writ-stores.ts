// The Writ executor stores (spec section 9) on any SQL database, once: the SQLite file
// (src/store/sqlite/writ-stores.ts) and the PostgreSQL schema (src/store/postgres/writ-stores.ts)
// differ only in a small dialect (below) and in PostgreSQL's worker bookkeeping, which that module
// adds over these stores. The tables are the same on both (same names, same columns, the row
// Schemas of writ-rows.ts decode both), every table is append-or-update by key, and nothing is kept
// in process memory, so a restart sees exactly what was committed.
//
// JSON objects are stored as their RFC 8785 text and read back with the strict reader, so an
// answer from the store is byte for byte the answer first given (section 7 step 9).
import { type SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
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
  type WritStoreServices
} from "../../writ/executor/stores.js"
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
} from "./writ-rows.js"

/** What differs between the databases, as SQL text or fragments; everything else is shared. */
export interface WritDialect {
  /** SELECT lists the shared row Schemas decode (PostgreSQL reads its BIGINT columns as float8). */
  readonly columns: {
    readonly calls: string
    /** Of the tally table aliased `t`. */
    readonly tallies: string
    readonly reversals: string
    readonly issued: string
  }
  /** The column giving the calls' acceptance order (section 9 recovery resolves them in it). */
  readonly acceptanceOrder: string
  /** `column` ordered as bytes, the ASCII order of identities (sections 8.2, 10). */
  readonly bytes: (column: string) => string
  /** Inserts `rows` into `table`, leaving a row whose key is already there as it is. */
  readonly insertIgnore: (sql: SqlClient.SqlClient, table: string, rows: ReadonlyArray<Record<string, unknown>>) => Statement.Statement<object>
  /** `column` is one of `values` (possibly none). */
  readonly oneOf: (sql: SqlClient.SqlClient, column: string, values: ReadonlyArray<string>) => Statement.Fragment
  /** The JSON array (text) in `column` of `writ_issued` holds the string `value`. */
  readonly jsonArrayHas: (sql: SqlClient.SqlClient, column: "above" | "above_issuers", value: string) => Statement.Fragment
}

/** Maps every failure of a store operation (driver errors and undecodable rows included) to the shared StoreError. */
export const op = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, StoreError, R> =>
  Effect.mapError(self, storeError(name))

const encodeCall = Schema.encode(CallRow)
const encodeTally = Schema.encode(TallyRow)
const encodeIssued = Schema.encode(IssuedRow)
const encodeAck = Schema.encode(AckRow)
export const json = Schema.encode(StoredJson)
export const optionalJson = (v: Option.Option<Json>) =>
  Option.isSome(v) ? Effect.map(json(v.value), (t): string | null => t) : Effect.succeed(null)
const none = Schema.Void

/**
 * After a conditional finalize wrote nothing: false when the entry is there (resolved by another
 * process, section 9), a failure when it was never recorded.
 */
export const notPendingHere = (sql: SqlClient.SqlClient, leaf: string, id: string): Effect.Effect<false, unknown> =>
  Effect.flatMap(sql`SELECT 1 AS hit FROM writ_calls WHERE leaf = ${leaf} AND id = ${id}`, (rows) =>
    rows.length === 1 ? Effect.succeed(false as const) : Effect.fail(new Error(`call store: ${leaf}/${id} was never recorded`)))

export const makeCallStore = (sql: SqlClient.SqlClient, d: WritDialect) => {
  const calls = sql.literal(d.columns.calls)
  const findOne = SqlSchema.findOne({
    Request: Schema.Struct({ leaf: Schema.String, id: Schema.String }),
    Result: CallRow,
    execute: ({ id, leaf }) => sql`SELECT ${calls} FROM writ_calls WHERE leaf = ${leaf} AND id = ${id}`
  })
  const findPending = SqlSchema.findAll({
    Request: none,
    Result: CallRow,
    execute: () => sql`SELECT ${calls} FROM writ_calls WHERE state = 'pending' ORDER BY ${sql.literal(d.acceptanceOrder)}`
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
          res = ${yield* optionalJson(res)} WHERE leaf = ${leaf} AND id = ${id} AND state = 'pending' RETURNING id`
        return rows.length === 1 || (yield* notPendingHere(sql, leaf, id))
      }).pipe(op("writ.callStore.finalize")),
    pending: findPending(undefined).pipe(Effect.map((rows) => rows.map(acceptedFromRow)), op("writ.callStore.pending"))
  })
}

export const makeTallyStore = (sql: SqlClient.SqlClient, d: WritDialect) => {
  const tallies = sql.literal(d.columns.tallies)
  const findOne = SqlSchema.findOne({
    Request: Schema.String,
    Result: TallyRow,
    execute: (id) => sql`SELECT ${tallies} FROM writ_tallies t WHERE t.tally = ${id}`
  })
  // The tallies listed in one index table under one value: ascending acc, ties in ascending tally
  // identity as bytes (section 8.2).
  const under = (index: "writ_tally_writs" | "writ_tally_issuers", column: "writ" | "iss") =>
    SqlSchema.findAll({
      Request: Schema.String,
      Result: TallyRow,
      execute: (value) =>
        sql`SELECT ${tallies} FROM ${sql(index)} x JOIN writ_tallies t ON t.tally = x.tally
          WHERE x.${sql(column)} = ${value} ORDER BY t.acc, ${sql.literal(d.bytes("t.tally"))}`
    })
  const underWrit = under("writ_tally_writs", "writ")
  const underIssuer = under("writ_tally_issuers", "iss")
  return TallyStore.of({
    put: (h) =>
      Effect.gen(function*() {
        yield* d.insertIgnore(sql, "writ_tallies", [yield* encodeTally(h)])
        // One statement per index, every row at once.
        const writs = [...new Set(h.chain)].map((writ) => ({ writ, tally: h.tally }))
        const keys = [...new Set(h.issuers)].map((iss) => ({ iss, tally: h.tally }))
        if (writs.length > 0) yield* d.insertIgnore(sql, "writ_tally_writs", writs)
        if (keys.length > 0) yield* d.insertIgnore(sql, "writ_tally_issuers", keys)
      }).pipe(op("writ.tallyStore.put")),
    get: (id) => findOne(id).pipe(Effect.map(Option.map(heldFromRow)), op("writ.tallyStore.get")),
    underWrit: (writ) => underWrit(writ).pipe(Effect.map((rows) => rows.map(heldFromRow)), op("writ.tallyStore.underWrit")),
    underIssuer: (iss) =>
      underIssuer(iss).pipe(Effect.map((rows) => rows.map(heldFromRow)), op("writ.tallyStore.underIssuer"))
  })
}

export const makeRevokeStore = (sql: SqlClient.SqlClient, d: WritDialect) =>
  RevokeStore.of({
    record: (r) =>
      sql`INSERT INTO writ_revokes ${
        sql.insert({ revoke: r.revoke, writ: r.writ, iss: r.iss, exp: r.exp, rcv: r.rcv })
      }`.pipe(Effect.asVoid, op("writ.revokeStore.record")),
    covers: (writs, issuers) =>
      Effect.map(
        sql`SELECT 1 AS hit FROM writ_revokes WHERE
          (writ <> '*' AND ${d.oneOf(sql, "writ", writs)})
          OR (writ = '*' AND ${d.oneOf(sql, "iss", issuers)}) LIMIT 1`,
        (rows) => rows.length > 0
      ).pipe(op("writ.revokeStore.covers"))
  })

export const makeReversalStore = (sql: SqlClient.SqlClient, d: WritDialect) => {
  const findOne = SqlSchema.findOne({
    Request: Schema.String,
    Result: ReversalRow,
    execute: (target) => sql`SELECT ${sql.literal(d.columns.reversals)} FROM writ_reversals WHERE target = ${target}`
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
}

export const makeDelegationStore = (sql: SqlClient.SqlClient, d: WritDialect) => {
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
      sql`SELECT ${sql.literal(d.columns.issued)} FROM writ_issued WHERE ${
        writ === "*" ? d.jsonArrayHas(sql, "above_issuers", iss) : d.jsonArrayHas(sql, "above", writ)
      } ORDER BY seq`
  })
  return DelegationStore.of({
    recordIssued: (w) =>
      Effect.flatMap(
        encodeIssued({ ...w, above_issuers: w.aboveIssuers }),
        (row) => d.insertIgnore(sql, "writ_issued", [row])
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

export const makeAckStore = (sql: SqlClient.SqlClient, d: WritDialect) => {
  const forRevoke = SqlSchema.findAll({
    Request: Schema.String,
    Result: AckRow,
    execute: (revoke) => sql`SELECT * FROM writ_acks WHERE revoke = ${revoke} ORDER BY ${sql.literal(d.bytes("ack"))}`
  })
  return AckStore.of({
    keep: (k) =>
      Effect.flatMap(encodeAck(k), (row) => d.insertIgnore(sql, "writ_acks", [row])).pipe(
        Effect.asVoid,
        op("writ.ackStore.keep")
      ),
    forRevoke: (revoke) => forRevoke(revoke).pipe(Effect.map((rows) => rows.map(ackFromRow)), op("writ.ackStore.forRevoke"))
  })
}

/** How an audit entry written outside any step is committed (SQLite's group commit batches it). */
export type AuditWrite = <A, E>(self: Effect.Effect<A, E>) => Effect.Effect<A, E | StoreError>

export const makeAuditLog = (sql: SqlClient.SqlClient, write: AuditWrite = (self) => self) => {
  const readAll = SqlSchema.findAll({
    Request: none,
    Result: AuditRow,
    execute: () => sql`SELECT entry FROM writ_audit ORDER BY seq`
  })
  return AuditLog.of({
    append: (e) =>
      write(sql`INSERT INTO writ_audit (time, entry) VALUES (${e.time}, ${JSON.stringify(e)})`).pipe(
        Effect.asVoid,
        op("writ.auditLog.append")
      ),
    read: readAll(undefined).pipe(Effect.map((rows) => rows.map(auditFromRow)), op("writ.auditLog.read"))
  })
}

/** Every Writ store on `sql` in dialect `d`. */
export const makeStores = (sql: SqlClient.SqlClient, d: WritDialect, audit?: AuditWrite): WritStoreServices => ({
  calls: makeCallStore(sql, d),
  tallies: makeTallyStore(sql, d),
  revokes: makeRevokeStore(sql, d),
  reversals: makeReversalStore(sql, d),
  delegations: makeDelegationStore(sql, d),
  acks: makeAckStore(sql, d),
  audit: makeAuditLog(sql, audit)
})
