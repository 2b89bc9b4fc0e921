// The reason texts of the grant check (SPEC §6.3–§6.4), defined once. The protocol's authorize
// (every verb, COMMIT included) and the approval decision (SPEC-approval §2, "the decision, and the
// reason text") say why a grant does not authorize a request in the same words, because both run
// the same check (caveat.ts `checkCaveats`, grant.ts `verifyChain`). Each text is built from the
// rule it reports and the values involved, never written per case.
import { Either } from "effect"
import { canonical } from "./canonical.js"
import { formatQuantity } from "./measure.js"

/** A limit as written in an `each` or `total` caveat (§6.3). */
export interface LimitText {
  readonly of: string
  readonly max: number
  readonly scale?: number | undefined
  readonly unit?: string | undefined
}

/** A value as its canonical JSON (§10); a value without one (never in a decoded grant) as plain JSON. */
const json = (v: unknown): string => Either.getOrElse(canonical(v), () => String(JSON.stringify(v)))

const limitValue = (l: LimitText): string => formatQuantity({ amount: l.max, ...(l.scale !== undefined ? { scale: l.scale } : {}), ...(l.unit !== undefined ? { unit: l.unit } : {}) })

const unitPhrase = (unit: string | undefined): string => (unit === undefined ? "without a unit" : `in ${unit}`)

export const grantReason = {
  // §6.4 steps 2–5: the chain.
  /** Step 2: a block's signature. */
  badSignature: "grant signature does not verify",
  /** Step 4: the root `iss` is not a principal this service trusts. */
  untrusted: "grant is issued by a principal this service does not trust",
  /** Step 5: the holder (last `sub`) is not the key that signed the proof. */
  notHolder: "proof key is not the grant holder",
  /** Step 1: the token does not decode; `detail` says how. */
  malformedGrant: (detail: string) => `malformed grant: ${detail}`,

  // §6.3: one text per caveat rule, parameterised by the request and the caveat's values.
  /** Unknown caveat or malformed value: fail closed, naming the caveat as written. */
  malformedCaveat: (caveat: unknown) => `malformed caveat ${json(caveat)}`,
  /** `svc`: the service's id is not listed. */
  service: (service: string) => `not valid for service ${service}`,
  /** `verbs`: the request verb is not listed. */
  verb: (verb: string) => `does not allow ${verb}`,
  /** `can`: no pattern matches the capability (the tool, for a job). */
  capability: (capability: string) => `does not cover ${capability}`,
  /** `exp`: now ≥ exp. */
  expired: "grant has expired",
  /** `nbf`: now < nbf. */
  notYetValid: "grant is not valid yet",
  /** `only`: the proposal hash is not the one the caveat names. */
  proposal: (only: string) => `only valid for proposal ${only}`,
  /** A COMMIT check with no proposal to check (a caller's mistake; fails closed). */
  noProposal: "COMMIT without a proposal to check",
  /** `risk`: the proposal's risk is none of the levels (fails closed). */
  malformedRisk: (risk: unknown) => `malformed risk ${json(risk)}`,
  /** `risk`: the proposal's risk is above the ceiling. */
  risk: (risk: string, ceiling: string) => `risk ${risk} exceeds ceiling ${ceiling}`,
  /** `each`/`total`: the proposal's `uses` is malformed (fails closed). */
  malformedUses: (uses: unknown) => `malformed uses ${json(uses)}`,
  /** `each`/`total`: units differ (never converted). */
  unit: (of: string, unit: string | undefined, limitUnit: string | undefined) => `${of} is ${unitPhrase(unit)}, but the limit is ${unitPhrase(limitUnit)}`,
  /** `each`: over the per-commit limit. */
  each: (limit: LimitText) => `${limit.of} over the per-commit limit of ${limitValue(limit)}`,
  /** `total`: what is committed or reserved, plus this, would pass the limit. */
  total: (limit: LimitText) => `${limit.of} would pass the total limit of ${limitValue(limit)}`
} as const
