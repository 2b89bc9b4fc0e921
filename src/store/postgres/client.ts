// The PostgreSQL connection for stores shared by many worker processes (one executor key served by
// several workers). Each Layer is one pool; `schema` isolates a deployment or a test run (the pool's
// connections get it as search_path, so store code uses unqualified table names).
//
// Transactions run at READ COMMITTED. Race-freedom of read-check-write steps comes from explicit
// locks taken inside the transaction (row locks with FOR UPDATE / upsert, transaction-scoped
// advisory locks), not from SERIALIZABLE: a waiter then sees the winner's committed row and decides
// again, instead of failing with a serialization error that would need a retry of the caller's work.
// Commit and rollback failures (the server gone mid-step) are StoreErrors (src/store/sql/transaction.ts).
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import type { Duplex } from "node:stream"
import { Atomic, type AtomicService } from "../../accounting/reservations.js"
import { StoreError, storeError } from "../../accounting/store-error.js"
import { runMigrations, type StoreMigrations } from "../sql/migrations.js"
import { makeTransaction as makeSqlTransaction } from "../sql/transaction.js"

export type { StoreMigrations } from "../sql/migrations.js"

export const defaultUrl = "postgres://postgres@127.0.0.1:5432/test"

export interface PgStoreOptions {
  /** Connection URL; default postgres://postgres@127.0.0.1:5432/test. */
  readonly url?: string
  /** Schema to create (if absent) and use as search_path. Default: the server's default. */
  readonly schema?: string
  readonly maxConnections?: number
  readonly connectTimeoutMs?: number
  /**
   * The socket of each connection (node-postgres's `stream`), for tests that watch what a step
   * sends (src/store/postgres/statement-counter.ts). Default: a TCP socket.
   */
  readonly stream?: () => Duplex
}

const validSchema = /^[a-z_][a-z0-9_]{0,62}$/

/** The server and database of `url` (and the schema), without credentials: how errors name the store. */
export const locationOf = (url: string, schema?: string): string => {
  let where: string
  try {
    const u = new URL(url)
    where = `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    where = "postgres (unparsable URL)"
  }
  return schema === undefined ? where : `${where} schema ${schema}`
}

/** The store's location in context, as every StoreError of the store names it. */
export class PgLocation extends Context.Tag("mandate/store/PgLocation")<PgLocation, string>() {}

/**
 * The PostgreSQL transaction boundary for the SqlClient in context. Any failed statement aborts a
 * PostgreSQL transaction, so every failure inside a step (not undone by a savepoint) costs the step.
 */
export const makeTransaction = (sql: SqlClient.SqlClient, location: string): AtomicService["transaction"] =>
  makeSqlTransaction(sql, { store: "postgres", location, begin: "BEGIN", abandons: () => true })

/** Context: PgClient, SqlClient and Atomic for one pool. */
export const layer = (
  options: PgStoreOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | Atomic | PgLocation, StoreError> => {
  const schema = options.schema
  const location = locationOf(options.url ?? defaultUrl, schema)
  const opened = storeError("postgres.open", location)
  if (schema !== undefined && !validSchema.test(schema)) {
    return Layer.fail(new StoreError({ operation: "postgres.open", store: location, message: `invalid schema name ${schema}` }))
  }
  let url = options.url ?? defaultUrl
  if (schema !== undefined) {
    url += `${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`
  }
  const init = Layer.effectContext(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = makeTransaction(sql, location)
    if (schema !== undefined) {
      // Concurrent creators of one schema would race on its catalog row; serialize them.
      yield* transaction(Effect.zipRight(
        sql`SELECT pg_advisory_xact_lock(hashtextextended('mandate/schema', 0))`,
        sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      ))
    }
    return Context.make(Atomic, { transaction }).pipe(Context.add(PgLocation, location))
  }).pipe(Effect.mapError(opened)))
  return init.pipe(
    Layer.provideMerge(PgClient.layer({
      url: Redacted.make(url),
      maxConnections: options.maxConnections ?? 10,
      connectTimeout: Duration.millis(options.connectTimeoutMs ?? 5_000),
      ...(options.stream === undefined ? {} : { stream: options.stream })
    })),
    Layer.mapError(opened)
  )
}

/**
 * Applies the migrations of one store module. Concurrent migrators wait on one advisory lock, under
 * which the Migrator's table is created (see src/store/sql/migrations.ts).
 */
export const migrate = (set: StoreMigrations): Effect.Effect<void, StoreError, SqlClient.SqlClient | PgLocation> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const location = yield* PgLocation
    yield* runMigrations(set, {
      transaction: makeTransaction(sql, location),
      store: "postgres",
      location,
      prepare: (table) => [
        "SELECT pg_advisory_xact_lock(hashtextextended('mandate/migrations', 0))",
        // The Migrator's own table, as it would create it.
        `CREATE TABLE IF NOT EXISTS ${table} (
          migration_id integer primary key, created_at timestamp with time zone not null default now(), name text not null)`
      ]
    })
  })

export const PgStore = { layer, migrate, makeTransaction, defaultUrl } as const
