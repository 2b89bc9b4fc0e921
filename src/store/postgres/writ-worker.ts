// The identity of one worker process among several serving one executor key on one schema (spec
// section 9, recovery after restart, with many processes). Each worker draws a number from
// `writ_workers_seq` and holds a session advisory lock on it, on a connection reserved for the
// worker's whole life: the lock is held exactly as long as the process (or its connection) lives,
// because PostgreSQL releases a session's locks when the session ends, a SIGKILL included.
//
// Pending calls and begun reversals are stamped with the worker running them. A worker starting up
// resolves only records whose worker holds no lock any more: a live worker's pending records are
// its running operations, not lost ones. Identities are never reused while records can name them
// (the sequence is 32-bit and cycles only after 2^31 worker starts), so a worker found gone cannot
// come back.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import { PgLocation } from "./client.js"

export interface WritWorkerService {
  /** This process's worker number, stamped on the records it is working on. */
  readonly id: number
  /** Of `ids`, the workers whose process is gone (no session holds their lock). */
  readonly gone: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>, StoreError>
}

export class WritWorker extends Context.Tag("mandate/store/postgres/WritWorker")<WritWorker, WritWorkerService>() {}

/**
 * The advisory lock space of this schema's workers: the two-key form (namespace, worker), whose
 * namespace is derived from the schema so deployments in one database do not see each other's.
 */
const NAMESPACE = "(hashtext('mandate/writ/worker/' || current_schema()) & 2147483647)"

const Ids = Schema.Array(Schema.Struct({ id: Schema.Number }))

/**
 * Draws this process's worker identity and holds its lock for the life of the scope (released
 * when the scope closes; by the server when the process dies). Needs the Writ migrations applied.
 */
export const make: Effect.Effect<WritWorkerService, StoreError, SqlClient.SqlClient | PgLocation | Scope.Scope> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const location = yield* PgLocation
    const failed = storeError("writ.worker", location)
    // A connection of its own, kept out of the pool for as long as the worker lives.
    const conn = yield* Effect.mapError(sql.reserve, failed)
    const run = (text: string, params: ReadonlyArray<unknown> = []) =>
      Effect.mapError(conn.executeUnprepared(text, params as Array<unknown>, undefined), failed)
    const drawn = yield* Effect.flatMap(
      run(`SELECT nextval('writ_workers_seq')::float8 AS id`),
      (rows) => Effect.mapError(Schema.decodeUnknown(Ids)(rows), failed)
    )
    const id = drawn[0].id
    yield* Effect.acquireRelease(
      run(`SELECT pg_advisory_lock(${NAMESPACE}, $1::integer)`, [id]),
      // The connection goes back to the pool: it must not keep the lock.
      () => Effect.ignore(run(`SELECT pg_advisory_unlock(${NAMESPACE}, $1::integer)`, [id]))
    )
    const gone = (ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.succeed([]) : Effect.gen(function*() {
        // pg_locks lists every granted advisory lock of the database; a worker is live while its
        // (namespace, worker) lock is among them.
        const rows = yield* sql`
          SELECT w.id::float8 AS id FROM unnest(${ids as Array<number>}::integer[]) AS w(id)
          WHERE NOT EXISTS (SELECT 1 FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.classid = ${sql.literal(NAMESPACE)}::oid AND l.objid = w.id::oid)`
        return (yield* Schema.decodeUnknown(Ids)(rows)).map((r) => r.id)
      }).pipe(Effect.mapError(failed))
    return { id, gone }
  })

/** This process's worker identity, held for the life of the Layer. */
export const layer: Layer.Layer<WritWorker, StoreError, SqlClient.SqlClient | PgLocation> = Layer.scoped(WritWorker, make)
