// Policies: each looks at a proposed action and contributes to one decision.
// A policy never touches a store: it says which limits the action must fit (`draws`, reserved all
// at once through accounting's Reservations by the guard, so the check and the spend are one
// atomic step across processes), how to lower a limit for this action (`caps`: the verification
// reserve), or a verdict it can give alone (`verdict`: the value rule, directives). Policies
// compose by concatenation; the first verdict that does not allow, in policy order, wins.
import { Effect } from "effect"
import type { Action, Directive, ValueEstimate } from "./model.js"
import { VERIFY_KIND } from "./model.js"
import { type DedupScope, fingerprint } from "./fingerprint.js"
import type { DecisionReason, LedgerError } from "./reason.js"
import { toNanos, type Usd } from "./usd.js"

/** One limit the action must fit: `used(key) + amount <= limit` (accounting/reservations.ts). */
export interface Draw {
  readonly key: string
  readonly limit: bigint
  readonly amount: bigint
  /** The decision's reason when this limit is the one that does not fit. */
  readonly reason: DecisionReason
  readonly policy: string
  /** What the draw measures, so settlement knows what the actual usage of it is. */
  readonly measure: "tokens" | "usd" | "count" | "dedup"
}

/** Lowers the limit of `key` by `by` for this action (a share kept for other actions). */
export interface Cap {
  readonly key: string
  readonly by: bigint
  readonly reason: DecisionReason
  readonly policy: string
}

export interface Verdict {
  readonly directive: Directive
  readonly reason: DecisionReason
  readonly policy: string
}

export interface Contribution {
  readonly draws: ReadonlyArray<Draw>
  readonly caps: ReadonlyArray<Cap>
  readonly verdicts: ReadonlyArray<Verdict>
}

export interface PolicyInput {
  readonly action: Action
  /** The value estimate the guard resolved: the action's own, or the estimator's. */
  readonly value: ValueEstimate | undefined
  /** Limit keys are namespaced so that ledgers sharing one store do not share budgets by accident. */
  readonly namespace: string
}

export interface Policy {
  readonly name: string
  readonly evaluate: (input: PolicyInput) => Effect.Effect<Contribution, LedgerError>
}

const empty: Contribution = { draws: [], caps: [], verdicts: [] }

/** Several policies as one: draws on one key merge (lowest limit, largest amount), caps add up. */
export const compose = (...policies: ReadonlyArray<Policy>): Policy => ({
  name: policies.map((p) => p.name).join("+") || "none",
  evaluate: (input) =>
    Effect.map(Effect.forEach(policies, (p) => p.evaluate(input)), (parts) => {
      const draws = new Map<string, Draw>()
      for (const d of parts.flatMap((p) => p.draws)) {
        const prev = draws.get(d.key)
        draws.set(d.key, prev === undefined ? d : {
          ...prev,
          limit: d.limit < prev.limit ? d.limit : prev.limit,
          amount: d.amount > prev.amount ? d.amount : prev.amount
        })
      }
      return { draws: [...draws.values()], caps: parts.flatMap((p) => p.caps), verdicts: parts.flatMap((p) => p.verdicts) }
    })
})

export const budgetKey = (namespace: string, measure: "tokens" | "usd", name: string) => `ledger/${namespace}/${measure}/${name}`

/** A hard, provider-neutral token budget over `Cost.tokens`. */
export const tokenBudget = (tokens: bigint, name = "tokens"): Policy => ({
  name: `token_budget:${name}`,
  evaluate: ({ action, namespace }) => Effect.succeed({
    ...empty,
    draws: [{ key: budgetKey(namespace, "tokens", name), limit: tokens, amount: BigInt(action.estimate.tokens), reason: "token_budget_exhausted", policy: `token_budget:${name}`, measure: "tokens" }]
  })
})

/** A USD budget in exact nano-dollars over `Cost.usd`. */
export const usdBudget = (usd: Usd, name = "usd"): Policy => ({
  name: `usd_budget:${name}`,
  evaluate: ({ action, namespace }) => Effect.succeed({
    ...empty,
    draws: [{ key: budgetKey(namespace, "usd", name), limit: toNanos(usd), amount: toNanos(action.estimate.usd), reason: "usd_budget_exhausted", policy: `usd_budget:${name}`, measure: "usd" }]
  })
})

/** At most `max` actions of `kind` (failed ones count: they were attempted and accounted). */
export const kindLimit = (kind: string, max: number): Policy => ({
  name: `kind_limit:${kind}`,
  evaluate: ({ action, namespace }) => Effect.succeed(action.kind !== kind ? empty : {
    ...empty,
    draws: [{ key: `ledger/${namespace}/kind/${kind}`, limit: BigInt(max), amount: 1n, reason: "kind_limit_reached", policy: `kind_limit:${kind}`, measure: "count" }]
  })
})

/**
 * Duplicate suppression in a dedup scope: one unit on the fingerprint's key, limit 1. A committed
 * action keeps it (a completed duplicate is refused); an in-flight one holds it; a failed or
 * aborted one gives it back (seed: "A failed action is accounted but not marked as a successfully
 * completed duplicate"), so a retry may run.
 */
export const dedup = (scope: DedupScope = "exact"): Policy => ({
  name: `dedup:${scope}`,
  evaluate: ({ action, namespace }) =>
    Effect.map(fingerprint(action, scope), (fp) => ({
      ...empty,
      draws: [{ key: `ledger/${namespace}/dedup/${fp}`, limit: 1n, amount: 1n, reason: "duplicate_action", policy: `dedup:${scope}`, measure: "dedup" }]
    }))
})

/**
 * The verification reserve: a share of a budget that only actions of kind `verify` may consume
 * (so generation cannot starve the checks). Every other action reserves against
 * `budget - reserve` on the same key, so the check stays one atomic reserve.
 */
export const verificationReserve = (reserve: { readonly tokens?: bigint; readonly usd?: Usd }, budgets: { readonly tokens?: string; readonly usd?: string } = {}): Policy => ({
  name: "verification_reserve",
  evaluate: ({ action, namespace }) => Effect.succeed(action.kind === VERIFY_KIND ? empty : {
    ...empty,
    caps: [
      ...(reserve.tokens !== undefined ? [{ key: budgetKey(namespace, "tokens", budgets.tokens ?? "tokens"), by: reserve.tokens, reason: "verification_reserve_protected" as const, policy: "verification_reserve" }] : []),
      ...(reserve.usd !== undefined ? [{ key: budgetKey(namespace, "usd", budgets.usd ?? "usd"), by: toNanos(reserve.usd), reason: "verification_reserve_protected" as const, policy: "verification_reserve" }] : [])
    ]
  })
})

/**
 * Value versus cost: deny when the expected gain is below `minRatio` times the estimated USD
 * cost. Without a value estimate the rule has nothing to weigh and allows (the estimator, when
 * configured, always provides one: a prior at worst).
 */
export const valueVsCost = (minRatio: Usd = "1" as Usd): Policy => ({
  name: "value_vs_cost",
  evaluate: ({ action, value }) => {
    if (value === undefined) return Effect.succeed(empty)
    // gain >= ratio × cost, exactly: both sides in nano-dollars, the ratio at 9 places.
    const lhs = toNanos(value.expected_gain_usd) * 10n ** 9n
    const rhs = toNanos(minRatio) * toNanos(action.estimate.usd)
    return Effect.succeed(lhs >= rhs ? empty : {
      ...empty,
      verdicts: [{ directive: { _tag: "deny" }, reason: "value_below_cost", policy: "value_vs_cost" }]
    })
  }
})

/**
 * An extension point (directive.ts): a policy that issues `directive` for the actions `when`
 * selects. The core's own policies only allow or deny.
 */
export const directivePolicy = (name: string, when: (action: Action) => Directive | undefined): Policy => ({
  name,
  evaluate: ({ action }) => {
    const d = when(action)
    return Effect.succeed(d === undefined || d._tag === "allow" ? empty : {
      ...empty,
      verdicts: [{ directive: d, reason: "directive_issued", policy: name }]
    })
  }
})
