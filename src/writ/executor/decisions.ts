// Section 7's decisions as events for the decision ledger (accepted, refused with its
// reason, the count and total consumed). The executor publishes to
// accounting's DecisionEvents and never imports the ledger (DESIGN.md); publishing never fails a
// call (a sink logs its own failures).
import { Effect } from "effect"
import { protocolDecision } from "../../accounting/decision-events.js"
import type { LimitSpec } from "../../accounting/reservations.js"
import type { StepEnv } from "./state.js"

export interface CallFacts {
  /** `from` of the call (null before step 1 gave the call an identity). */
  readonly principal: string | null
  /** The call's identity (section 1.5), or null. */
  readonly subject: string | null
  readonly op: string | null
}

/** A refusal: section 7 steps 1-2 (unsigned error) or 3-10 (signed `failed` tally), with its code. */
export const publishRefused = (env: StepEnv<"decisions">, facts: CallFacts, reason: string): Effect.Effect<void> =>
  env.decisions.publish(protocolDecision({ protocol: "writ", kind: "refused", ...facts, operation: facts.op, reason }))

/**
 * The name a step 10 draw is published under: `count:W` or `total:NAME:W`, W the first 8
 * characters of the writ whose limit it is (a chain draws on every writ that bounds it).
 */
const drawName = (key: string): string => {
  const [, kind, writ, name] = key.split("/")
  return kind === "count" ? `count:${writ.slice(0, 8)}` : `total:${name}:${writ.slice(0, 8)}`
}

/** Acceptance (step 10 passed): `accepted`, then `consumed` with every count and total drawn. */
export const publishAccepted = (env: StepEnv<"decisions">, facts: CallFacts, limits: ReadonlyArray<LimitSpec>): Effect.Effect<void> =>
  Effect.zipRight(
    env.decisions.publish(protocolDecision({ protocol: "writ", kind: "accepted", ...facts, operation: facts.op })),
    limits.length === 0
      ? Effect.void
      : env.decisions.publish(protocolDecision({
        protocol: "writ", kind: "consumed", ...facts, operation: facts.op,
        amounts: limits.map((l) => ({ name: drawName(l.key), amount: l.amount.toString() }))
      }))
  )
