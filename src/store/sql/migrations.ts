// Migrations of the SQL stores, run by @effect/sql's Migrator with one table per store module
// (`mandate_migrations_accounting`, `mandate_migrations_writ`, ...), so each module numbers its own
// migrations and modules can be opened in any order, any number of times.
//
// What the Migrator alone does not give the stores, and is added here:
// - one atomic step: the Migrator runs inside the store's own transaction boundary (its own
//   `withTransaction` joins it as a savepoint), so SQLite holds the file's write lock from the start
//   (BEGIN IMMEDIATE) and two processes opening one new file migrate one after the other; on
//   PostgreSQL a transaction-scoped advisory lock does the same and the Migrator's table is created
//   under it (the Migrator probes it with a statement that, failing, would abort the transaction);
// - typed failures: the Migrator reports a failed migration (and a failed savepoint rollback) as a
//   defect; on the store's startup path both are the store's failure, a StoreError naming the store.
//
// Stores written before the Migrator (their migrations recorded by name in `mandate_migrations`)
// migrate forward: every first migration creates its tables with IF NOT EXISTS, and the tables it
// finds are exactly the ones the earlier code created under the same names.
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { Cause, Effect, Record } from "effect"
import type { AtomicService } from "../../accounting/reservations.js"
import { describeCause, StoreError } from "../../accounting/store-error.js"

export interface StoreMigrations {
  /** The Migrator's table of this store module, e.g. "mandate_migrations_accounting". */
  readonly table: string
  /** `<id>_<name>` (Migrator.fromRecord's naming) to the statements run in order. */
  readonly migrations: Readonly<Record<string, ReadonlyArray<string>>>
}

const validTable = /^mandate_migrations_[a-z0-9_]{1,40}$/

const runMigrator = Migrator.make({})

export interface MigrateOptions {
  /** The store's transaction boundary. */
  readonly transaction: AtomicService["transaction"]
  /** The store's name in operation names ("sqlite", "postgres") and where it lives. */
  readonly store: string
  readonly location: string
  /** Statements run first inside the step (PostgreSQL: the lock, and the Migrator's table). */
  readonly prepare?: (table: string) => ReadonlyArray<string>
}

/** Applies every migration of `set` not yet recorded in its table, as one atomic step. */
export const runMigrations = (
  set: StoreMigrations,
  options: MigrateOptions
): Effect.Effect<void, StoreError, SqlClient.SqlClient> => {
  const failed = (cause: unknown) =>
    cause instanceof StoreError ? cause : new StoreError({
      operation: `${options.store}.migrate ${set.table}`,
      store: options.location,
      message: describeCause(cause),
      cause
    })
  if (!validTable.test(set.table)) return Effect.fail(failed(new Error(`invalid migrations table ${set.table}`)))
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const loader = Migrator.fromRecord(Record.map(set.migrations, (statements) =>
      Effect.forEach(statements, (s) => sql.unsafe(s), { discard: true })))
    yield* options.transaction(Effect.gen(function*() {
      for (const s of options.prepare?.(set.table) ?? []) yield* sql.unsafe(s)
      yield* runMigrator({ loader, table: set.table })
    }))
  }).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.interrupt : Effect.fail(failed(Cause.squash(cause)))
    ),
    Effect.withSpan("store.migrate", { attributes: { table: set.table } })
  )
}
