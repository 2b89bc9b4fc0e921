// Several executor workers on one PostgreSQL schema in this process: each worker is its own pool,
// worker identity and executor over the same executor key (src/store/postgres/writ-stores.ts).
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as PgStore from "../../src/store/postgres/client.js"
import * as PgWrit from "../../src/store/postgres/writ-stores.js"
import type { ExecutorService } from "../../src/writ/executor/executor.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import type { ApplicationService } from "../../src/writ/executor/services.js"
import { type Key, rig } from "../writ-executor/fixtures.js"

export { pgReachable, uniqueSchema } from "../accounting/pg.js"

/** Drops a test's schema (its tables, sequence and everything in it). */
export const dropSchema = (schema: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(
    Effect.provide(PgStore.layer())
  ))

export interface Worker {
  readonly executor: ExecutorService
  readonly context: Context.Context<PgWrit.PgWritContext>
  /** Ends the worker now: its pool closes (its identity lock goes) and unfinished work stays pending. */
  readonly crash: Effect.Effect<void>
}

/** One worker's stores on `schema`, in a scope of its own (its sockets `stream`'s, when given). */
export const openStores = (schema: string, stream?: PgStore.PgStoreOptions["stream"]) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const options = { schema, maxConnections: 4, connectTimeoutMs: 60_000, ...(stream === undefined ? {} : { stream }) }
    const context = yield* Layer.buildWithScope(PgWrit.layer(options), scope).pipe(Effect.orDie)
    return { context, scope, close: Scope.close(scope, Exit.void) }
  })

/** A worker: stores on `schema` and an executor with `key` over them, recovered as `writ serve` starts one. */
export const startWorker = (
  schema: string,
  options: { readonly executorKey: Key; readonly accept: ReadonlyArray<Key>; readonly app: ApplicationService }
): Effect.Effect<Worker & { readonly resolved: number }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stores = yield* openStores(schema)
    const executor = yield* rig(stores.context as unknown as Context.Context<StoreContext>, { ...options, shutdownGrace: 0 }).pipe(
      Scope.extend(stores.scope)
    )
    yield* Effect.addFinalizer(() => stores.close)
    const resolved = yield* Effect.orDie(executor.recover)
    return { executor, context: stores.context, crash: stores.close, resolved }
  })
