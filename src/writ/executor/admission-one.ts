// Section 7 steps 7 to 10 when the admission gate's store does their store work as one step of
// its own (AdmissionGateService.admitInOne; PostgreSQL: one statement, one round trip), instead
// of the composed step of admission.ts (a transaction of several statements). The answers are the
// same, check for check, in section 7's order:
//   - step 8's checks read no store (the peer binding, section 7.6; standing or forward), so they
//     are made first and the store is told to stop after step 7: a revoked chain is still
//     answered `revoked`, as step 7 comes first;
//   - step 10's request is validated here as accounting/core.ts validates it, and an invalid one
//     stops the store after step 9 (a recorded call is still answered from the record);
//   - the store's reserve is judged by core.ts's rule (judgeReserve), so its errors map to the
//     reason codes the composed step gives them.
import { Deferred, Effect, Either, type Option } from "effect"
import { heldReservation, judgeReserve, validateReserve } from "../../accounting/core.js"
import type { LimitSpec } from "../../accounting/reservations.js"
import { StoreError } from "../../accounting/store-error.js"
import { type CheckedCall, checkForward, checkStanding } from "../call.js"
import type { Json, JsonObject } from "../../kernel/json.js"
import type { CheckedWrit } from "../writ.js"
import type { AdmissionGateService } from "./admission-gate.js"
import { refusalOf, refuse, type SignedRefusal, storeStep } from "./failures.js"
import { checkPeer } from "./live-checks.js"
import { type Peer, STORE_UNAVAILABLE } from "./services.js"
import type { Running, StepEnv } from "./state.js"
import type { AcceptedCall } from "./stores.js"

/** What step 9 found, or that the call was accepted. */
export type Found =
  | { readonly _tag: "final"; readonly tally: JsonObject; readonly res: Option.Option<Json> }
  | { readonly _tag: "pending"; readonly accepted: AcceptedCall }
  | { readonly _tag: "accepted"; readonly accepted: AcceptedCall; readonly stop: Deferred.Deferred<void> }

/** The call as the store's step takes it. */
export interface OneStepCall {
  readonly checked: CheckedCall
  readonly chain: ReadonlyArray<CheckedWrit>
  readonly peer: Peer
  readonly standing: boolean
  readonly accepted: AcceptedCall
  readonly limits: ReadonlyArray<LimitSpec>
}

/** Steps 7 to 10 through `admitInOne` (see the module comment). */
export const admitInOne = (
  env: StepEnv<"peers", "running">,
  admitStep: NonNullable<AdmissionGateService["admitInOne"]>,
  c: OneStepCall
): Effect.Effect<Found, SignedRefusal | StoreError> =>
  Effect.gen(function*() {
    const { accepted, checked, standing } = c
    const { state } = env
    // Step 8, before the store: its refusal stands unless the store finds the chain revoked.
    const step8 = yield* Effect.either(Effect.zipRight(
      checkPeer(env, c.peer, checked.value.from),
      Effect.mapError(standing ? checkStanding(checked, c.chain) : checkForward(checked, c.chain), refusalOf)
    ))
    const request = accepted.reservation === null
      ? null
      : { id: accepted.reservation, limits: c.limits, onFailure: "consume" as const }
    // A request this executor built wrongly is no less a refusal to run (section 9).
    const valid = request === null ? true : Either.isRight(yield* Effect.either(validateReserve(request)))
    // The running entry exists before the store's step commits, as in the composed step (a
    // revoke recorded after the commit, here or by another worker, must find it to stop it). A
    // copy of this call admitted here at the same time keeps its entry; whichever copy is accepted
    // owns the entry then, and takes over a stop already raised on the other's.
    const run: Running = { forward: !standing, chain: accepted.chain, issuers: accepted.issuers, stop: yield* Deferred.make<void>() }
    if (!state.running.has(checked.id)) state.running.set(checked.id, run)
    const drop = Effect.sync(() => {
      if (state.running.get(checked.id) === run) state.running.delete(checked.id)
    })
    const found = yield* admitStep({
      keys: { writs: accepted.chain, issuers: accepted.issuers },
      revocable: !standing,
      stopAfter: Either.isLeft(step8) ? "revocation" : valid ? null : "replay",
      accepted,
      reservation: request === null || !valid ? null : heldReservation(request)
    }).pipe(
      storeStep("writ.admission"),
      Effect.flatMap((step): Effect.Effect<Found, SignedRefusal | StoreError> => {
        switch (step._tag) {
          case "Revoked":
            return refuse("revoked")
          case "Stopped":
            return Either.isLeft(step8) ? Effect.fail(step8.left) : refuse(STORE_UNAVAILABLE)
          case "Found": {
            const e = step.entry
            return Effect.succeed(
              e.state === "final" ? { _tag: "final", tally: e.tally, res: e.res } : { _tag: "pending", accepted: e.accepted }
            )
          }
          case "Recorded":
            return Effect.succeed({ _tag: "accepted", accepted, stop: run.stop })
          case "Reserved":
            if (request === null) return Effect.fail(new StoreError({ operation: "writ.admission", message: "a reserve answered for a call with no limits" }))
            return judgeReserve(request, step.step).pipe(
              Effect.flatMap((reserved): Effect.Effect<Found, StoreError> =>
                // The store records the call only with a reserve it drew. An existing reservation
                // of this call's id without its call cannot arise (both commit in one step).
                reserved.replayed
                  ? Effect.fail(new StoreError({ operation: "writ.admission", message: `reservation ${request.id} exists without its call` }))
                  : Effect.succeed({ _tag: "accepted", accepted, stop: run.stop })
              ),
              Effect.catchTags({
                LimitExhausted: (e) => refuse(e.key.startsWith("writ/count/") ? "count_exhausted" : "total_exhausted"),
                ReservationConflict: () => refuse(STORE_UNAVAILABLE),
                ReservationInvalid: () => refuse(STORE_UNAVAILABLE)
              })
            )
        }
      }),
      // Refused, or not durable: the entry goes (the composed step takes it back the same way).
      Effect.tapErrorCause(() => drop)
    )
    if (found._tag !== "accepted") {
      yield* drop
      return found
    }
    const held = state.running.get(checked.id)
    if (held !== run) {
      // Another copy's entry: this copy is the one accepted, so the entry is its, with any stop.
      if (held !== undefined && (yield* Deferred.isDone(held.stop))) yield* Deferred.succeed(run.stop, undefined)
      state.running.set(checked.id, run)
    }
    return found
  })
