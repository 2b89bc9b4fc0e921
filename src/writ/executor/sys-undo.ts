// Section 8.1, `sys/undo`: reverses the effect of a tally this executor signed, at most once per
// tally identity, one reversal at a time per tally (later calls wait for the running one), and a
// reversal that began and never reported is `unknown_outcome`, never retried.
import { Deferred, Effect, FiberId, Option } from "effect"
import type { JsonObject } from "../../kernel/json.js"
import { verifyTallyObject } from "../tally.js"
import type { CheckedWrit } from "../writ.js"
import { finish, type FinishEnv } from "./finish.js"
import { operation, runApplication } from "./operation.js"
import { refuse, refuseUnavailable, type SignedRefusal, storeStep } from "./failures.js"
import type { AuditBase, Performed, StepEnv } from "./state.js"
import type { AcceptedCall, StoreError } from "./stores.js"

export const performUndo = (
  env: FinishEnv & StepEnv<"app" | "did" | "reversals", "reversing">,
  accepted: AcceptedCall,
  base: AuditBase | null,
  call: JsonObject,
  chain: ReadonlyArray<CheckedWrit>,
  stop: Deferred.Deferred<void>
): Effect.Effect<Performed> =>
  Effect.gen(function*() {
    const { reversing } = env.state
    const args = call.args as JsonObject
    // args.tally is an object (`malformed`).
    const target = args.tally
    if (typeof target !== "object" || target === null || Array.isArray(target)) return yield* refuse("malformed")
    // It passes section 6.1 with this executor's own key as signer; any failure is `not_reversible`.
    const checked = yield* verifyTallyObject(target as JsonObject, env.did).pipe(
      Effect.catchTag("WritError", () => refuse("not_reversible"))
    )
    const t = checked.value
    // The leaf of the chain is the tally's writ (`tally_mismatch`).
    if (chain[chain.length - 1].id !== t.writ) return yield* refuse("tally_mismatch")
    // rev is not null, now < rev.until by the executor's own clock, st is ok (`not_reversible`).
    const now = accepted.acc
    if (t.rev === null || !(now < t.rev.until) || t.st !== "ok") return yield* refuse("not_reversible")
    // The tally is held in the tally store (`not_reversible`).
    const tallyId = checked.id
    const held = yield* env.tallies.get(tallyId)
    if (Option.isNone(held)) return yield* refuse("not_reversible")
    // At most once per tally identity; one reversal at a time; waiters (section 8.1).
    while (true) {
      // Claim the tally, or wait for the reversal that holds it: one synchronous step, so two
      // fibers can never both claim.
      const claim = yield* Effect.sync(() => {
        const current = reversing.get(tallyId)
        if (current !== undefined) return { _tag: "wait" as const, current }
        const mine = Deferred.unsafeMake<boolean>(FiberId.none)
        reversing.set(tallyId, mine)
        return { _tag: "mine" as const, mine }
      })
      if (claim._tag === "wait") {
        // A reversal of this tally is running: wait for it, then look again.
        yield* Deferred.await(claim.current)
        continue
      }
      const mine = claim.mine
      return yield* Effect.gen(function*() {
        // Read under the claim, so a reversal that finished a moment ago is seen.
        const record = yield* env.reversals.get(tallyId)
        if (Option.isSome(record) && record.value.state === "succeeded") {
          // Done before: perform nothing, answer ok with the successful reversal's body.
          const r = record.value
          return yield* finish(env, accepted, Option.isSome(r.res) ? { st: "ok", res: r.res.value } : { st: "ok" }, Effect.void, base)
        }
        if (Option.isSome(record)) {
          // Begun and never reported (found after a restart, or its final write failed): store
          // loss is never proof that nothing happened.
          return yield* refuse("unknown_outcome")
        }
        // Durably record that the reversal has begun before performing it.
        yield* env.atomic.transaction(env.reversals.begin(tallyId, accepted.call)).pipe(storeStep("writ.undo.begin"))
        const outcome = yield* runApplication(env, operation(env, "undo", accepted, call, stop, held))
        const written = outcome.st === "ok"
          ? env.reversals.succeed(tallyId, accepted.call, outcome.res === undefined ? Option.none() : Option.some(outcome.res))
          : env.reversals.clear(tallyId)
        return yield* finish(env, accepted, { ...outcome, rev: undefined }, written, base)
      }).pipe(
        // Answered while the claim is held, so a waiter sees what this reversal left.
        failedOutcome(env, accepted, base),
        // However this ends, the claim is released and the waiters look again.
        Effect.ensuring(Effect.suspend(() => {
          if (reversing.get(tallyId) === mine) reversing.delete(tallyId)
          return Deferred.succeed(mine, true)
        }))
      )
    }
  }).pipe(failedOutcome(env, accepted, base))

/**
 * The operation's own checks (section 8.1) fail as its `failed` outcome, signed and stored; a
 * store it cannot read fails it with the executor's code.
 */
const failedOutcome = (env: FinishEnv, accepted: AcceptedCall, base: AuditBase | null) =>
<R>(self: Effect.Effect<Performed, SignedRefusal | StoreError, R>): Effect.Effect<Performed, never, R> =>
  self.pipe(
    Effect.catchTag("StoreError", refuseUnavailable),
    Effect.catchTag("SignedRefusal", (e) => finish(env, accepted, { st: "failed", code: e.reason }, Effect.void, base))
  )
