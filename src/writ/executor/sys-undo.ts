// Section 8.1, `sys/undo`: reverses the effect of a tally this executor signed, at most once per
// tally identity, one reversal at a time per tally (later calls wait for the running one), and a
// reversal that began and never reported is `unknown_outcome`, never retried.
import { Deferred, Effect, Either, FiberId, Option } from "effect"
import type { JsonObject } from "../../kernel/json.js"
import { verifyTallyObject } from "../tally.js"
import type { CheckedWrit } from "../writ.js"
import type { CallAnswer } from "./answers.js"
import { finish } from "./finish.js"
import { operation, runApplication } from "./operation.js"
import { type ExecutorCode, STORE_UNAVAILABLE } from "./services.js"
import type { ExecutorEnv } from "./state.js"
import type { AcceptedCall } from "./stores.js"

export const performUndo = (
  env: ExecutorEnv,
  accepted: AcceptedCall,
  call: JsonObject,
  chain: ReadonlyArray<CheckedWrit>,
  stop: Deferred.Deferred<void>
): Effect.Effect<CallAnswer> =>
  Effect.gen(function*() {
    const { reversing } = env.state
    const fail = (code: ExecutorCode) => finish(env, accepted, { st: "failed", code }, Effect.void)
    const args = call.args as JsonObject
    // args.tally is an object (`malformed`).
    const target = args.tally
    if (typeof target !== "object" || target === null || Array.isArray(target)) return yield* fail("malformed")
    // It passes section 6.1 with this executor's own key as signer; any failure is `not_reversible`.
    const checked = yield* verifyTallyObject(target as JsonObject, env.did).pipe(Effect.either)
    if (Either.isLeft(checked)) return yield* fail("not_reversible")
    const t = checked.right.value
    // The leaf of the chain is the tally's writ (`tally_mismatch`).
    if (chain[chain.length - 1].id !== t.writ) return yield* fail("tally_mismatch")
    // rev is not null, now < rev.until by the executor's own clock, st is ok (`not_reversible`).
    const now = accepted.acc
    if (t.rev === null || !(now < t.rev.until) || t.st !== "ok") return yield* fail("not_reversible")
    // The tally is held in the tally store (`not_reversible`).
    const tallyId = checked.right.id
    const heldE = yield* env.tallies.get(tallyId).pipe(Effect.either)
    if (Either.isLeft(heldE)) return yield* fail(STORE_UNAVAILABLE)
    if (Option.isNone(heldE.right)) return yield* fail("not_reversible")
    const held = heldE.right
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
        const recordE = yield* env.reversals.get(tallyId).pipe(Effect.either)
        if (Either.isLeft(recordE)) return yield* fail(STORE_UNAVAILABLE)
        const record = recordE.right
        if (Option.isSome(record) && record.value.state === "succeeded") {
          // Done before: perform nothing, answer ok with the successful reversal's body.
          const r = record.value
          return yield* finish(env, accepted, Option.isSome(r.res) ? { st: "ok", res: r.res.value } : { st: "ok" }, Effect.void)
        }
        if (Option.isSome(record)) {
          // Begun and never reported (found after a restart, or its final write failed): store
          // loss is never proof that nothing happened.
          return yield* fail("unknown_outcome")
        }
        // Durably record that the reversal has begun before performing it.
        const begun = yield* env.atomic.transaction(env.reversals.begin(tallyId, accepted.call)).pipe(Effect.either)
        if (Either.isLeft(begun)) return yield* fail(STORE_UNAVAILABLE)
        const outcome = yield* runApplication(env, operation(env, "undo", accepted, call, stop, held))
        const written = outcome.st === "ok"
          ? env.reversals.succeed(tallyId, accepted.call, outcome.res === undefined ? Option.none() : Option.some(outcome.res))
          : env.reversals.clear(tallyId)
        return yield* finish(env, accepted, { ...outcome, rev: undefined }, written)
      }).pipe(
        // However this ends, the claim is released and the waiters look again.
        Effect.ensuring(Effect.suspend(() => {
          if (reversing.get(tallyId) === mine) reversing.delete(tallyId)
          return Deferred.succeed(mine, true)
        }))
      )
    }
  })
