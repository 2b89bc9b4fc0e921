// The ledger's data model, one Effect Schema each (seed "Action, Cost, and
// TokenUsage", "Outcome", "Value estimate and estimator state"). Wire names are snake_case, as in
// the JSONL ledger; amounts of USD are exact decimal strings (usd.ts).
import { Either, Schema } from "effect"
import { JsonObject, jsonProblem } from "./json.js"
import { DecisionReason, ledgerError, type LedgerError } from "./reason.js"
import { Usd, UsdNonNegative } from "./usd.js"

/** A bounded identifier (action, run, task, principal ids): no spaces, no control characters. */
export const Id = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._:@/+=-]{1,128}$/)).annotations({ identifier: "Id" })

/** An action kind, e.g. `llm_call`, `tool.search`, `verify`: a short lowercase name. */
export const Kind = Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_.-]{0,47}$/)).annotations({ identifier: "Kind" })

/** The kind whose actions may draw on the verification reserve. */
export const VERIFY_KIND = "verify"

const Count = Schema.Int.pipe(Schema.nonNegative(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))

/**
 * Seed "Cost records total tokens, direct USD, latency, and application-defined risk". `tokens` is
 * the provider-neutral figure the hard token budget counts (seed: "The provider-neutral hard
 * ledger continues to use Cost.tokens").
 */
export const Cost = Schema.Struct({
  tokens: Count,
  usd: UsdNonNegative,
  latency_ms: Count,
  /** Application-defined; the ledger only records and sums it. */
  risk: Schema.Number.pipe(Schema.finite(), Schema.nonNegative())
}).annotations({ identifier: "Cost" })
export type Cost = typeof Cost.Type

export const zeroCost: Cost = { tokens: 0, usd: "0" as Usd, latency_ms: 0, risk: 0 }

/**
 * Seed "TokenUsage records additive uncached input, cached input, non-reasoning output, reasoning,
 * and total tokens": evidence for analysis and pricing, validated additive (reason
 * `token_usage_not_additive`).
 */
export const TokenUsage = Schema.Struct({
  uncached_input: Count,
  cached_input: Count,
  output: Count,
  reasoning: Count,
  total: Count
}).pipe(
  Schema.filter((u) =>
    u.uncached_input + u.cached_input + u.output + u.reasoning === u.total ||
    "token_usage_not_additive: total must equal uncached_input + cached_input + output + reasoning"
  )
).annotations({ identifier: "TokenUsage" })
export type TokenUsage = typeof TokenUsage.Type

/** Where a value estimate comes from (seed: explicit estimates remain; historical ones are observational). */
export const Provenance = Schema.Literal("explicit", "historical", "contextual", "prior")
export type Provenance = typeof Provenance.Type

/** Estimator identity and learned state (seed: `training_data_fingerprint` tells learned states apart). */
export const EstimatorState = Schema.Struct({
  id: Id,
  version: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._+-]{1,32}$/)),
  training_data_fingerprint: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{43}$/))
}).annotations({ identifier: "EstimatorState" })
export type EstimatorState = typeof EstimatorState.Type

export const ValueEstimate = Schema.Struct({
  /** Expected gain in USD (may be negative). */
  expected_gain_usd: Usd,
  /** Standard deviation of the gain, USD. */
  uncertainty_usd: UsdNonNegative,
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  sample_size: Count,
  provenance: Provenance,
  estimator: EstimatorState
}).annotations({ identifier: "ValueEstimate" })
export type ValueEstimate = typeof ValueEstimate.Type

/** Seed "An Action is proposed work", with what deduplication and the value rule need. */
export const Action = Schema.Struct({
  id: Id,
  kind: Kind,
  /** Fingerprint metadata: plain JSON only (fingerprint.ts). */
  metadata: JsonObject,
  estimate: Cost,
  tokens_estimate: Schema.optional(TokenUsage),
  principal: Schema.optional(Id),
  task_id: Schema.optional(Id),
  /** Agent state and phase, for the `once_per_state` and `once_per_phase` dedup scopes. */
  state: Schema.optional(Schema.String.pipe(Schema.maxLength(256))),
  phase: Schema.optional(Schema.String.pipe(Schema.maxLength(128))),
  /** 0 for a first attempt; the `retry_aware` dedup scope tells attempts apart by it. */
  retry: Schema.optional(Schema.Int.pipe(Schema.between(0, 1_000_000))),
  /** An explicit value estimate; otherwise the ValueEstimator is asked. */
  value: Schema.optional(ValueEstimate)
}).annotations({ identifier: "Action" })
export type Action = typeof Action.Type

type ActionProblem = "non_json_metadata" | "invalid_usd" | "token_usage_not_additive" | "invalid_action"

const member = (o: unknown, k: string): unknown => (typeof o === "object" && o !== null ? (o as Record<string, unknown>)[k] : undefined)

/**
 * The documented code for a proposed action that does not decode (README "The decision ledger"):
 * fingerprint metadata that is not plain JSON is `non_json_metadata` (seed "Protocol fingerprint
 * metadata must be JSON serializable"), a USD amount that is not an exact decimal of at most 9 places
 * `invalid_usd`, a TokenUsage whose parts do not add up `token_usage_not_additive`; anything else
 * (id, kind, a missing or mistyped member) `invalid_action`.
 */
const problemOf = (proposed: unknown): ActionProblem => {
  const metadata = member(proposed, "metadata")
  if (typeof metadata === "object" && metadata !== null && jsonProblem(metadata) !== undefined) return "non_json_metadata"
  const value = member(proposed, "value")
  const usd: ReadonlyArray<readonly [unknown, (u: unknown) => boolean]> = [
    [member(member(proposed, "estimate"), "usd"), Schema.is(UsdNonNegative)],
    [member(value, "expected_gain_usd"), Schema.is(Usd)],
    [member(value, "uncertainty_usd"), Schema.is(UsdNonNegative)]
  ]
  if (usd.some(([v, valid]) => typeof v === "string" && !valid(v))) return "invalid_usd"
  const t = member(proposed, "tokens_estimate")
  const parts = ["uncached_input", "cached_input", "output", "reasoning", "total"].map((k) => member(t, k))
  if (parts.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) {
    const [a, b, c, d, total] = parts as Array<number>
    if (a + b + c + d !== total) return "token_usage_not_additive"
  }
  return "invalid_action"
}

const validateAction = Schema.validateEither(Action)

/**
 * A proposed action, decoded; failing with its documented reason code (problemOf) and the Schema's
 * detail. A plain function (an Either is also an Effect): the guard decodes every action.
 */
export const decodeAction = (proposed: unknown): Either.Either<Action, LedgerError & { readonly reason: ActionProblem }> =>
  Either.mapLeft(validateAction(proposed), (e) =>
    ledgerError(problemOf(proposed), e.message.replace(/\s*\n\s*/g, " ").slice(0, 500)) as LedgerError & { readonly reason: ActionProblem })

/** Execution modes (seed "Applied decision versus recommendation"). */
export const Mode = Schema.Literal("enforce", "shadow", "recommend")
export type Mode = typeof Mode.Type

/**
 * Seed "Directives": adapter instructions. The core produces `allow` and `deny`; the others are
 * extension points a policy may issue, with the contract stated in directive.ts.
 */
export const Directive = Schema.Union(
  Schema.TaggedStruct("allow", {}),
  Schema.TaggedStruct("deny", {}),
  /** Run this action instead (re-evaluated once by the guard). */
  Schema.TaggedStruct("modify", { action: Schema.suspend((): Schema.Schema<Action, typeof Action.Encoded> => Action) }),
  /** Not now: propose it again after `after_ms`. Nothing is reserved. */
  Schema.TaggedStruct("defer", { after_ms: Count }),
  /** Do not run: the result of the recorded action `action_id` answers it. */
  Schema.TaggedStruct("reuse", { action_id: Id }),
  /** Stop the agent: no further action should be proposed. */
  Schema.TaggedStruct("stop", {}),
  /** Run a `verify` action first, then propose this one again. */
  Schema.TaggedStruct("force_verify", {})
).annotations({ identifier: "Directive" })
export type Directive = typeof Directive.Type

/** The seed's name for it: "The universal protocol represents adapter instructions as AgentDirective values". */
export const AgentDirective = Directive
export type AgentDirective = Directive

export const allow: Directive = { _tag: "allow" }
export const deny: Directive = { _tag: "deny" }

/**
 * Seed: `allowed` is what the mode applies; `recommended` what the policy said before a
 * non-blocking override. Enforce: allowed = recommended; shadow and recommend: allowed is true.
 */
export const Decision = Schema.Struct({
  action_id: Id,
  mode: Mode,
  allowed: Schema.Boolean,
  recommended: Schema.Boolean,
  reason: DecisionReason,
  directive: Directive,
  /** The policy whose verdict decided (the first that did not allow), when one did not allow. */
  policy: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  fingerprint: Schema.String
}).annotations({ identifier: "Decision" })
export type Decision = typeof Decision.Type

/**
 * Seed "An Outcome describes a verified task-level result. It does not automatically assign causal
 * credit to preceding actions": the actions are listed as context, not as causes.
 */
export const Outcome = Schema.Struct({
  task_id: Id,
  result: Schema.Literal("success", "failure", "partial"),
  verified: Schema.Boolean,
  /** Who or what verified it (a test suite, a person, a checker). */
  verifier: Id,
  value_usd: Schema.optional(Usd),
  action_ids: Schema.Array(Id).pipe(Schema.maxItems(10_000))
}).annotations({ identifier: "Outcome" })
export type Outcome = typeof Outcome.Type
