// Group commit for the embedded store: under `synchronous=FULL` every COMMIT is one
// fsync of the WAL, and one fsync per call capped the executor at a few hundred calls a second. Here
// one fiber, owned by the Layer's scope, takes the atomic steps that are queued (up to `maxBatch`,
// without waiting for more when fewer are there: an idle store adds no latency) and runs them in
// order inside one BEGIN IMMEDIATE ... COMMIT:
//   - each step is a savepoint of the batch (src/store/sql/transaction.ts nests them), so a step that
//     fails rolls back only its own writes and the others still commit;
//   - every caller is answered only after the batch's COMMIT returned: a step's effect succeeds only
//     once its writes are durable, as the AdmissionGate contract and Writ section 9 require;
//   - a batch whose BEGIN or COMMIT fails (or that the database abandoned, e.g. SQLITE_FULL) fails
//     every step in it with that StoreError, so no caller is told that a lost write was made.
// Steps run one at a time on the batcher fiber, so the batcher is also the admission gate of this
// process (Writ section 7: steps 7 to 10 atomic with other calls and with recording a revoke), and
// BEGIN IMMEDIATE keeps each batch alone against the file across processes (client.ts).
//
// A step submitted while its caller already holds a transaction on this connection (a nested
// Atomic step, or a store write made inside a step) joins that transaction as a savepoint instead
// of waiting for a batch that could only start after it.
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Chunk, Context, Deferred, Effect, Exit, Layer, Queue } from "effect"
import { Atomic, type AtomicService } from "../../accounting/reservations.js"
import { StoreError } from "../../accounting/store-error.js"
import { AdmissionGate, type AdmissionGateService } from "../../writ/executor/admission-gate.js"
import { makeTransaction } from "./client.js"

/** Most steps in one transaction. */
export const DEFAULT_MAX_BATCH = 64

export interface GroupCommitOptions {
  /** Most steps committed together. Default 64. */
  readonly maxBatch?: number
}

/** What the batcher has done: for tests and benchmarks (a batch is one COMMIT, one fsync). */
export interface GroupCommitStats {
  readonly batches: number
  readonly steps: number
  readonly largest: number
}

export interface GroupCommitService {
  /** Runs `step` as one savepoint of the next batch; succeeds once that batch committed. */
  readonly run: <A, E, R>(step: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  readonly stats: Effect.Effect<GroupCommitStats>
}

export class GroupCommit extends Context.Tag("mandate/store/sqlite/GroupCommit")<GroupCommit, GroupCommitService>() {}

interface Item {
  /** The step, with its caller's context. */
  readonly step: Effect.Effect<unknown, unknown>
  readonly done: Deferred.Deferred<unknown, unknown>
}

/** One turn of the event loop (its I/O callbacks run first), no timer. */
const turn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

const stopped = (location: string) =>
  new StoreError({ operation: "sqlite.groupCommit", store: location, message: "the store was closed before the step committed" })

/** The batcher over the SQLite connection in context, its fiber owned by the current scope. */
export const make = (options: GroupCommitOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqliteClient.SqliteClient
    const location = sql.config.filename
    const transaction = makeTransaction(sql, location)
    const maxBatch = Math.max(1, Math.floor(options.maxBatch ?? DEFAULT_MAX_BATCH))
    const queue = yield* Queue.unbounded<Item>()
    const stats = { batches: 0, steps: 0, largest: 0 }
    let closed = false

    const runBatch = (items: Chunk.Chunk<Item>) =>
      Effect.gen(function*() {
        const exits: Array<Exit.Exit<unknown, unknown>> = []
        const batch = yield* Effect.exit(transaction(Effect.forEach(items, (item) =>
          // A step's failure is its own: its savepoint is rolled back and the batch goes on.
          Effect.map(Effect.exit(transaction(item.step)), (exit) => void exits.push(exit)), { discard: true })))
        stats.batches++
        stats.steps += exits.length
        stats.largest = Math.max(stats.largest, exits.length)
        let i = 0
        for (const item of items) {
          // After COMMIT: each step's own outcome; a batch that did not commit fails every step.
          const exit = Exit.isSuccess(batch) ? exits[i] : batch
          yield* Deferred.done(item.done, exit ?? Exit.fail(stopped(location)))
          i++
        }
      }).pipe(
        // Interrupted mid-batch (the scope closing): nothing committed, every caller is told so.
        Effect.onInterrupt(() => Effect.forEach(items, (item) => Deferred.fail(item.done, stopped(location)), { discard: true }))
      )

    // The first step is taken as soon as there is one; then the batcher lets the event loop turn
    // once, so requests already read (whose handlers are about to submit their steps) join this
    // batch instead of each waiting out a COMMIT of its own: better-sqlite3 runs COMMIT and its
    // fsync synchronously, so nothing else runs meanwhile. When idle, that turn is all it costs.
    const take = Effect.gen(function*() {
      const first = yield* Queue.take(queue)
      yield* turn
      return Chunk.prepend(yield* Queue.takeUpTo(queue, maxBatch - 1), first)
    })
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(take, runBatch)))
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Effect.sync(() => (closed = true)), () =>
        Effect.flatMap(Queue.takeAll(queue), (left) =>
          Effect.forEach(left, (item) => Deferred.fail(item.done, stopped(location)), { discard: true })))
    )

    const run = <A, E, R>(step: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) => {
        if (open._tag === "Some") return transaction(step)
        // Once handed over the step runs, so its caller waits for the outcome whatever happens:
        // a caller that left could not be told that its writes were made.
        return Effect.uninterruptible(Effect.gen(function*() {
          if (closed) return yield* Effect.fail(stopped(location))
          const context = yield* Effect.context<R>()
          const done = yield* Deferred.make<A, E | StoreError>()
          yield* Queue.offer(queue, {
            step: Effect.provide(step, context) as Effect.Effect<unknown, unknown>,
            done: done as Deferred.Deferred<unknown, unknown>
          })
          return yield* Deferred.await(done)
        }))
      })

    return GroupCommit.of({ run, stats: Effect.sync(() => ({ ...stats })) })
  })

/** Section 7's admission gate as the batcher: every admission and revoke is a step of a batch. */
export const gateOf = (g: GroupCommitService): AdmissionGateService => ({
  admit: (_keys, step) => g.run(step),
  revoke: (_keys, step) => g.run(step)
})

/** The Atomic boundary as the batcher: a step outside any transaction joins the next batch. */
export const atomicOf = (g: GroupCommitService): AtomicService => ({ transaction: g.run })

/**
 * GroupCommit, the AdmissionGate and the Atomic built on it, over the SQLite store in context. Its
 * batcher fiber lives as long as the Layer.
 */
export const layer = (
  options: GroupCommitOptions = {}
): Layer.Layer<GroupCommit | AdmissionGate | Atomic, never, SqliteClient.SqliteClient> =>
  Layer.scopedContext(Effect.map(make(options), (g) =>
    Context.make(GroupCommit, g).pipe(Context.add(AdmissionGate, gateOf(g)), Context.add(Atomic, atomicOf(g)))))
