// PostgreSQL's reserve step as one statement: `accounting_reserve`, a function the
// Migrator creates, does on the server what accounting/core.ts composes from the backend's
// primitives elsewhere, so no client round trip happens while a limit's row is locked. It joins the
// caller's transaction inside an Atomic step and is its own transaction outside one (there the
// store sends it batched, see reserve-batch.ts).
import type { SqlClient } from "@effect/sql"
import { Effect, Schema, String as Str } from "effect"
import type { ReserveStep } from "../../accounting/backend.js"
import type { Reservation } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import { reservationOp as op } from "../sql/reservations.js"
import { ReservationRow, reservationFromRow, rowFromReservation, UsageRow } from "../sql/rows.js"

/**
 * The reserve step on the server (see the module comment): the same-id lock, the idempotency read,
 * the reservation row, the limit rows locked in `p_sorted` order (accounting/core.ts's sorted key
 * order, the order settlement locks them in too), core.ts's rule (`firstShort`) over the
 * consumption read under those locks, and the draw, or nothing. `used` is in request order.
 */
export const reserveFunction = `
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

/** What accounting_reserve answers; `found_*` are the existing reservation's columns. */
export const StepRow = Schema.Struct({
  outcome: Schema.Literal("existing", "drawn", "short"),
  used: Schema.Array(UsageRow.fields.used),
  found_on_failure: Schema.NullOr(Schema.String),
  found_state: Schema.NullOr(Schema.String),
  found_limits: Schema.NullOr(Schema.String),
  found_consumed: Schema.NullOr(Schema.String)
})

/** The step answered by one row of accounting_reserve (or of a batch); an existing row is decoded too. */
export const decodeStep = (id: string, step: typeof StepRow.Type): Effect.Effect<ReserveStep, unknown> => {
  if (step.outcome !== "existing") return Effect.succeed({ _tag: step.outcome === "drawn" ? "Drawn" : "Short", used: step.used })
  return Effect.map(
    Schema.decodeUnknown(ReservationRow)({
      id,
      on_failure: step.found_on_failure,
      state: step.found_state,
      limits: step.found_limits,
      consumed: step.found_consumed
    }),
    (found) => ({ _tag: "Existing", reservation: reservationFromRow(found) })
  )
}

/** The reserve as one statement on the connection in context (the caller's step, or the pool's). */
export const singleReserveStep = (sql: SqlClient.SqlClient) => (r: Reservation): Effect.Effect<ReserveStep, StoreError> =>
  op("reserve", Effect.gen(function*() {
    const row = yield* Schema.encode(ReservationRow)(rowFromReservation(r))
    const rows = yield* sql`
      SELECT outcome, used, found_on_failure, found_state, found_limits, found_consumed
      FROM accounting_reserve(${row.id}, ${row.on_failure}, ${row.limits}, ${row.consumed},
        ${r.limits.map((l) => l.key)}::text[], ${sortedKeys(r)}::text[],
        ${r.limits.map((l) => l.limit.toString())}::numeric[], ${r.limits.map((l) => l.amount.toString())}::numeric[])`
    return yield* decodeStep(r.id, yield* Schema.decodeUnknown(StepRow)(rows[0]))
  }))

/** Distinct keys in core.ts's lock order (String.Order, as `sortedDistinct` there). */
export const sortedKeys = (r: Reservation): Array<string> => Array.from(new Set(r.limits.map((l) => l.key))).sort(Str.Order)

