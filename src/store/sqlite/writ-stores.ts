// SQLite Writ executor stores (spec section 9): one file, WAL, on the shared connection of
// src/store/sqlite/client.ts, so `Atomic.transaction` makes the call store's pending entry and the
// Reservations rows of the count and total stores one SQLite transaction (section 7 steps 9 and
// 10), and every other atomic step likewise. The stores themselves are src/store/sql/
// writ-stores.ts; this module is SQLite's dialect of them, its tables and its group commit.
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Option } from "effect"
import type { Atomic, Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import { type WritStores, writStoresContext } from "../../writ/executor/stores.js"
import type { StoreMigrations } from "../sql/migrations.js"
import { type AuditWrite, makeStores, type WritDialect } from "../sql/writ-stores.js"
import * as OwnerLeases from "../sql/owner-leases.js"
import { OwnerLease } from "../../accounting/owner-lease.js"
import { RandomBytes } from "../../kernel/index.js"
import * as LocalProcesses from "./local-processes.js"
import { LEASE_SCOPE, makeOwnedStores, registerOwner } from "./writ-owner.js"
import { AdmissionGate } from "../../writ/executor/admission-gate.js"
import { migrate, SqliteStore, type SqliteStoreOptions } from "./client.js"
import { inMemory } from "./in-memory.js"
import * as GroupCommitLayer from "./group-commit.js"
import { GroupCommit, type GroupCommitOptions } from "./group-commit.js"
import * as SqliteReservations from "./reservations.js"
import * as RevocationWatch from "./revocation-watch.js"

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
    ],
    // The owner (an OwnerLease id) of a pending call or begun reversal, for a file several
    // processes share (writ-owner.ts); NULL on rows written before, which recovery takes over.
    "2_owners": [
      `ALTER TABLE writ_calls ADD COLUMN owner TEXT`,
      `ALTER TABLE writ_reversals ADD COLUMN owner TEXT`,
      `CREATE TABLE writ_owners (owner TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL)`
    ]
  }
}

/**
 * SQLite's dialect: every column read as stored (`*`), acceptance in rowid order, the default
 * BINARY collation already comparing bytes (ASCII order for identities, section 8.2), `INSERT OR
 * IGNORE`, `IN (...)` lists and `json_each` over the JSON array text.
 */
export const dialect: WritDialect = {
  columns: { calls: "*", tallies: "t.*", reversals: "*", issued: "*" },
  acceptanceOrder: "rowid",
  bytes: (column) => column,
  insertIgnore: (sql, table, rows) => sql`INSERT OR IGNORE INTO ${sql(table)} ${sql.insert(rows)}`,
  // `IN ()` is not SQL: an empty list is one no identity matches.
  oneOf: (sql, column, values) => sql`${sql(column)} IN ${sql.in(values.length > 0 ? values : [""])}`,
  jsonArrayHas: (sql, column, value) =>
    sql`EXISTS (SELECT 1 FROM json_each(writ_issued.${sql(column)}) WHERE value = ${value})`
}

/**
 * Every Writ store on the SQLite connection in context; applies this module's migrations first. With
 * a GroupCommit in context, audit entries written outside any step are batched.
 */
export const storesLayer: Layer.Layer<WritStores, StoreError, SqlClient.SqlClient> = Layer.effectContext(
  Effect.gen(function*() {
    yield* migrate(migrations)
    const sql = yield* SqlClient.SqlClient
    // With an OwnerLease in context (a file several processes may share), pending records name
    // their owner and recovery takes over only those of owners that are gone (writ-owner.ts).
    const lease = yield* Effect.serviceOption(OwnerLease)
    // Under group commit an entry written outside any step joins the next batch (one fsync for many
    // entries, group-commit.ts); it is still written before the request it records is answered.
    const group = yield* Effect.serviceOption(GroupCommit)
    const audit: AuditWrite = (self) => Option.isSome(group) ? group.value.run(self) : self
    if (Option.isNone(lease)) return writStoresContext(makeStores(sql, dialect, audit))
    const owners = { lease: lease.value, local: yield* LocalProcesses.fromContext }
    yield* registerOwner(sql, owners)
    return writStoresContext(makeOwnedStores(sql, dialect, owners, audit))
  })
)

/**
 * The stores with this process's lease among the processes sharing `filename` (none for an
 * in-memory database, which no other process can open, nor when `leaseMs` is null).
 */
const leasedStores = (filename: string, options: SqliteWritOptions): Layer.Layer<WritStores, StoreError, SqliteClient.SqliteClient | SqlClient.SqlClient> =>
  inMemory(filename) || options.leaseMs === null
    ? storesLayer
    : Layer.provide(
      storesLayer,
      OwnerLeases.layer(migrate, { scope: LEASE_SCOPE, ...(options.leaseMs === undefined ? {} : { ttlMs: options.leaseMs }) }).pipe(
        Layer.provide(RandomBytes.live)
      )
    )

export type SqliteWritContext = WritStores | Reservations | Atomic | AdmissionGate | GroupCommit | SqlClient.SqlClient

export interface SqliteWritOptions extends SqliteStoreOptions {
  /** Group commit (group-commit.ts): how many steps one transaction may hold. Default 64. */
  readonly groupCommit?: GroupCommitOptions
  /**
   * The owner lease period, ms (default 15 s, owner-leases.ts): another process sharing the file
   * takes over this one's pending calls once its heartbeat is older than this (writ-owner.ts).
   * null: no lease (one process owns the file, and recovery resolves every pending record).
   */
  readonly leaseMs?: number | null
}

/**
 * The gate in context with the file's revocation mark (revocation-watch.ts): several `writ serve`
 * processes may share one file, and a revoke any of them records must reach the others' plain
 * replay path (section 7, step 7 before step 9).
 */
const watchedGate = (filename: string): Layer.Layer<AdmissionGate, StoreError, AdmissionGate> =>
  Layer.scoped(AdmissionGate, Effect.gen(function*() {
    const gate = yield* AdmissionGate
    // No other process can open an in-memory database.
    if (inMemory(filename)) return gate
    return { ...gate, revocationMark: yield* RevocationWatch.make(filename) }
  }))

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
  Layer.mergeAll(leasedStores(filename, options), SqliteReservations.layer).pipe(
    Layer.provideMerge(GroupCommitLayer.layer(options.groupCommit ?? {})),
    Layer.provideMerge(SqliteStore.layer(filename, options)),
    // After the stores' migrations (storesLayer) created the revoke table the watch reads.
    (stores) => Layer.provideMerge(watchedGate(filename), stores)
  )
