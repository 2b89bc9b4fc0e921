// Checking the answer (SPEC-approval §5 steps 2–3, approval.json `judge`). The state was verified
// and its nonce consumed before this runs (§5 steps 1 and 4, see `checkState` and the store), so a
// replayed or stale approval never gets here. The plans are recomputed on every retry and the
// choice is found by plan hash: a plan that changed is asked about again, never run.
import { Effect, Predicate } from "effect"
import type { HashedPlan } from "./plan.js"
import { phraseMatches } from "./phrase.js"
import { atLeast } from "./policy.js"
import {
  askAgain,
  denied,
  notApproved,
  outOfBand,
  refused,
  type AskAgain,
  type Denied,
  type NotApproved,
  type OutOfBand,
  type Refused
} from "./reason.js"
import { phraseOf, type Phrases } from "./form.js"
import { MAX_ROUNDS, type RequestState } from "./state.js"
import type { Tightening } from "./tighten.js"

/** The person's answer to the form, as the client returned it (MCP `ElicitResult`). */
export interface Answer {
  readonly action: "accept" | "decline" | "cancel" | string
  readonly content?: Readonly<Record<string, unknown>>
}

export type Verdict = NotApproved | AskAgain | Refused | Denied | OutOfBand

const again = (state: RequestState, why: string): AskAgain | Refused =>
  state.round >= MAX_ROUNDS ? refused(`not approved after ${MAX_ROUNDS} tries`) : askAgain(why, state.round + 1)

/** Succeeds with the plan to run; fails with what to do instead. */
export const judgeAnswer = (
  state: RequestState,
  answer: Answer | undefined,
  recomputed: ReadonlyArray<HashedPlan>,
  policy: Tightening,
  phrases: Phrases
): Effect.Effect<HashedPlan, Verdict> =>
  Effect.gen(function* () {
    // §5 step 2: only a decline, a cancel or no answer at all is "not approved". Every accept is
    // judged by what it carries: a bare accept, or one without `confirm`, is a wrong phrase below
    // (§3 "a bare accept or an empty form never counts"), so it asks again and the third refuses.
    if (answer === undefined || answer.action !== "accept") return yield* Effect.fail(notApproved())
    const content: Readonly<Record<string, unknown>> = Predicate.isRecord(answer.content) ? answer.content : {}
    const chosen = typeof content.plan === "string" ? content.plan : state.plans.length === 1 ? state.plans[0] : undefined
    if (chosen === undefined || !state.plans.includes(chosen)) return yield* Effect.fail(refused("that plan was not offered"))
    const plan = recomputed.find((p) => p.planHash === chosen)
    if (plan === undefined) return yield* Effect.fail(again(state, "the plans changed; choose again"))
    // The policy is read on every call: a plan denied or held back since the form was shown.
    if (policy.deny.includes(plan.tool)) return yield* Effect.fail(denied(`your policy never allows ${plan.tool}`))
    if (atLeast(plan.risk, policy.outOfBand)) {
      return yield* Effect.fail(outOfBand(`risk is ${plan.risk}, which needs approval outside the chat`, plan.planHash))
    }
    const phrase = phraseOf(phrases, plan.planHash)
    if (!phraseMatches(content.confirm, phrase)) return yield* Effect.fail(again(state, `type "${phrase}" exactly to approve`))
    return plan
  })
