// A PostgreSQL Writ admission in one round trip: `writ_admit`, a function the Writ migrations
// create, does on the server the store work of section 7 steps 7 to 10 that the composed step
// (admission.ts inside writ-gate.ts's transaction) sends as about ten statements, each a round
// trip with its own socket write (measured: 10 round trips per refused call, 9 before an accepted
// call's operation and 6 to 12 after it). In section 7's order, as one statement and so one
// transaction, durable when it returns (synchronous_commit):
//   - the admission gate's locks (writ-gate.ts's `admissionLocks`, in ascending hash order);
//   - step 7: a forward call's chain against the revoke store, by identity or key-wide;
//   - step 9: the call store's entry under (leaf, id), returned as it is;
//   - step 10: `accounting_reserve` (reserve-step.ts) for the count and total limits, and step
//     9's pending entry, stamped with this worker (writ-worker.ts), only when the reserve drew.
// The executor has made every check that reads no store before it (admission-one.ts) and judges
// the reserve by accounting/core.ts's rule, so every refusal keeps its reason code.
import type { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { StoreError } from "../../accounting/store-error.js"
import type { StoredAdmission, StoredAdmissionStep } from "../../writ/executor/admission-gate.js"
import { ReservationRow, rowFromReservation } from "../sql/rows.js"
import { callEntryFromRow, CallRow, pendingRow } from "../sql/writ-rows.js"
import { op } from "../sql/writ-stores.js"
import type { GateKeys } from "../../writ/executor/admission-gate.js"
import { decodeStep, sortedKeys, StepRow } from "./reserve-step.js"

/** The advisory lock keys of a gated step (writ-gate.ts): (text, exclusive). */
export type LockKeys = ReadonlyArray<readonly [string, boolean]>

/** An admission's: shared on every writ and issuer of the chain, exclusive on the leaf. */
export const admissionLocks = (keys: GateKeys): LockKeys => {
  const leaf = keys.writs[keys.writs.length - 1]
  return [
    ...keys.writs.map((w) => [`w/${w}`, w === leaf] as const),
    ...keys.issuers.map((i) => [`i/${i}`, false] as const)
  ]
}

/** A revoke's: exclusive on the revoked writ, or on the issuer of a key-wide revoke. */
export const revokeLocks = (keys: GateKeys): LockKeys => [
  ...keys.writs.map((w) => [`w/${w}`, true] as const),
  ...keys.issuers.map((i) => [`i/${i}`, true] as const)
]

/** The migration creating writ_admit (accounting_reserve is resolved when it runs, not here). */
export const admitFunction = `
CREATE OR REPLACE FUNCTION writ_admit(
  p_locks text[], p_exclusive boolean[], p_writs text[], p_issuers text[], p_revocable boolean, p_stop text,
  p_leaf text, p_id text, p_call text, p_op text, p_acc bigint, p_standing smallint, p_chain text,
  p_chain_issuers text, p_exp bigint, p_worker integer,
  p_reservation text, p_on_failure text, p_limits text, p_consumed text,
  p_keys text[], p_sorted text[], p_limit numeric[], p_amount numeric[],
  OUT outcome text, OUT used text[], OUT found_on_failure text, OUT found_state text,
  OUT found_limits text, OUT found_consumed text,
  OUT c_call text, OUT c_op text, OUT c_acc float8, OUT c_standing smallint, OUT c_chain text,
  OUT c_issuers text, OUT c_exp float8, OUT c_reservation text, OUT c_state text, OUT c_tally text, OUT c_res text)
LANGUAGE plpgsql AS $fn$
DECLARE
  r record;
BEGIN
  -- The gate's locks, each hash once in its strongest mode, in ascending order (writ-gate.ts).
  PERFORM CASE WHEN l.x THEN pg_advisory_xact_lock(l.h) ELSE pg_advisory_xact_lock_shared(l.h) END
    FROM (SELECT h, bool_or(x) AS x
          FROM unnest(p_locks, p_exclusive) AS t(k, x), LATERAL hashtextextended(t.k, 0) AS h
          GROUP BY h ORDER BY h OFFSET 0) AS l;
  -- Step 7 (each statement reads what committed before it, the revokes we waited for included).
  IF p_revocable AND EXISTS (SELECT 1 FROM writ_revokes AS v
      WHERE (v.writ <> '*' AND v.writ = ANY(p_writs)) OR (v.writ = '*' AND v.iss = ANY(p_issuers))) THEN
    outcome := 'revoked';
    RETURN;
  END IF;
  IF p_stop = 'revocation' THEN
    outcome := 'stopped';
    RETURN;
  END IF;
  -- Step 9.
  SELECT k.call, k.op, k.acc::float8, k.standing, k.chain, k.issuers, k.exp::float8, k.reservation, k.state, k.tally, k.res
    INTO c_call, c_op, c_acc, c_standing, c_chain, c_issuers, c_exp, c_reservation, c_state, c_tally, c_res
    FROM writ_calls AS k WHERE k.leaf = p_leaf AND k.id = p_id;
  IF FOUND THEN
    outcome := 'found';
    RETURN;
  END IF;
  IF p_stop = 'replay' THEN
    outcome := 'stopped';
    RETURN;
  END IF;
  -- Step 10: the reserve writes nothing unless it drew.
  IF p_reservation IS NULL THEN
    outcome := 'recorded';
  ELSE
    SELECT * INTO r FROM accounting_reserve(p_reservation, p_on_failure, p_limits, p_consumed, p_keys, p_sorted, p_limit, p_amount);
    outcome := r.outcome; used := r.used; found_on_failure := r.found_on_failure; found_state := r.found_state;
    found_limits := r.found_limits; found_consumed := r.found_consumed;
    IF r.outcome <> 'drawn' THEN
      RETURN;
    END IF;
  END IF;
  INSERT INTO writ_calls (leaf, id, call, op, acc, standing, chain, issuers, exp, reservation, state, tally, res, worker)
    VALUES (p_leaf, p_id, p_call, p_op, p_acc, p_standing, p_chain, p_chain_issuers, p_exp, p_reservation, 'pending', NULL, NULL, p_worker);
END
$fn$`

const AdmitRow = Schema.Struct({
  outcome: Schema.Literal("revoked", "stopped", "found", "recorded", "drawn", "short", "existing"),
  // Decoded with the rest of the reserve's answer by StepRow.
  used: Schema.NullOr(Schema.Array(Schema.String)),
  found_on_failure: Schema.NullOr(Schema.String),
  found_state: Schema.NullOr(Schema.String),
  found_limits: Schema.NullOr(Schema.String),
  found_consumed: Schema.NullOr(Schema.String),
  c_call: Schema.NullOr(Schema.String),
  c_op: Schema.NullOr(Schema.String),
  c_acc: Schema.NullOr(Schema.Number),
  c_standing: Schema.NullOr(Schema.Number),
  c_chain: Schema.NullOr(Schema.String),
  c_issuers: Schema.NullOr(Schema.String),
  c_exp: Schema.NullOr(Schema.Number),
  c_reservation: Schema.NullOr(Schema.String),
  c_state: Schema.NullOr(Schema.String),
  c_tally: Schema.NullOr(Schema.String),
  c_res: Schema.NullOr(Schema.String)
})
const decodeAdmitRow = Schema.decodeUnknown(AdmitRow)
const encodeCall = Schema.encode(CallRow)
const encodeReservation = Schema.encode(ReservationRow)
const decodeCall = Schema.decodeUnknown(CallRow)

/** The schema's lock names (writ-gate.ts's `space`) and this worker's number. */
export interface AdmitContext {
  readonly space: string
  readonly worker: number
}

/** AdmissionGateService.admitInOne on `sql`: one statement, outside any caller's transaction. */
export const makeAdmitInOne = (sql: SqlClient.SqlClient, ctx: AdmitContext) =>
(a: StoredAdmission): Effect.Effect<StoredAdmissionStep, StoreError> =>
  Effect.gen(function*() {
    const locks = admissionLocks(a.keys)
    const row = yield* encodeCall(pendingRow(a.accepted))
    const r = a.reservation
    const reserved = r === null ? null : yield* encodeReservation(rowFromReservation(r))
    const rows = yield* sql`SELECT * FROM writ_admit(
      ${locks.map(([k]) => ctx.space + k)}::text[], ${locks.map(([, x]) => x)}::boolean[],
      ${a.keys.writs as Array<string>}::text[], ${a.keys.issuers as Array<string>}::text[], ${a.revocable}, ${a.stopAfter},
      ${row.leaf}, ${row.id}, ${row.call}, ${row.op}, ${row.acc}, ${row.standing}, ${row.chain},
      ${row.issuers}, ${row.exp}, ${ctx.worker},
      ${row.reservation}, ${reserved?.on_failure ?? null}, ${reserved?.limits ?? null}, ${reserved?.consumed ?? null},
      ${r === null ? null : r.limits.map((l) => l.key)}::text[], ${r === null ? null : sortedKeys(r)}::text[],
      ${r === null ? null : r.limits.map((l) => l.limit.toString())}::numeric[],
      ${r === null ? null : r.limits.map((l) => l.amount.toString())}::numeric[])`
    const got = yield* decodeAdmitRow(rows[0])
    switch (got.outcome) {
      case "revoked":
        return { _tag: "Revoked" } as const
      case "stopped":
        return { _tag: "Stopped" } as const
      case "recorded":
        return { _tag: "Recorded" } as const
      case "found": {
        const found = yield* decodeCall({
          leaf: a.accepted.leaf, id: a.accepted.id, call: got.c_call, op: got.c_op, acc: got.c_acc,
          standing: got.c_standing, chain: got.c_chain, issuers: got.c_issuers, exp: got.c_exp,
          reservation: got.c_reservation, state: got.c_state, tally: got.c_tally, res: got.c_res
        })
        return { _tag: "Found", entry: callEntryFromRow(found) } as const
      }
      default: {
        if (r === null) return yield* Effect.fail(new Error(`writ_admit reserved (${got.outcome}) for a call with no limits`))
        const step = yield* Effect.flatMap(Schema.decodeUnknown(StepRow)({ ...got, used: got.used ?? [] }), (s) => decodeStep(r.id, s))
        return { _tag: "Reserved", step } as const
      }
    }
  }).pipe(op("writ.admission"))
