// Group commit for PostgreSQL reserves made outside any caller's step. A hot
// limit's row lock is held until the holder's COMMIT has been flushed to the WAL, so one row can
// take at most one reserve per WAL flush however short the statement is: measured with the
// one-statement reserve, the lock holder spent most of its hold in IO:WALSync. Concurrent reserves
// are therefore queued, and one fiber owned by the store's Layer sends whatever has queued as one
// statement, `accounting_reserve_batch`, which reserves each in turn (accounting_reserve, the rule
// of accounting/core.ts) and commits them with one flush. Nothing is weakened:
//   - each reserve is still all or nothing, and fails alone: when the batch statement fails (the
//     database refuses one reserve's write, a deadlock, a lost connection), nothing of it was
//     committed, and each of its reserves is sent again on its own, as one statement, so a refused
//     write fails only its reserve, with its message (a subtransaction per reserve would isolate it
//     too, but costs every batch);
//   - a lone reserve is sent as that one statement directly;
//   - the batch takes every lock it needs first, each kind in the one global order every step
//     uses (the ids' locks, then the limit rows in String.Order), so batches of several processes,
//     single reserves and settlements cannot deadlock one another;
//   - a reserve inside a caller's step never goes through here: it joins the caller's transaction.
import type { SqlClient } from "@effect/sql"
import { Cause, Chunk, Deferred, Exit, Metric, Option, Effect, Queue, Schema, type Scope, String as Str } from "effect"
import type { ReserveStep } from "../../accounting/backend.js"
import type { Reservation } from "../../accounting/reservations.js"
import { StoreError, storeError } from "../../accounting/store-error.js"
import { ReservationRow, rowFromReservation } from "../sql/rows.js"
import { decodeStep, StepRow } from "./reserve-step.js"

/** At most this many reserves in one statement (its input is bounded like any other). */
export const maxBatch = 64

/** Statements the batching fiber sent (a batch, or a reserve alone): reserves per flush, measurable. */
export const sentStatements = Metric.counter("mandate_reserve_statements_sent", { incremental: true })
/** Batches the server refused, whose reserves were then sent again one by one. */
export const batchFallbacks = Metric.counter("mandate_reserve_batch_fallbacks", { incremental: true })

/** The statements of the migration that creates accounting_reserve_batch (after accounting_reserve). */
export const reserveBatchFunctions: ReadonlyArray<string> = [`
CREATE OR REPLACE FUNCTION accounting_jsonb_texts(j jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS
  $fn$ SELECT coalesce(array_agg(x ORDER BY o), '{}') FROM jsonb_array_elements_text(j) WITH ORDINALITY AS t(x, o) $fn$`, `
CREATE OR REPLACE FUNCTION accounting_reserve_batch(p_items jsonb, p_ids text[], p_sorted text[])
RETURNS TABLE (item_no int, outcome text, used text[], found_on_failure text, found_state text,
  found_limits text, found_consumed text)
LANGUAGE plpgsql AS $fn$
DECLARE
  item jsonb;
  r record;
BEGIN
  PERFORM pg_advisory_xact_lock(s.h) FROM (SELECT DISTINCT hashtextextended(x, 0) AS h FROM unnest(p_ids) AS x) AS s ORDER BY s.h;
  INSERT INTO accounting_usage AS u (key, used)
    SELECT t.k, 0 FROM unnest(p_sorted) WITH ORDINALITY AS t(k, n) ORDER BY t.n
    ON CONFLICT (key) DO UPDATE SET used = u.used WHERE false;
  item_no := 0;
  FOR item IN SELECT e.value FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(value, o) ORDER BY e.o LOOP
    item_no := item_no + 1;
    SELECT * INTO r FROM accounting_reserve(item->>'id', item->>'on_failure', item->>'limits', item->>'consumed',
      accounting_jsonb_texts(item->'keys'), accounting_jsonb_texts(item->'sorted'),
      accounting_jsonb_texts(item->'limit')::numeric[], accounting_jsonb_texts(item->'amount')::numeric[]);
    outcome := r.outcome; used := r.used; found_on_failure := r.found_on_failure; found_state := r.found_state;
    found_limits := r.found_limits; found_consumed := r.found_consumed;
    RETURN NEXT;
  END LOOP;
END
$fn$`]

const BatchRow = Schema.Struct({ item_no: Schema.Int })

interface Pending {
  readonly reservation: Reservation
  readonly done: Deferred.Deferred<ReserveStep, StoreError>
}

const failed = storeError("reservations.reserve")

/** One statement for `items`; each item's answer (or failure) completes its Deferred. */
const runBatch = (sql: SqlClient.SqlClient, items: ReadonlyArray<Pending>) =>
  Effect.gen(function*() {
    const encoded = yield* Effect.forEach(items, ({ reservation: r }) =>
      Effect.map(Schema.encode(ReservationRow)(rowFromReservation(r)), (row) => ({
        id: r.id,
        on_failure: row.on_failure,
        limits: row.limits,
        consumed: row.consumed,
        keys: r.limits.map((l) => l.key),
        sorted: Array.from(new Set(r.limits.map((l) => l.key))).sort(Str.Order),
        limit: r.limits.map((l) => l.limit.toString()),
        amount: r.limits.map((l) => l.amount.toString())
      })))
    const ids = items.map((p) => p.reservation.id)
    const sorted = Array.from(new Set(items.flatMap((p) => p.reservation.limits.map((l) => l.key)))).sort(Str.Order)
    return yield* sql`
      SELECT item_no, outcome, used, found_on_failure, found_state, found_limits, found_consumed
      FROM accounting_reserve_batch(${JSON.stringify(encoded)}::jsonb, ${ids}::text[], ${sorted}::text[])`
  })

/**
 * Whether the server answered the batch statement with an error (a SQLSTATE): its transaction
 * was rolled back, so nothing of the batch committed.
 */
const refusedByServer = (cause: Cause.Cause<unknown>): boolean =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => false,
    onSome: (e) => {
      const code = (e as { cause?: { code?: unknown } }).cause?.code
      return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)
    }
  })

/**
 * Answers each reserve of a committed batch from its row. A row that does not decode fails its
 * reserve with a StoreError: the batch committed, so it must never be sent again (it would read
 * as a replay).
 */
const answer = (items: ReadonlyArray<Pending>, rows: ReadonlyArray<unknown>) =>
  Effect.forEach(items, (p, i) =>
    Effect.gen(function*() {
      const raw = rows[i]
      const head = yield* Schema.decodeUnknown(BatchRow)(raw)
      if (head.item_no !== i + 1) return yield* Effect.fail(new Error(`answer ${head.item_no} in place ${i + 1}`))
      return yield* Effect.flatMap(Schema.decodeUnknown(StepRow)(raw), (row) => decodeStep(p.reservation.id, row))
    }).pipe(
      Effect.mapError(failed),
      Effect.exit,
      Effect.flatMap((exit) => Deferred.complete(p.done, exit))
    ), { discard: true })

/**
 * The batched reserve step on `sql`: a queue and the fiber (owned by the Layer's scope) that sends
 * whatever has queued. A reserve waits for its own answer; `single` sends one reserve alone.
 */
export const batchedReserveStep = (
  sql: SqlClient.SqlClient,
  single: (r: Reservation) => Effect.Effect<ReserveStep, StoreError>
): Effect.Effect<(r: Reservation) => Effect.Effect<ReserveStep, StoreError>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Pending>()
    const closed = new StoreError({ operation: "reservations.reserve", message: "the store was closed before the reserve ran" })
    const alone = (p: Pending) =>
      Effect.flatMap(Effect.exit(Metric.increment(sentStatements).pipe(Effect.zipRight(single(p.reservation)))), (exit) =>
        Deferred.complete(p.done, exit))
    const send = (batch: Chunk.Chunk<Pending>) => {
      const items = Chunk.toReadonlyArray(batch)
      if (items.length === 1) return alone(items[0])
      return Effect.exit(Effect.zipRight(Metric.increment(sentStatements), runBatch(sql, items))).pipe(
        Effect.flatMap((exit) =>
          Exit.isSuccess(exit)
            ? answer(items, exit.value)
            : refusedByServer(exit.cause)
            // The batch committed nothing: each reserve again on its own, so a failure is only its own.
            ? Effect.zipRight(Metric.increment(batchFallbacks), Effect.forEach(items, alone, { concurrency: "unbounded", discard: true }))
            // Whether it committed is unknown (the connection was lost): sending it again could
            // answer a reserve that drew as a replay, so each fails, as a single statement would.
            : Effect.forEach(items, (p) => Deferred.fail(p.done, failed(Cause.squash(exit.cause))))
        ),
        // Interrupted (the store closing): whoever is still waiting is told, never left hanging.
        Effect.onExit(() => Effect.forEach(items, (p) => Deferred.fail(p.done, closed)))
      )
    }
    // After the first reserve arrives, one yield lets the fibers already running offer theirs, so
    // they share its flush instead of each costing one (without it, batches alternated 1 and 7).
    const next = Effect.gen(function*() {
      const first = yield* Queue.take(queue)
      yield* Effect.yieldNow()
      return Chunk.prepend(yield* Queue.takeUpTo(queue, maxBatch - 1), first)
    })
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(next, send)))
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Queue.takeAll(queue), (left) => Effect.forEach(left, (p) => Deferred.fail(p.done, closed))).pipe(
        Effect.zipRight(Queue.shutdown(queue))
      )
    )
    return (reservation) =>
      Effect.flatMap(Deferred.make<ReserveStep, StoreError>(), (done) =>
        Effect.zipRight(Queue.offer(queue, { reservation, done }), Deferred.await(done)))
  })
