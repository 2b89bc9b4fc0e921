// Section 7 step 12: sign the final tally and persist it. The final tally, the call store, the
// tally store, the call's audit entry and (for sys/undo) the reversal store are written in one
// `Atomic` step; if that fails the answer is a pending tally (section 9), which is what the
// durable record resolves to after a restart.
import { Effect, Option } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import { storeStep } from "./failures.js"
import { ResolvedElsewhere, storedResolution } from "./ownership.js"
import { APPLICATION_ERROR, type Outcome } from "./services.js"
import { type AuditBase, type Performed, signWith, type StepEnv } from "./state.js"
import type { AcceptedCall, StoreError } from "./stores.js"
import { identity, signPending, signOutcome } from "./tally-sign.js"

/** `used` covering the sub-tallies' (section 6, section 7.5): each name at least the sum below. */
const coverSubs = (used: Readonly<Record<string, number>>, sub: ReadonlyArray<JsonObject>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(used)) if (Number.isSafeInteger(v) && v >= 0) out[k] = v
  const sums: Record<string, number> = {}
  for (const s of sub) {
    const u = s.used
    if (typeof u !== "object" || u === null || Array.isArray(u)) continue
    for (const [k, v] of Object.entries(u as Record<string, unknown>)) {
      if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) sums[k] = (sums[k] ?? 0) + v
    }
  }
  for (const [k, v] of Object.entries(sums)) if ((out[k] ?? 0) < v) out[k] = v
  return out
}

/** What step 12 reads: the stores it writes in one step, the key it signs with, and what
 * tells it whether the call delegated (section 7.5). */
export type FinishEnv = StepEnv<
  "signer" | "atomic" | "calls" | "tallies" | "auditLog" | "reservations" | "delegations",
  "delegating" | "recovering"
>

/**
 * Step 12 for `accepted` with `outcome`; `reversal` is sys/undo's reversal-store write (8.1);
 * `base` the call's audit fields, written in the same step (section 9.3), if it has them here.
 */
export const finish = (
  env: FinishEnv,
  accepted: AcceptedCall,
  outcome: Outcome,
  reversal: Effect.Effect<void, StoreError>,
  base: AuditBase | null
): Effect.Effect<Performed> =>
  Effect.gen(function*() {
    const { state } = env
    const sign = signWith(env)
    const res = outcome.res === undefined ? Option.none<Json>() : Option.some(outcome.res)
    // Only work that delegated (in this process, or any work found after a restart) has
    // issued writs or sub-tallies to read back (section 7.5).
    const { wrt, sub } = state.delegating.has(accepted.call) || state.recovering
      ? yield* env.delegations.forCall(accepted.leaf, accepted.id).pipe(storeStep("writ.finish"))
      : { wrt: [] as ReadonlyArray<JsonObject>, sub: [] as ReadonlyArray<JsonObject> }
    const tally = yield* sign(signOutcome({
      call: accepted.call,
      writ: accepted.leaf,
      op: accepted.op,
      acc: accepted.acc,
      st: outcome.st,
      code: outcome.st === "ok" ? null : (outcome.code ?? APPLICATION_ERROR),
      res,
      used: coverSubs(outcome.used ?? {}, sub),
      rev: accepted.standing || outcome.rev === undefined ? null : outcome.rev,
      sub,
      wrt
    }))
    yield* env.atomic.transaction(Effect.gen(function*() {
      // Another process took the record over after this one's lease lapsed (section 9): nothing
      // of this step is written, and its resolution is the answer (ownership.ts).
      if (!(yield* env.calls.finalize(accepted.leaf, accepted.id, tally, res))) return yield* new ResolvedElsewhere()
      yield* env.tallies.put({
        tally: identity(tally),
        call: accepted.call,
        acc: accepted.acc,
        forward: !accepted.standing,
        chain: accepted.chain,
        issuers: accepted.issuers,
        object: tally,
        res
      })
      yield* reversal
      // The call's audit entry goes in the same step (one commit instead of two, section 9.3).
      if (base !== null) {
        yield* env.auditLog.append({
          ...base,
          outcome: String(tally.st),
          reason: outcome.st === "ok" ? null : (outcome.code ?? APPLICATION_ERROR),
          signed: identity(tally)
        })
      }
      // The consumption stays whatever the outcome (section 7.3); settling only closes the record.
      if (accepted.reservation !== null) {
        const settle = outcome.st === "ok"
          ? env.reservations.commit(accepted.reservation)
          : env.reservations.settleFailure(accepted.reservation)
        yield* settle.pipe(Effect.catchIf((e) => e._tag !== "StoreError", () => Effect.void))
      }
    })).pipe(storeStep("writ.finish"))
    return { answer: { _tag: "tally", tally, res } as const, audited: base !== null }
  }).pipe(
    Effect.catchTag("ResolvedElsewhere", () => storedResolution(env, accepted)),
    // Section 9: performed but not persisted; answer what the durable record will resolve to.
    Effect.catchTag("StoreError", (e) =>
      Effect.gen(function*() {
        yield* Effect.logWarning(`final tally not persisted (${e.operation}): ${e.message}`)
        const tally = yield* signWith(env)(signPending(accepted.call, accepted.leaf, accepted.op, accepted.acc))
        return { answer: { _tag: "tally", tally, res: Option.none() } as const, audited: false }
      }))
  )
