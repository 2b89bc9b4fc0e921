// Named migrations shared by the SQL stores. A migration is a list of statements applied once per
// database, recorded by name in `mandate_migrations`; names are global, so each store prefixes its
// own (e.g. "accounting/001_reservations", "writ/001_call_store"). Independent sets of migrations
// (one per store module) can be run in any order and any number of times.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { AtomicService } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"

export interface Migration {
  /** Unique across the whole project, prefixed by the owning store, e.g. "accounting/001_reservations". */
  readonly name: string
  /** Statements run in order inside one transaction together with recording the name. */
  readonly statements: ReadonlyArray<string>
}

/**
 * Applies every migration not yet recorded, in list order, each in its own atomic step (the
 * store's transaction boundary, which for SQLite holds the write lock and for PostgreSQL takes a
 * transaction-scoped advisory lock, so concurrent processes migrating one database do not collide).
 */
export const runMigrations = (
  transaction: AtomicService["transaction"],
  migrations: ReadonlyArray<Migration>,
  lockStatement?: string
): Effect.Effect<void, StoreError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const m of migrations) {
      yield* transaction(Effect.gen(function*() {
        if (lockStatement !== undefined) yield* sql.unsafe(lockStatement)
        // Inside the lock: concurrent `IF NOT EXISTS` creations can still collide in PostgreSQL.
        yield* sql.unsafe("CREATE TABLE IF NOT EXISTS mandate_migrations (name TEXT PRIMARY KEY)")
        const done = yield* sql`SELECT name FROM mandate_migrations WHERE name = ${m.name}`
        if (done.length > 0) return
        for (const s of m.statements) yield* sql.unsafe(s)
        yield* sql`INSERT INTO mandate_migrations (name) VALUES (${m.name})`
      })).pipe(Effect.mapError((e) => (e._tag === "StoreError" ? e : storeError(`migrations.apply ${m.name}`)(e))))
    }
  })
