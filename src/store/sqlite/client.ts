// The SQLite connection for every embedded store: one file, WAL, one connection per process (the
// client serializes statements within the process), and the transaction boundary used by all of
// them. Writ executor stores (src/store/sqlite/writ-*.ts), YEA grant totals and ledger budgets
// share this Layer so one `Atomic.transaction` covers writes to all of them.
//
// Why the first statement of every transaction is a write: @effect/sql begins with a plain (deferred)
// BEGIN. Another process could commit between this transaction's first read and its first write, and
// SQLite then fails the write with SQLITE_BUSY instead of waiting. Writing first takes the file's
// write lock at once (waiting up to busy_timeout), which is what BEGIN IMMEDIATE would do: each
// atomic step then runs alone against the file, across processes, so read-check-write is race-free.
//
// Open ONE layer per file per process and share it: better-sqlite3 waits for a busy lock
// synchronously, so a second connection in the same process waiting for the first's write lock
// would block the event loop that the first needs to finish its transaction.
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Context, Effect, Layer } from "effect"
import { Atomic, type AtomicService } from "../../accounting/reservations.js"
import { StoreError, storeError } from "../../accounting/store-error.js"
import { type Migration, runMigrations } from "../sql/migrations.js"

export type { Migration } from "../sql/migrations.js"

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
}

/** The pragmas `options` ask for, in the order they are applied when the file is opened. */
export const pragmas = (options: SqliteStoreOptions): ReadonlyArray<string> => [
  `PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 30_000))}`,
  `PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`
]

const LOCK_TABLE = "mandate_write_lock"

/** The SQLite transaction boundary for the SqlClient in context. */
export const makeTransaction = (sql: SqlClient.SqlClient): AtomicService["transaction"] =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    sql.withTransaction(
      Effect.zipRight(
        // Takes the write lock now (see the module comment); writes no row.
        sql.unsafe(`DELETE FROM ${LOCK_TABLE} WHERE 0`),
        self
      )
    ).pipe(Effect.mapError((e) => (e instanceof SqlError ? storeError("sqlite.transaction")(e) : e)))

/** Context: SqliteClient, SqlClient, and Atomic for this file. */
export const layer = (
  filename: string,
  options: SqliteStoreOptions = {}
): Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient | Atomic, StoreError> => {
  const init = Layer.effectContext(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const pragma of pragmas(options)) yield* sql.unsafe(pragma)
    yield* sql.unsafe(`CREATE TABLE IF NOT EXISTS ${LOCK_TABLE} (id INTEGER PRIMARY KEY)`)
    return Context.make(Atomic, { transaction: makeTransaction(sql) })
  }).pipe(Effect.mapError(storeError("sqlite.open"))))
  return init.pipe(
    Layer.provideMerge(SqliteClient.layer({ filename }).pipe(
      // better-sqlite3 throws (a defect) when the file cannot be opened: report it as the store's failure.
      Layer.catchAllCause((cause) => Layer.fail(storeError("sqlite.open")(Cause.squash(cause))))
    )),
    Layer.mapError((e) => (e instanceof StoreError ? e : storeError("sqlite.open")(e)))
  )
}

/** Applies `migrations` (named, once each) to the SQLite database in context. */
export const migrate = (
  migrations: ReadonlyArray<Migration>
): Effect.Effect<void, StoreError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => runMigrations(makeTransaction(sql), migrations))

export const SqliteStore = { layer, migrate, makeTransaction } as const
