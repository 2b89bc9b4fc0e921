// PostgreSQL Reservations, for many workers (processes) sharing one store. Isolation, at READ
// COMMITTED (each statement of a step sees what committed before it):
//   1. pg_advisory_xact_lock on the reservation id, so two steps on one id run one after the other
//      (the second sees the first's committed reservation and answers it as a replay);
//   2. one upsert that creates missing usage rows and row-locks every key of the request, in sorted
//      key order (the same order in every transaction, so reserves cannot deadlock each other);
//   3. the rule of accounting/core.ts on the latest committed consumption, then the writes, then
//      COMMIT releases the locks.
// A waiter on a row lock re-reads the row after the holder commits, so two reserves can never both
// take the last unit. Amounts are NUMERIC (exact, unbounded) exchanged as decimal strings.
//
// Reserve is one statement, `SELECT accounting_reserve(...)` (the function is a migration): steps
// 1-3 run on the server, in autocommit when the caller has no Atomic step open (the statement is its
// own transaction) and inside the caller's step otherwise. Measured on the composed step (issue 13
// item 5, `npm run bench -- reserve --diagnose`): 7 round trips per reserve (BEGIN, the id lock, the
// idempotency read, the lock upsert, the usage update, the insert, COMMIT), two tuple versions of
// the hot row per reserve, and the hot row locked across four of the round trips: 74% of the
// backends' samples waited on the lock holder's transaction (Lock:transactionid), 16% were the holder
// idle in transaction, waiting for the client's next statement. Now the lock is held from the upsert
// to the end of the statement's own commit, with no round trip inside, and the reservation row is
// written before the limit rows are locked. Settlement stays the composed step: it is not the path
// whose throughput one hot limit caps.
import type { SqlClient } from "@effect/sql"
import { Effect, type Layer, Option, Schema, String as Str } from "effect"
import type { ReservationBackend, ReservationStore, ReserveStep } from "../../accounting/backend.js"
import type { Atomic, AtomicService, Reservation, Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import type { StoreMigrations } from "../sql/migrations.js"
import {
  reservationMigrations,
  reservationOp as op,
  reservationRowOps,
  reservationsLayer,
  reservationStoreLayer,
  usageReader
} from "../sql/reservations.js"
import { ReservationRow, reservationFromRow, rowFromReservation, UsageRow } from "../sql/rows.js"
import { migrate, type PgLocation } from "./client.js"

/**
 * The reserve step on the server (see the module comment): the same-id lock, the idempotency read,
 * the reservation row, the limit rows locked in `p_sorted` order (accounting/core.ts's sorted key
 * order, the order settlement locks them in too), core.ts's rule (`firstShort`) over the
 * consumption read under those locks, and the draw, or nothing. `used` is in request order.
 */
const reserveFunction = `
CREATE OR REPLACE FUNCTION accounting_reserve(
  p_id text, p_on_failure text, p_limits text, p_consumed text,
  p_keys text[], p_sorted text[], p_limit numeric[], p_amount numeric[],
  OUT outcome text, OUT used text[], OUT found_on_failure text, OUT found_state text,
  OUT found_limits text, OUT found_consumed text)
LANGUAGE plpgsql AS $fn$
DECLARE
  cur numeric[];
BEGIN
  used := '{}';
  PERFORM pg_advisory_xact_lock(hashtextextended(p_id, 0));
  SELECT r.on_failure, r.state, r.limits, r.consumed
    INTO found_on_failure, found_state, found_limits, found_consumed
    FROM accounting_reservations AS r WHERE r.id = p_id;
  IF FOUND THEN
    outcome := 'existing';
    RETURN;
  END IF;
  -- The reservation row before the limit rows: the hot row lock is taken last and held least.
  INSERT INTO accounting_reservations (id, on_failure, state, limits, consumed)
    VALUES (p_id, p_on_failure, 'held', p_limits, p_consumed);
  -- Creates missing rows and locks every row, in p_sorted order; WHERE false locks an existing row
  -- without writing a new version of it.
  INSERT INTO accounting_usage AS u (key, used)
    SELECT t.k, 0 FROM unnest(p_sorted) WITH ORDINALITY AS t(k, n) ORDER BY t.n
    ON CONFLICT (key) DO UPDATE SET used = u.used WHERE false;
  SELECT array_agg(u.used ORDER BY t.n) INTO cur
    FROM unnest(p_keys) WITH ORDINALITY AS t(k, n) JOIN accounting_usage AS u ON u.key = t.k;
  used := coalesce(cur::text[], used);
  IF EXISTS (SELECT 1 FROM unnest(cur, p_amount, p_limit) AS c(used, amount, lim) WHERE c.used + c.amount > c.lim) THEN
    DELETE FROM accounting_reservations WHERE id = p_id;
    outcome := 'short';
    RETURN;
  END IF;
  UPDATE accounting_usage AS u SET used = u.used + d.amount
    FROM unnest(p_keys, p_amount) AS d(k, amount) WHERE u.key = d.k AND d.amount <> 0;
  outcome := 'drawn';
END
$fn$`

export const migrations: StoreMigrations = {
  table: reservationMigrations("NUMERIC").table,
  migrations: { ...reservationMigrations("NUMERIC").migrations, "2_reserve_function": [reserveFunction] }
}

const LockedUsage = Schema.Array(Schema.extend(Schema.Struct({ key: Schema.String }), UsageRow))

/** What accounting_reserve answers; `found_*` are the existing reservation's columns. */
const StepRow = Schema.Struct({
  outcome: Schema.Literal("existing", "drawn", "short"),
  used: Schema.Array(UsageRow.fields.used),
  found_on_failure: Schema.NullOr(Schema.String),
  found_state: Schema.NullOr(Schema.String),
  found_limits: Schema.NullOr(Schema.String),
  found_consumed: Schema.NullOr(Schema.String)
})

const reserveStep = (sql: SqlClient.SqlClient) => (r: Reservation): Effect.Effect<ReserveStep, StoreError> =>
  op("reserve", Effect.gen(function*() {
    const row = yield* Schema.encode(ReservationRow)(rowFromReservation(r))
    const rows = yield* sql`
      SELECT outcome, used, found_on_failure, found_state, found_limits, found_consumed
      FROM accounting_reserve(${row.id}, ${row.on_failure}, ${row.limits}, ${row.consumed},
        ${r.limits.map((l) => l.key)}::text[], ${sortedKeys(r)}::text[],
        ${r.limits.map((l) => l.limit.toString())}::numeric[], ${r.limits.map((l) => l.amount.toString())}::numeric[])`
    const step = yield* Schema.decodeUnknown(StepRow)(rows[0])
    if (step.outcome !== "existing") return { _tag: step.outcome === "drawn" ? "Drawn" : "Short", used: step.used } as const
    const found = yield* Schema.decodeUnknown(ReservationRow)({
      id: r.id,
      on_failure: step.found_on_failure,
      state: step.found_state,
      limits: step.found_limits,
      consumed: step.found_consumed
    })
    return { _tag: "Existing", reservation: reservationFromRow(found) } as const
  }))

/** Distinct keys in core.ts's lock order (String.Order, as `sortedDistinct` there). */
const sortedKeys = (r: Reservation): Array<string> => Array.from(new Set(r.limits.map((l) => l.key))).sort(Str.Order)

export const makePgBackend = (sql: SqlClient.SqlClient, atomic: AtomicService["transaction"]): ReservationBackend => ({
  atomic,
  lockId: (id) => op("lockId", sql`SELECT pg_advisory_xact_lock(hashtextextended(${id}, 0))`.pipe(Effect.asVoid)),
  ...reservationRowOps(sql),
  lockUsage: (keys) =>
    keys.length === 0 ? Effect.succeed(new Map()) : op("lockUsage", Effect.map(
      // DO UPDATE (not DO NOTHING) so existing rows are row-locked too; input order = lock order.
      Effect.flatMap(
        sql`
        INSERT INTO accounting_usage (key, used)
        SELECT k, 0 FROM unnest(${keys}::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n
        ON CONFLICT (key) DO UPDATE SET used = accounting_usage.used
        RETURNING key, used::text AS used`,
        Schema.decodeUnknown(LockedUsage)
      ),
      (rows) => new Map(rows.map((r) => [r.key, r.used] as const))
    )),
  addUsage: (deltas) =>
    deltas.length === 0 ? Effect.void : op("addUsage", sql`
      UPDATE accounting_usage AS u SET used = u.used + d.delta
      FROM unnest(${deltas.map(([k]) => k)}::text[], ${deltas.map(([, d]) => d.toString())}::numeric[]) AS d(key, delta)
      WHERE u.key = d.key`.pipe(Effect.asVoid)),
  used: (key) =>
    op("used", Effect.map(
      usageReader((k) => sql`SELECT used::text AS used FROM accounting_usage WHERE key = ${k}`)(key),
      Option.match({ onNone: () => 0n, onSome: (r) => r.used })
    )),
  reserveStep: reserveStep(sql)
})

/** The PostgreSQL ReservationStore on the database in context (PgStore.layer); applies its migrations. */
export const storeLayer: Layer.Layer<ReservationStore, StoreError, SqlClient.SqlClient | PgLocation | Atomic> = reservationStoreLayer(
  migrate,
  migrations,
  makePgBackend
)

/** Reservations (and its ReservationStore) on the PostgreSQL database in context. */
export const layer: Layer.Layer<Reservations | ReservationStore, StoreError, SqlClient.SqlClient | PgLocation | Atomic> = reservationsLayer(storeLayer)
