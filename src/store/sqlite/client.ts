// The SQLite connection for every embedded store: one file, WAL, one connection per process (the
// client serializes statements within the process), and the transaction boundary used by all of
// them. Writ executor stores (src/store/sqlite/writ-*.ts), YEA grant totals and ledger budgets
// share this Layer so one `Atomic.transaction` covers writes to all of them.
//
// Every transaction begins with BEGIN IMMEDIATE: it takes the file's write lock at once (waiting up
// to busy_timeout), so each atomic step runs alone against the file, across processes, and its
// read-check-write is race-free. (A deferred BEGIN would let another process commit between this
// step's first read and its first write, and SQLite then fails the write with SQLITE_BUSY instead
// of waiting.) Commit and rollback failures are StoreErrors (src/store/sql/transaction.ts).
//
// Open ONE layer per file per process and share it: better-sqlite3 waits for a busy lock
// synchronously, so a second connection in the same process waiting for the first's write lock
// would block the event loop that the first needs to finish its transaction.
//
// The file is created readable and writable by its owner only (0600, like key files): SQLite gives
// its -wal and -shm files the mode of the database file. A file that exists keeps its mode.
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Context, Effect, Layer } from "effect"
import { closeSync, constants, openSync } from "node:fs"
import { Atomic, type AtomicService } from "../../accounting/reservations.js"
import { StoreError, storeError } from "../../accounting/store-error.js"
import { runMigrations, type StoreMigrations } from "../sql/migrations.js"
import { inMemory } from "./in-memory.js"
import { makeTransaction as makeSqlTransaction, sqliteAbandons, type TransactionDialect } from "../sql/transaction.js"

export type { StoreMigrations } from "../sql/migrations.js"
/**
 * How the composition root tunes the embedded store. Every pragma the store depends on is set here,
 * when the Layer opens the file, so nothing else issues PRAGMA statements on the store's connection.
 */
export interface SqliteStoreOptions {
  /** How long a process waits for another's write lock before failing with a StoreError (ms). Default 30000. */
  readonly busyTimeoutMs?: number
  /**
   * `PRAGMA synchronous`. "full" (default) syncs the WAL at every commit: an acknowledged write
   * survives a power loss, as section 9 wants of the call store. "normal" syncs only at checkpoints:
   * a commit survives a process crash but the last ones may be lost with the machine.
   */
  readonly synchronous?: "full" | "normal"
  /**
   * `PRAGMA secure_delete`: SQLite overwrites deleted content with zeros instead of leaving it in
   * free pages, so a deleted row leaves no residue in the file (the decision ledger turns it on:
   * its held-reservations rows are deleted as they settle). Off by default, SQLite's own default.
   */
  readonly secureDelete?: boolean
}

/** The pragmas `options` ask for, in the order they are applied when the file is opened. */
export const pragmas = (options: SqliteStoreOptions): ReadonlyArray<string> => [
  `PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 30_000))}`,
  `PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`,
  ...(options.secureDelete === true ? ["PRAGMA secure_delete = ON"] : [])
]

/**
 * Rewrites the file without its free pages (VACUUM) and empties the WAL into it, truncated to zero
 * bytes (checkpoint TRUNCATE): what was deleted or overwritten before, in the file or in earlier WAL
 * frames, is then nowhere on disk. Outside any transaction; waits for other processes' locks.
 */
export const scrub = (sql: SqlClient.SqlClient): Effect.Effect<void, StoreError> =>
  Effect.mapError(Effect.zipRight(sql.unsafe("VACUUM"), sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")), storeError("sqlite.scrub"))

/** The file, as named in every StoreError of this store. */
const dialect = (filename: string): TransactionDialect => ({
  store: "sqlite",
  location: filename,
  begin: "BEGIN IMMEDIATE",
  abandons: sqliteAbandons,
  cached: true
})


/** Creates the store file with mode 0600 if it does not exist yet (an existing file is left as it is). */
const createPrivate = (filename: string): Effect.Effect<void, StoreError> =>
  inMemory(filename) ? Effect.void : Effect.try({
    try: () => closeSync(openSync(filename, constants.O_RDWR | constants.O_CREAT, 0o600)),
    catch: storeError("sqlite.open", filename)
  })

/** The SQLite transaction boundary for the SqlClient in context, on the store at `filename`. */
export const makeTransaction = (sql: SqlClient.SqlClient, filename: string): AtomicService["transaction"] =>
  makeSqlTransaction(sql, dialect(filename))

/** Context: SqliteClient, SqlClient and Atomic for this file. */
export const layer = (
  filename: string,
  options: SqliteStoreOptions = {}
): Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient | Atomic, StoreError> => {
  const opened = storeError("sqlite.open", filename)
  const init = Layer.effectContext(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const pragma of pragmas(options)) yield* sql.unsafe(pragma)
    return Context.make(Atomic, { transaction: makeTransaction(sql, filename) })
  }).pipe(Effect.mapError(opened)))
  return init.pipe(
    Layer.provideMerge(SqliteClient.layer({ filename }).pipe(
      // better-sqlite3 throws (a defect) when the file cannot be opened: report it as the store's failure.
      Layer.catchAllCause((cause) => Layer.fail(opened(Cause.squash(cause))))
    )),
    Layer.provide(Layer.effectDiscard(createPrivate(filename))),
    Layer.mapError(opened)
  )
}

/** Applies the migrations of one store module to the SQLite database in context. */
export const migrate = (set: StoreMigrations): Effect.Effect<void, StoreError, SqliteClient.SqliteClient> =>
  Effect.gen(function*() {
    const sql = yield* SqliteClient.SqliteClient
    const location = sql.config.filename
    yield* Effect.provideService(
      runMigrations(set, { transaction: makeTransaction(sql, location), store: "sqlite", location }),
      SqlClient.SqlClient,
      sql
    )
  })

export const SqliteStore = { layer, migrate, makeTransaction } as const
