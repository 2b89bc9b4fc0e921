// Where a ledger lives, as the `mandate ledger` commands, the tests and the benchmark name it:
//   FILE.db / FILE.sqlite            the embedded SQLite store (several processes may write);
//   postgres://...#SCHEMA            PostgreSQL, for many workers (the schema isolates a deployment);
// and the Layers that open it: Reservations, Atomic, the LedgerStore and, once created, the writer;
// and `recordDecisions`, the DecisionEvents Layer a composition root (writ serve, the demos) gives a
// protocol so that its decisions land in the ledger. A safe_telemetry ledger's
// pseudonym key is found outside the store (ledger-key.ts) and given to the writer as LedgerKey.
import type { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Option } from "effect"
import type { DecisionEvents } from "../accounting/decision-events.js"
import { Atomic, type Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { RandomBytes } from "../kernel/index.js"
import { ledgerSubscriber } from "../ledger/subscriber.js"
import type { LedgerError } from "../ledger/reason.js"
import { ledgerError } from "../ledger/reason.js"
import type { LedgerMode } from "../ledger/events.js"
import { keyCheck, TELEMETRY_KEY_BYTES } from "../ledger/privacy.js"
import { createLedger, LedgerKey, LedgerStore, LedgerWriter, makeWriter } from "../ledger/writer.js"
import { findKey, KEY_ENV, type KeyOptions, keyFileFor, readKeyFile, writeKeyFile } from "./ledger-key.js"
import { moveKeyOut } from "../store/sql/ledger.js"
import * as PgStore from "../store/postgres/client.js"
import * as PgLedger from "../store/postgres/ledger.js"
import * as PgReservations from "../store/postgres/reservations.js"
import * as SqliteStore from "../store/sqlite/client.js"
import * as SqliteGroupCommit from "../store/sqlite/group-commit.js"
import * as SqliteLedger from "../store/sqlite/ledger.js"
import * as SqliteReservations from "../store/sqlite/reservations.js"

export type LedgerLocation =
  | { readonly store: "sqlite"; readonly file: string }
  | { readonly store: "postgres"; readonly url: string; readonly schema: string | undefined }

export const parseLocation = (where: string): LedgerLocation => {
  if (where.startsWith("postgres://") || where.startsWith("postgresql://")) {
    const [url, schema] = where.split("#")
    return { store: "postgres", url, schema: schema === "" ? undefined : schema }
  }
  return { store: "sqlite", file: where }
}

export interface OpenOptions extends KeyOptions {
  /** The ledger's name inside the store (several ledgers may share one store). Default "default". */
  readonly ledger?: string
  /** SQLite `synchronous` (full by default; normal survives a killed process, not a power loss). */
  readonly synchronous?: "full" | "normal"
  readonly maxConnections?: number
  /**
   * SQLite: whether atomic steps share COMMITs through group commit (default true). Off, each step
   * is a transaction of its own, as before group commit: the ledger benchmark measures both.
   */
  readonly groupCommit?: boolean
}

export type LedgerStores = Reservations | Atomic | LedgerStore | SqlClient.SqlClient

/** Reservations, Atomic, the LedgerStore and the SqlClient of a SQLite ledger, with its SqliteClient (for other modules' migrations). */
export const openSqliteStores = (file: string, options: OpenOptions = {}): Layer.Layer<LedgerStores | SqliteClient.SqliteClient, StoreError> => {
  const ledger = options.ledger ?? "default"
  return Layer.mergeAll(SqliteReservations.layer, SqliteLedger.layer(ledger)).pipe(
    // The Atomic boundary is group commit (group-commit.ts), as for the Writ executor: the atomic
    // steps of concurrent guarded actions (a reserve with its action, decision and reservation
    // lines; a settlement with its line) share one BEGIN IMMEDIATE ... COMMIT, each a savepoint
    // that fails alone, and each caller is answered only after that COMMIT. The chain stays whole:
    // every append reads the head inside its own step (store/sql/ledger.ts), so a step rolled back
    // takes its head update with it and the next step chains to what is really stored.
    // Only Atomic leaves it: the ledger's batcher never stands in for an executor's AdmissionGate.
    options.groupCommit === false ? Layer.provideMerge(Layer.empty)
      : Layer.provideMerge(Layer.scoped(Atomic, Effect.map(SqliteGroupCommit.make(), SqliteGroupCommit.atomicOf))),
    // secure_delete: a settled reservation's deleted row leaves no residue in the file.
    Layer.provideMerge(SqliteStore.layer(file, { synchronous: options.synchronous ?? "full", secureDelete: true }))
  )
}

/** The same on PostgreSQL, with its PgLocation (for other modules' migrations). */
export const openPgStores = (url: string, schema: string | undefined, options: OpenOptions = {}): Layer.Layer<LedgerStores | PgStore.PgLocation, StoreError> =>
  Layer.mergeAll(PgReservations.layer, PgLedger.layer(options.ledger ?? "default")).pipe(
    Layer.provideMerge(PgStore.layer({ url, ...(schema !== undefined ? { schema } : {}), maxConnections: options.maxConnections ?? 4,
      // Waiting for a pooled connection counts against this too: many guarded actions queue for few connections.
      connectTimeoutMs: 120_000 }))
  )

/** Reservations, Atomic, the LedgerStore and the SqlClient of the ledger at `where`. */
export const openStores = (where: LedgerLocation, options: OpenOptions = {}): Layer.Layer<LedgerStores, StoreError> =>
  where.store === "sqlite" ? openSqliteStores(where.file, options) : openPgStores(where.url, where.schema, options)

/** The key file beside a SQLite ledger (FILE.key); a PostgreSQL ledger has none by default. */
export const keyFileBeside = (where: LedgerLocation): string | undefined => (where.store === "sqlite" ? `${where.file}.key` : undefined)

/** The key files are read and written through @effect/platform's FileSystem, provided here, at the composition root. */
const withFiles = <A, E>(eff: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provide(eff, NodeFileSystem.layer)

/** The key found for the ledger at `where` (ledger-key.ts), read when a safe_telemetry writer asks for it. */
const keyLayer = (where: LedgerLocation, options: KeyOptions): Layer.Layer<LedgerKey> =>
  Layer.succeed(LedgerKey, { key: withFiles(findKey(options, keyFileBeside(where))).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(ledgerError("key_invalid", e.message)))) })

/**
 * A safe_telemetry ledger written before its key left the store (ledger_meta.key_hex): the key is
 * moved to the key file (or checked against the key given), the store keeps only its check, the
 * held-reservations rows take their pseudonyms, and a SQLite file is compacted so that neither the
 * key nor the raw ids remain as residue in free pages or the WAL.
 */
const moveStoredKeyOut = (where: LedgerLocation, options: OpenOptions) =>
  Effect.gen(function*() {
    const store = yield* LedgerStore
    const info = yield* store.info
    if (Option.isNone(info) || info.value.mode !== "safe_telemetry" || info.value.key === undefined) return
    const stored = info.value.key
    const given = yield* withFiles(findKey(options, keyFileBeside(where)))
    if (Option.isSome(given) && keyCheck(given.value) !== keyCheck(stored)) {
      return yield* ledgerError("key_mismatch", `the key given is not the one ledger ${info.value.ledger}'s pseudonyms were made with`)
    }
    if (Option.isNone(given)) {
      const dest = keyFileFor(options, keyFileBeside(where))
      if (dest === undefined) {
        return yield* ledgerError("key_missing", `ledger ${info.value.ledger} keeps its key inside the store (an earlier version); give a key file to move it to, or ${KEY_ENV}`)
      }
      // Another process moving the same key out may have written the file first: then it must hold this key.
      yield* withFiles(writeKeyFile(dest, stored).pipe(
        Effect.catchAll((e): Effect.Effect<void, StoreError | LedgerError, FileSystem.FileSystem> => Effect.flatMap(readKeyFile(dest), (k): Effect.Effect<void, StoreError | LedgerError> =>
          Option.isNone(k) ? Effect.fail(e)
            : keyCheck(k.value) === keyCheck(stored) ? Effect.void
            : Effect.fail(ledgerError("key_mismatch", `${dest} holds another key than the one ledger ${info.value.ledger} kept`))))
      ))
    }
    const sql = yield* SqlClient.SqlClient
    yield* moveKeyOut(sql, (yield* Atomic).transaction, info.value.ledger, stored)
    if (where.store === "sqlite") yield* SqliteStore.scrub(sql)
    else {
      // PostgreSQL keeps an updated row's old version until vacuumed; FULL rewrites the tables without them.
      yield* sql.unsafe("VACUUM FULL ledger_meta, ledger_held").pipe(Effect.catchAll((e) => Effect.logWarning("ledger: VACUUM FULL after moving the key out failed", e)))
    }
  })

/** The writer of the ledger in context, its key (if safe_telemetry) found as `options` say. */
export const writerLayer = (where: LedgerLocation, options: OpenOptions): Layer.Layer<LedgerWriter, StoreError | LedgerError, LedgerStores> =>
  Layer.effect(LedgerWriter, Effect.zipRight(moveStoredKeyOut(where, options), makeWriter)).pipe(Layer.provide(keyLayer(where, options)))

/** The stores plus the writer of an existing ledger and live randomness: what a guard needs. */
export const openLedger = (
  where: LedgerLocation,
  options: OpenOptions = {}
): Layer.Layer<LedgerStores | LedgerWriter | RandomBytes, StoreError | LedgerError> =>
  writerLayer(where, options).pipe(Layer.provideMerge(Layer.merge(openStores(where, options), RandomBytes.live)))

/**
 * Creates a ledger in `mode` at `where`. safe_telemetry: the key is the one found (ledger-key.ts),
 * else a new random one written to the key file (FILE.key beside a SQLite ledger, or `keyFile`),
 * mode 0600; the store keeps only its check.
 */
export const initLedger = (
  where: LedgerLocation,
  options: OpenOptions & { readonly mode: LedgerMode }
): Effect.Effect<void, StoreError | LedgerError> =>
  Effect.gen(function*() {
    const ledger = options.ledger ?? "default"
    const store = yield* LedgerStore
    if (Option.isSome(yield* store.info)) return yield* ledgerError("ledger_exists", `ledger ${ledger} already exists`)
    let key: Uint8Array | undefined
    if (options.mode === "safe_telemetry") {
      const found = yield* withFiles(findKey(options, keyFileBeside(where)))
      if (Option.isSome(found)) key = found.value
      else {
        const dest = keyFileFor(options, keyFileBeside(where))
        if (dest === undefined) return yield* ledgerError("key_missing", `a safe_telemetry ledger in PostgreSQL needs a key file or ${KEY_ENV}`)
        key = yield* Effect.flatMap(RandomBytes, (r) => r.bytes(TELEMETRY_KEY_BYTES))
        yield* withFiles(writeKeyFile(dest, key))
      }
    }
    yield* createLedger({ ledger, mode: options.mode, key })
  }).pipe(Effect.provide(Layer.merge(openStores(where, options), RandomBytes.live)))

export const withLedger = <A, E, R>(where: LedgerLocation, options: OpenOptions, eff: Effect.Effect<A, E, R>) =>
  Effect.provide(eff, openLedger(where, options))

/**
 * The DecisionEvents Layer that writes every published decision into the ledger at `where`,
 * creating it (`local_full`) when the store holds none yet. Several processes may do this at once
 * on one store: the one that loses the creation race opens what the other created. Only
 * DecisionEvents leaves this Layer, so the ledger's Reservations never replace a protocol's own.
 */
export const recordDecisions = (where: LedgerLocation, options: OpenOptions = {}): Layer.Layer<DecisionEvents, StoreError | LedgerError> => {
  const ledger = options.ledger ?? "default"
  const created = Effect.gen(function*() {
    const store = yield* LedgerStore
    const info = yield* store.info
    if (info._tag === "None") {
      yield* createLedger({ ledger, mode: "local_full", key: undefined }).pipe(
        Effect.catchIf((e) => e._tag === "LedgerError" && e.reason === "ledger_exists", () => Effect.void)
      )
    }
    return yield* Effect.zipRight(moveStoredKeyOut(where, options), makeWriter)
  })
  return ledgerSubscriber.pipe(
    Layer.provide(Layer.effect(LedgerWriter, created).pipe(Layer.provide(keyLayer(where, options)))),
    Layer.provide(openStores(where, options))
  )
}
