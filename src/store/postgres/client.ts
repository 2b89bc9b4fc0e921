// The PostgreSQL connection for stores shared by many worker processes (one executor key served by
// several workers). Each Layer is one pool; `schema` isolates a deployment or a test run (the pool's
// connections get it as search_path, so store code uses unqualified table names).
//
// Transactions run at READ COMMITTED. Race-freedom of read-check-write steps comes from explicit
// locks taken inside the transaction (row locks with FOR UPDATE / upsert, transaction-scoped
// advisory locks), not from SERIALIZABLE: a waiter then sees the winner's committed row and decides
// again, instead of failing with a serialization error that would need a retry of the caller's work.
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import { Atomic, type AtomicService } from "../../accounting/reservations.js"
import { StoreError, storeError } from "../../accounting/store-error.js"
import { type Migration, runMigrations } from "../sql/migrations.js"

export type { Migration } from "../sql/migrations.js"

export const defaultUrl = "postgres://postgres@127.0.0.1:5432/test"

export interface PgStoreOptions {
  /** Connection URL; default postgres://postgres@127.0.0.1:5432/test. */
  readonly url?: string
  /** Schema to create (if absent) and use as search_path. Default: the server's default. */
  readonly schema?: string
  readonly maxConnections?: number
  readonly connectTimeoutMs?: number
}

const validSchema = /^[a-z_][a-z0-9_]{0,62}$/

/** The PostgreSQL transaction boundary for the SqlClient in context. */
export const makeTransaction = (sql: SqlClient.SqlClient): AtomicService["transaction"] =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    sql.withTransaction(self).pipe(
      Effect.mapError((e) => (e instanceof SqlError ? storeError("postgres.transaction")(e) : e))
    )

/** Context: PgClient, SqlClient and Atomic for one pool. */
export const layer = (
  options: PgStoreOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | Atomic, StoreError> => {
  const schema = options.schema
  if (schema !== undefined && !validSchema.test(schema)) {
    return Layer.fail(new StoreError({ operation: "postgres.open", message: `invalid schema name ${schema}` }))
  }
  let url = options.url ?? defaultUrl
  if (schema !== undefined) {
    url += `${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`
  }
  const init = Layer.effectContext(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (schema !== undefined) {
      // Concurrent creators of one schema would race on its catalog row; serialize them.
      yield* sql.withTransaction(Effect.zipRight(
        sql`SELECT pg_advisory_xact_lock(hashtextextended('mandate/schema', 0))`,
        sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      ))
    }
    return Context.make(Atomic, { transaction: makeTransaction(sql) })
  }).pipe(Effect.mapError(storeError("postgres.open"))))
  return init.pipe(
    Layer.provideMerge(PgClient.layer({
      url: Redacted.make(url),
      maxConnections: options.maxConnections ?? 10,
      connectTimeout: Duration.millis(options.connectTimeoutMs ?? 5_000)
    })),
    Layer.mapError((e) => (e instanceof StoreError ? e : storeError("postgres.open")(e)))
  )
}

/** Applies `migrations` (named, once each); concurrent migrators wait on one advisory lock. */
export const migrate = (
  migrations: ReadonlyArray<Migration>
): Effect.Effect<void, StoreError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    runMigrations(
      makeTransaction(sql),
      migrations,
      "SELECT pg_advisory_xact_lock(hashtextextended('mandate/migrations', 0))"
    ))

export const PgStore = { layer, migrate, makeTransaction, defaultUrl } as const
