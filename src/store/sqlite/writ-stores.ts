// SQLite Writ executor stores (spec section 9): one file, WAL, on the shared connection of
// src/store/sqlite/client.ts, so `Atomic.transaction` makes the call store's pending entry and the
// Reservations rows of the count and total stores one SQLite transaction (section 7 steps 9 and
// 10), and every other atomic step likewise. Every table is append-or-update by key; nothing here
// is kept in process memory, so a restart (a new connection on the same file) sees exactly what
// was committed.
//
// JSON objects are stored as their RFC 8785 text and read back with the strict reader, so an
// answer from the store is byte for byte the answer first given (section 7 step 9).
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer, Option } from "effect"
import type { Atomic, Reservations } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import { encodeCanonical } from "../../kernel/canonical.js"
import { type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import {
  AckStore,
  type AcceptedCall,
  type AuditEntry,
  AuditLog,
  type CallEntry,
  CallStore,
  DelegationStore,
  type HeldTally,
  type IssuedWrit,
  type KeptAck,
  type Reversal,
  ReversalStore,
  RevokeStore,
  TallyStore,
  type WritStores,
  writStoresContext
} from "../../writ/executor/stores.js"
import type { StoreMigrations } from "../sql/migrations.js"
import { migrate, SqliteStore, type SqliteStoreOptions } from "./client.js"
import * as SqliteReservations from "./reservations.js"

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

const text = (v: Json): string => encodeCanonical(v, "utf16")
/** Reads back JSON this module wrote; anything else is a corrupt store. */
const json = (operation: string, s: string): Effect.Effect<Json, StoreError> => {
  const parsed = parseJson(s, { integersOnly: false, maxDepth: 4096 })
  return Either.isRight(parsed)
    ? Effect.succeed(parsed.right)
    : Effect.fail(storeError(operation)(new Error(`stored JSON does not parse: ${parsed.left.message}`)))
}
const object = (operation: string, s: string) => Effect.map(json(operation, s), (v) => v as JsonObject)
const strings = (operation: string, s: string) => Effect.map(json(operation, s), (v) => v as ReadonlyArray<string>)
const optionalJson = (operation: string, s: string | null): Effect.Effect<Option.Option<Json>, StoreError> =>
  s === null ? Effect.succeed(Option.none()) : Effect.map(json(operation, s), Option.some)
const optionalText = (v: Option.Option<Json>): string | null => (Option.isSome(v) ? text(v.value) : null)

type Row = Record<string, unknown>
const str = (r: Row, k: string) => r[k] as string
const num = (r: Row, k: string) => Number(r[k])
const nstr = (r: Row, k: string) => (r[k] === null || r[k] === undefined ? null : (r[k] as string))

/** Maps every failure of a store operation (driver errors included) to the shared StoreError. */
const op = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, StoreError, R> =>
  Effect.mapError(self, (e) =>
    typeof e === "object" && e !== null && (e as { _tag?: string })._tag === "StoreError"
      ? (e as unknown as StoreError)
      : storeError(name)(e))

const acceptedFrom = (r: Row) =>
  Effect.gen(function*() {
    const accepted: AcceptedCall = {
      leaf: str(r, "leaf"),
      id: str(r, "id"),
      call: str(r, "call"),
      op: str(r, "op"),
      acc: num(r, "acc"),
      standing: num(r, "standing") === 1,
      chain: yield* strings("writ.callStore.read", str(r, "chain")),
      issuers: yield* strings("writ.callStore.read", str(r, "issuers")),
      exp: num(r, "exp"),
      reservation: nstr(r, "reservation")
    }
    return accepted
  })

export const makeCallStore = Effect.map(SqlClient.SqlClient, (sql) =>
  CallStore.of({
    get: (leaf, id) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT * FROM writ_calls WHERE leaf = ${leaf} AND id = ${id}`
        if (rows.length === 0) return Option.none<CallEntry>()
        const r = rows[0]
        const accepted = yield* acceptedFrom(r)
        if (str(r, "state") === "pending") return Option.some<CallEntry>({ state: "pending", accepted })
        return Option.some<CallEntry>({
          state: "final",
          accepted,
          tally: yield* object("writ.callStore.get", str(r, "tally")),
          res: yield* optionalJson("writ.callStore.get", nstr(r, "res"))
        })
      }).pipe(op("writ.callStore.get")),
    insertPending: (a) =>
      sql`INSERT INTO writ_calls ${
        sql.insert({
          leaf: a.leaf,
          id: a.id,
          call: a.call,
          op: a.op,
          acc: a.acc,
          standing: a.standing ? 1 : 0,
          chain: JSON.stringify(a.chain),
          issuers: JSON.stringify(a.issuers),
          exp: a.exp,
          reservation: a.reservation,
          state: "pending",
          tally: null,
          res: null
        })
      }`.pipe(Effect.asVoid, op("writ.callStore.insertPending")),
    finalize: (leaf, id, tally, res) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`UPDATE writ_calls SET state = 'final', tally = ${text(tally)},
          res = ${optionalText(res)} WHERE leaf = ${leaf} AND id = ${id} RETURNING id`
        if (rows.length !== 1) return yield* Effect.fail(new Error(`call store: ${leaf}/${id} was never recorded`))
      }).pipe(op("writ.callStore.finalize")),
    pending: Effect.gen(function*() {
      const rows = yield* sql<Row>`SELECT * FROM writ_calls WHERE state = 'pending' ORDER BY rowid`
      return yield* Effect.forEach(rows, acceptedFrom)
    }).pipe(op("writ.callStore.pending"))
  }))

const heldFrom = (r: Row) =>
  Effect.gen(function*() {
    const held: HeldTally = {
      tally: str(r, "tally"),
      call: str(r, "call"),
      acc: num(r, "acc"),
      forward: num(r, "forward") === 1,
      chain: yield* strings("writ.tallyStore.read", str(r, "chain")),
      issuers: yield* strings("writ.tallyStore.read", str(r, "issuers")),
      object: yield* object("writ.tallyStore.read", str(r, "object")),
      res: yield* optionalJson("writ.tallyStore.read", nstr(r, "res"))
    }
    return held
  })

export const makeTallyStore = Effect.map(SqlClient.SqlClient, (sql) =>
  TallyStore.of({
    put: (h) =>
      Effect.gen(function*() {
        yield* sql`INSERT OR IGNORE INTO writ_tallies ${
          sql.insert({
            tally: h.tally,
            call: h.call,
            acc: h.acc,
            forward: h.forward ? 1 : 0,
            chain: JSON.stringify(h.chain),
            issuers: JSON.stringify(h.issuers),
            object: text(h.object),
            res: optionalText(h.res)
          })
        }`
        // One statement per index, every row at once.
        const writs = [...new Set(h.chain)].map((writ) => ({ writ, tally: h.tally }))
        const keys = [...new Set(h.issuers)].map((iss) => ({ iss, tally: h.tally }))
        if (writs.length > 0) yield* sql`INSERT OR IGNORE INTO writ_tally_writs ${sql.insert(writs)}`
        if (keys.length > 0) yield* sql`INSERT OR IGNORE INTO writ_tally_issuers ${sql.insert(keys)}`
      }).pipe(op("writ.tallyStore.put")),
    get: (id) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT * FROM writ_tallies WHERE tally = ${id}`
        return rows.length === 0 ? Option.none<HeldTally>() : Option.some(yield* heldFrom(rows[0]))
      }).pipe(op("writ.tallyStore.get")),
    // SQLite's default BINARY collation compares bytes: ASCII order for identities (section 8.2).
    underWrit: (writ) =>
      Effect.flatMap(
        sql<Row>`SELECT t.* FROM writ_tally_writs w JOIN writ_tallies t ON t.tally = w.tally
          WHERE w.writ = ${writ} ORDER BY t.acc, t.tally`,
        (rows) => Effect.forEach(rows, heldFrom)
      ).pipe(op("writ.tallyStore.underWrit")),
    underIssuer: (iss) =>
      Effect.flatMap(
        sql<Row>`SELECT t.* FROM writ_tally_issuers i JOIN writ_tallies t ON t.tally = i.tally
          WHERE i.iss = ${iss} ORDER BY t.acc, t.tally`,
        (rows) => Effect.forEach(rows, heldFrom)
      ).pipe(op("writ.tallyStore.underIssuer"))
  }))

export const makeRevokeStore = Effect.map(SqlClient.SqlClient, (sql) =>
  RevokeStore.of({
    record: (r) =>
      sql`INSERT INTO writ_revokes ${
        sql.insert({ revoke: r.revoke, writ: r.writ, iss: r.iss, exp: r.exp, rcv: r.rcv })
      }`.pipe(Effect.asVoid, op("writ.revokeStore.record")),
    covers: (writs, issuers) =>
      Effect.map(
        sql<Row>`SELECT 1 AS hit FROM writ_revokes WHERE
          (writ <> '*' AND writ IN ${sql.in(writs.length > 0 ? writs : [""])})
          OR (writ = '*' AND iss IN ${sql.in(issuers.length > 0 ? issuers : [""])}) LIMIT 1`,
        (rows) => rows.length > 0
      ).pipe(op("writ.revokeStore.covers"))
  }))

export const makeReversalStore = Effect.map(SqlClient.SqlClient, (sql) =>
  ReversalStore.of({
    get: (target) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT * FROM writ_reversals WHERE target = ${target}`
        if (rows.length === 0) return Option.none<Reversal>()
        const r = rows[0]
        const state = str(r, "state")
        const call = str(r, "call")
        if (state === "succeeded") {
          return Option.some<Reversal>({ state, call, res: yield* optionalJson("writ.reversalStore.get", nstr(r, "res")) })
        }
        return Option.some<Reversal>({ state: state === "begun" ? "begun" : "unknown", call })
      }).pipe(op("writ.reversalStore.get")),
    begin: (target, call) =>
      sql`INSERT INTO writ_reversals (target, state, call, res) VALUES (${target}, 'begun', ${call}, NULL)
        ON CONFLICT (target) DO UPDATE SET state = 'begun', call = excluded.call, res = NULL`.pipe(
        Effect.asVoid,
        op("writ.reversalStore.begin")
      ),
    succeed: (target, call, res) =>
      sql`INSERT INTO writ_reversals (target, state, call, res) VALUES (${target}, 'succeeded', ${call}, ${optionalText(res)})
        ON CONFLICT (target) DO UPDATE SET state = 'succeeded', call = excluded.call, res = excluded.res`.pipe(
        Effect.asVoid,
        op("writ.reversalStore.succeed")
      ),
    clear: (target) =>
      sql`DELETE FROM writ_reversals WHERE target = ${target}`.pipe(Effect.asVoid, op("writ.reversalStore.clear")),
    markBegunUnknown: Effect.map(
      sql<Row>`UPDATE writ_reversals SET state = 'unknown' WHERE state = 'begun' RETURNING target`,
      (rows) => rows.length
    ).pipe(op("writ.reversalStore.markBegunUnknown"))
  }))

export const makeDelegationStore = Effect.map(SqlClient.SqlClient, (sql) =>
  DelegationStore.of({
    recordIssued: (w) =>
      sql`INSERT OR IGNORE INTO writ_issued ${
        sql.insert({
          leaf: w.leaf,
          id: w.id,
          writ: w.writ,
          hld: w.hld,
          above: JSON.stringify(w.above),
          above_issuers: JSON.stringify(w.aboveIssuers),
          object: text(w.object)
        })
      }`.pipe(Effect.asVoid, op("writ.delegationStore.recordIssued")),
    recordSub: (s) =>
      sql`INSERT INTO writ_subs (leaf, id, sub_call, signer, object)
        VALUES (${s.leaf}, ${s.id}, ${s.subCall}, ${s.signer}, ${text(s.object)})
        ON CONFLICT (leaf, id, sub_call, signer) DO UPDATE SET object = excluded.object`.pipe(
        Effect.asVoid,
        op("writ.delegationStore.recordSub")
      ),
    forCall: (leaf, id) =>
      Effect.gen(function*() {
        const w = yield* sql<Row>`SELECT object FROM writ_issued WHERE leaf = ${leaf} AND id = ${id} ORDER BY seq`
        const s = yield* sql<Row>`SELECT object FROM writ_subs WHERE leaf = ${leaf} AND id = ${id} ORDER BY seq`
        return {
          wrt: yield* Effect.forEach(w, (r) => object("writ.delegationStore.forCall", str(r, "object"))),
          sub: yield* Effect.forEach(s, (r) => object("writ.delegationStore.forCall", str(r, "object")))
        }
      }).pipe(op("writ.delegationStore.forCall")),
    issuedUnder: (writ, iss) =>
      Effect.gen(function*() {
        const rows = writ === "*"
          ? yield* sql<Row>`SELECT * FROM writ_issued WHERE EXISTS
              (SELECT 1 FROM json_each(writ_issued.above_issuers) WHERE value = ${iss}) ORDER BY seq`
          : yield* sql<Row>`SELECT * FROM writ_issued WHERE EXISTS
              (SELECT 1 FROM json_each(writ_issued.above) WHERE value = ${writ}) ORDER BY seq`
        return yield* Effect.forEach(rows, (r) =>
          Effect.gen(function*() {
            const issued: IssuedWrit = {
              leaf: str(r, "leaf"),
              id: str(r, "id"),
              writ: str(r, "writ"),
              hld: str(r, "hld"),
              above: yield* strings("writ.delegationStore.issuedUnder", str(r, "above")),
              aboveIssuers: yield* strings("writ.delegationStore.issuedUnder", str(r, "above_issuers")),
              object: yield* object("writ.delegationStore.issuedUnder", str(r, "object"))
            }
            return issued
          }))
      }).pipe(op("writ.delegationStore.issuedUnder"))
  }))

export const makeAckStore = Effect.map(SqlClient.SqlClient, (sql) =>
  AckStore.of({
    keep: (k) =>
      sql`INSERT OR IGNORE INTO writ_acks (revoke, ack, object, res)
        VALUES (${k.revoke}, ${k.ack}, ${text(k.object)}, ${text(k.res)})`.pipe(Effect.asVoid, op("writ.ackStore.keep")),
    forRevoke: (revoke) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT * FROM writ_acks WHERE revoke = ${revoke} ORDER BY ack`
        return yield* Effect.forEach(rows, (r) =>
          Effect.gen(function*() {
            const kept: KeptAck = {
              revoke: str(r, "revoke"),
              ack: str(r, "ack"),
              object: yield* object("writ.ackStore.forRevoke", str(r, "object")),
              res: yield* json("writ.ackStore.forRevoke", str(r, "res"))
            }
            return kept
          }))
      }).pipe(op("writ.ackStore.forRevoke"))
  }))

export const makeAuditLog = Effect.map(SqlClient.SqlClient, (sql) =>
  AuditLog.of({
    append: (e) =>
      sql`INSERT INTO writ_audit (time, entry) VALUES (${e.time}, ${JSON.stringify(e)})`.pipe(
        Effect.asVoid,
        op("writ.auditLog.append")
      ),
    read: Effect.gen(function*() {
      const rows = yield* sql<Row>`SELECT entry FROM writ_audit ORDER BY seq`
      return rows.map((r) => JSON.parse(str(r, "entry")) as AuditEntry)
    }).pipe(op("writ.auditLog.read"))
  }))

/** Every Writ store on the SQLite connection in context; applies this module's migrations first. */
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

export type SqliteWritContext = WritStores | Reservations | Atomic | SqlClient.SqlClient

/**
 * The whole embedded executor store on one SQLite file (WAL): every Writ store, Reservations for
 * the count and total stores, and the Atomic boundary they share.
 */
export const layer = (
  filename: string,
  options: SqliteStoreOptions = {}
): Layer.Layer<WritStores | Reservations | Atomic | SqlClient.SqlClient, StoreError> =>
  Layer.mergeAll(storesLayer, SqliteReservations.layer).pipe(Layer.provideMerge(SqliteStore.layer(filename, options)))
