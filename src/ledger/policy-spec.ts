// A policy as data: what `mandate ledger replay --policy` reads (and what a composition root may
// load to build its guard's policy). One Schema decodes the file; `toPolicy` builds the
// composed Policy in the order listed.
import { Effect, Schema } from "effect"
import { DedupScope } from "./fingerprint.js"
import { Kind } from "./model.js"
import { compose, dedup, kindLimit, type Policy, tokenBudget, usdBudget, valueVsCost, verificationReserve } from "./policy.js"
import { ledgerError, type LedgerError } from "./reason.js"
import { UsdNonNegative } from "./usd.js"

const Name = Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_-]{0,31}$/))
const Tokens = Schema.Int.pipe(Schema.nonNegative(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))

export const PolicyItem = Schema.Union(
  Schema.Struct({ type: Schema.Literal("token_budget"), tokens: Tokens, name: Schema.optional(Name) }),
  Schema.Struct({ type: Schema.Literal("usd_budget"), usd: UsdNonNegative, name: Schema.optional(Name) }),
  Schema.Struct({ type: Schema.Literal("kind_limit"), kind: Kind, max: Tokens }),
  Schema.Struct({ type: Schema.Literal("dedup"), scope: DedupScope }),
  Schema.Struct({ type: Schema.Literal("verification_reserve"), tokens: Schema.optional(Tokens), usd: Schema.optional(UsdNonNegative) }),
  Schema.Struct({ type: Schema.Literal("value_vs_cost"), min_ratio: Schema.optional(UsdNonNegative) })
)
export type PolicyItem = typeof PolicyItem.Type

export const PolicySpec = Schema.Struct({
  version: Schema.Literal(1),
  /** Limit-key namespace; ledgers with the same namespace on one store share their budgets. */
  namespace: Schema.optional(Name),
  policies: Schema.Array(PolicyItem).pipe(Schema.maxItems(64))
}).annotations({ identifier: "PolicySpec", parseOptions: { onExcessProperty: "error" } })
export type PolicySpec = typeof PolicySpec.Type

const item = (p: PolicyItem): Policy => {
  switch (p.type) {
    case "token_budget": return tokenBudget(BigInt(p.tokens), p.name)
    case "usd_budget": return usdBudget(p.usd, p.name)
    case "kind_limit": return kindLimit(p.kind, p.max)
    case "dedup": return dedup(p.scope)
    case "verification_reserve":
      return verificationReserve({ ...(p.tokens !== undefined ? { tokens: BigInt(p.tokens) } : {}), ...(p.usd !== undefined ? { usd: p.usd } : {}) })
    case "value_vs_cost": return valueVsCost(p.min_ratio)
  }
}

export const toPolicy = (spec: PolicySpec): Policy => compose(...spec.policies.map(item))

/** Decodes an untrusted policy document (already parsed JSON), failing with `invalid_policy`. */
export const decodePolicySpec = (u: unknown): Effect.Effect<PolicySpec, LedgerError> =>
  Schema.decodeUnknown(PolicySpec, { onExcessProperty: "error" })(u).pipe(
    Effect.mapError((e) => ledgerError("invalid_policy", e.message.slice(0, 500)))
  )
