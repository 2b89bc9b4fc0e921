// Grant caveats (SPEC §6.3). A request is authorized by a grant only if every caveat in every block
// is satisfied. Unknown caveats and malformed values fail closed as hard (`forbidden`) failures;
// only `each`, `total` and `risk` can fail softly, which asks the human (`consent_required`, §6.6).
// How a request's caveats are evaluated, as a plain function, is caveat-evaluation.ts.
import { Data, Effect, Predicate, Schema } from "effect"
import { Stackless } from "../kernel/stackless.js"
import { grantReason } from "./grant-reason.js"
import {
  Amount,
  MEASURE_NAME,
  MeasureName,
  Scale,
  Unit,
  compareDecimal,
  isQuantity,
  type Decimal
} from "./measure.js"
import type { Verb } from "./verb.js"

// ---------------------------------------------------------------------------------------------
// Wire shapes (one schema per caveat; each is a single-key object)

const exact = { parseOptions: { onExcessProperty: "error" as const } }

export const RiskLevel = Schema.Literal("low", "medium", "high")
export type RiskLevel = typeof RiskLevel.Type

/** `{"of": name, "max": int, "scale"?: int, "unit"?: string}` (§6.3), with §5.1's ranges. */
export const Limit = Schema.Struct({
  of: MeasureName,
  max: Amount,
  scale: Schema.optional(Scale),
  unit: Schema.optional(Unit)
}).annotations({ identifier: "Limit", ...exact })
export type Limit = typeof Limit.Type

export const SvcCaveat = Schema.Struct({ svc: Schema.Array(Schema.String) }).annotations(exact)
export const VerbsCaveat = Schema.Struct({ verbs: Schema.Array(Schema.String) }).annotations(exact)
export const CanCaveat = Schema.Struct({ can: Schema.Array(Schema.String) }).annotations(exact)
export const ExpCaveat = Schema.Struct({ exp: Schema.Int }).annotations(exact)
export const NbfCaveat = Schema.Struct({ nbf: Schema.Int }).annotations(exact)
export const EachCaveat = Schema.Struct({ each: Limit }).annotations(exact)
export const TotalCaveat = Schema.Struct({ total: Limit }).annotations(exact)
export const RiskCaveat = Schema.Struct({ risk: RiskLevel }).annotations(exact)
export const OnlyCaveat = Schema.Struct({ only: Schema.String }).annotations(exact)

/** A well-formed caveat of §6.3. */
export const Caveat = Schema.Union(
  SvcCaveat,
  VerbsCaveat,
  CanCaveat,
  ExpCaveat,
  NbfCaveat,
  EachCaveat,
  TotalCaveat,
  RiskCaveat,
  OnlyCaveat
).annotations({ identifier: "Caveat" })
export type Caveat = typeof Caveat.Type

export const CAVEAT_NAMES = ["svc", "verbs", "can", "exp", "nbf", "each", "total", "risk", "only"] as const
export type CaveatName = (typeof CAVEAT_NAMES)[number]

// ---------------------------------------------------------------------------------------------
// Well-formedness (hand-written twin of the schemas above: this runs on every request)

export const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)
const isStringArray = (v: unknown): v is ReadonlyArray<string> => Array.isArray(v) && v.every((x) => typeof x === "string")
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v)

/** A limit's members are exactly `of`, `max` and optionally `scale`, `unit`, each in range. */
export const isLimit = (v: unknown): v is Limit => {
  if (!Predicate.isRecord(v) || !has(v, "of") || !has(v, "max")) return false
  for (const k of Object.keys(v)) if (k !== "of" && k !== "max" && k !== "scale" && k !== "unit") return false
  if (typeof v.of !== "string" || !MEASURE_NAME.test(v.of)) return false
  // `max`, `scale` and `unit` follow the quantity rules of §5.1: reuse them on {amount: max, ...}.
  const q: Record<string, unknown> = { amount: v.max }
  if (has(v, "scale")) q.scale = v.scale
  if (has(v, "unit")) q.unit = v.unit
  return isQuantity(q)
}

export const isRiskLevel = (v: unknown): v is RiskLevel => v === "low" || v === "medium" || v === "high"

/** Why `v` is not a well-formed caveat, or undefined when it is one. */
export const caveatProblem = (v: unknown): string | undefined => {
  if (!Predicate.isRecord(v)) return "a caveat is a single-key object"
  const keys = Object.keys(v)
  if (keys.length !== 1) return "a caveat is a single-key object"
  const name = keys[0]
  const value = v[name]
  switch (name) {
    case "svc":
    case "verbs":
    case "can":
      return isStringArray(value) ? undefined : `${name} takes a list of strings`
    case "exp":
    case "nbf":
      return isInt(value) ? undefined : `${name} takes an integer`
    case "each":
    case "total":
      return isLimit(value) ? undefined : `${name} takes a limit {of, max, scale?, unit?} within §5.1's ranges`
    case "risk":
      return isRiskLevel(value) ? undefined : "risk takes low, medium or high"
    case "only":
      return typeof value === "string" ? undefined : "only takes a string"
    default:
      return `unknown caveat ${JSON.stringify(name)}`
  }
}

export const isCaveat = (v: unknown): v is Caveat => caveatProblem(v) === undefined

// ---------------------------------------------------------------------------------------------
// Evaluation

/** What the request is, as the caveats see it. */
export interface CaveatContext {
  /** The service's id (its audience, §4.1). */
  readonly service: string
  readonly verb: Verb
  /** The capability; for UNDO, the capability of the receipt being undone (§6.3). */
  readonly capability: string
  /** Now, in unix seconds (from the service's Clock). */
  readonly now: number
  /** COMMIT only: the proposal being committed. */
  readonly proposal?: CommitProposal
  /**
   * A replayed COMMIT (§4.4): the commit already happened, so `each`, `total` and `risk` are not
   * re-evaluated.
   */
  readonly replay?: boolean
}

/** The parts of a proposal the caveats read. `uses` absent means nothing measured (§5.1). */
export interface CommitProposal {
  readonly hash: string
  readonly risk?: unknown
  readonly uses?: unknown
}

/**
 * How much has already been committed or reserved under a `total` caveat, keyed by block id and
 * `of` (§6.3). Returned as an exact decimal.
 */
export type TotalsLookup<E = never, R = never> = (blockId: string, of: string) => Effect.Effect<Decimal, E, R>

export type Severity = "hard" | "soft"

/**
 * Why one caveat is not satisfied, with the values its reason text is built from (grant-reason.ts).
 * Only `Risk`, `Unit`, `Each` and `Total` are soft (§6.6: a human can approve them); everything
 * else, every malformed value included, is hard (§6.3 "MUST fail closed").
 */
export type CaveatFailureKind = Data.TaggedEnum<{
  Malformed: {}
  Service: { readonly service: string }
  Verb: { readonly verb: string }
  Capability: { readonly capability: string }
  Expired: {}
  NotYetValid: {}
  NoProposal: {}
  Proposal: { readonly only: string }
  MalformedRisk: { readonly risk: unknown }
  Risk: { readonly risk: RiskLevel; readonly ceiling: RiskLevel }
  MalformedUses: { readonly uses: unknown }
  Unit: { readonly of: string; readonly unit: string | undefined; readonly limitUnit: string | undefined }
  Each: { readonly limit: Limit }
  Total: { readonly limit: Limit }
}>
export const CaveatFailureKind = Data.taggedEnum<CaveatFailureKind>()

/** The one reason text of a failure: each kind's builder in grant-reason.ts, fed its values. */
const reasonText = (kind: CaveatFailureKind, caveat: unknown): string =>
  CaveatFailureKind.$match(kind, {
    Malformed: () => grantReason.malformedCaveat(caveat),
    Service: ({ service }) => grantReason.service(service),
    Verb: ({ verb }) => grantReason.verb(verb),
    Capability: ({ capability }) => grantReason.capability(capability),
    Expired: () => grantReason.expired,
    NotYetValid: () => grantReason.notYetValid,
    NoProposal: () => grantReason.noProposal,
    Proposal: ({ only }) => grantReason.proposal(only),
    MalformedRisk: ({ risk }) => grantReason.malformedRisk(risk),
    Risk: ({ ceiling, risk }) => grantReason.risk(risk, ceiling),
    MalformedUses: ({ uses }) => grantReason.malformedUses(uses),
    Unit: ({ limitUnit, of, unit }) => grantReason.unit(of, unit, limitUnit),
    Each: ({ limit }) => grantReason.each(limit),
    Total: ({ limit }) => grantReason.total(limit)
  })

const SOFT: ReadonlySet<CaveatFailureKind["_tag"]> = new Set(["Risk", "Unit", "Each", "Total"])

/** A caveat that is not satisfied. `caveat` is the value as written in the grant (§7 `need`). */
export interface CaveatFailure {
  readonly kind: CaveatFailureKind
  readonly severity: Severity
  readonly caveat: unknown
  readonly block: number
  /** The reason text, built from `kind` (grant-reason.ts). */
  readonly message: string
}

/** A failure of `caveat` in block `block`, with its severity and reason text. */
export const failure = (kind: CaveatFailureKind, caveat: unknown, block: number): CaveatFailure => ({
  kind,
  severity: SOFT.has(kind._tag) ? "soft" : "hard",
  caveat,
  block,
  message: reasonText(kind, caveat)
})

/** A `total` the commit draws on: reserve `amount` against `limit` (§6.3, reserved atomically). */
export interface TotalDraw {
  readonly blockId: string
  readonly block: number
  readonly caveat: { readonly total: Limit }
  readonly of: string
  readonly limit: Decimal
  readonly amount: Decimal
}

/** `low` < `medium` < `high` (§6.3 `risk`). */
export const RANK: Readonly<Record<RiskLevel, number>> = { low: 0, medium: 1, high: 2 }

/** `"calendar.*"` matches by prefix, `"*"` matches all, anything else matches exactly (§6.3 `can`). */
export const matchesCapability = (pattern: string, capability: string): boolean =>
  pattern.endsWith("*") ? capability.startsWith(pattern.slice(0, -1)) : pattern === capability

/** One block's caveats with its id (the key of its `total` reservations). */
export interface CaveatBlock {
  readonly id: string
  readonly caveats: ReadonlyArray<unknown>
}

export interface Evaluation {
  readonly failures: ReadonlyArray<CaveatFailure>
  /** The `total` caveats the proposal draws on (empty unless COMMIT and every caveat passed). */
  readonly draws: ReadonlyArray<TotalDraw>
}

// ---------------------------------------------------------------------------------------------
// The verdict: one check for authorize, COMMIT and the approval decision alike

/**
 * Some caveat fails hard (§6.3): reason code `forbidden`. `failures` are the hard failures, in
 * grant order (§7 `need`); `message` is the first one's reason text.
 */
export class CaveatsForbidden extends Stackless(Data.TaggedError("CaveatsForbidden")<{
  readonly failures: ReadonlyArray<CaveatFailure>
  readonly message: string
}>) {}

/**
 * Only `risk`, `each` or `total` fail (§6.6): reason code `consent_required`. `failures` are all
 * of them, in grant order; `message` is the first one's reason text.
 */
export class CaveatsNeedConsent extends Stackless(Data.TaggedError("CaveatsNeedConsent")<{
  readonly failures: ReadonlyArray<CaveatFailure>
  readonly message: string
}>) {}

/**
 * §6.4 step 6's verdict on an evaluation: succeeds with the `total` draws when every caveat of
 * every block holds, fails with `CaveatsForbidden` when any fails hard (a hard failure decides the
 * verdict, so its text is the reason), else with `CaveatsNeedConsent`. Its only errors are these
 * two, so callers handle them with `catchTags` whatever their totals lookup can fail with.
 */
export const caveatVerdict = (evaluation: Evaluation): Effect.Effect<ReadonlyArray<TotalDraw>, CaveatsForbidden | CaveatsNeedConsent> => {
  const v = verdictOf(evaluation)
  return v._tag === "Authorized" ? Effect.succeed(v.draws) : Effect.fail(v)
}

/**
 * {@link caveatVerdict} as a plain value, for a caller that branches on it without an Effect (the
 * runtime's authorize): the draws, or the one error that verdict fails with.
 */
export const verdictOf = ({ draws, failures }: Evaluation): { readonly _tag: "Authorized"; readonly draws: ReadonlyArray<TotalDraw> } | CaveatsForbidden | CaveatsNeedConsent => {
  if (failures.length === 0) return { _tag: "Authorized", draws }
  const hard = failures.filter((f) => f.severity === "hard")
  return hard.length > 0
    ? new CaveatsForbidden({ failures: hard, message: hard[0].message })
    : new CaveatsNeedConsent({ failures, message: failures[0].message })
}

/** One `total` to reserve: per block and measure, the smallest limit binds (§6.3). */
export interface BindingTotal {
  readonly draw: TotalDraw
  readonly blockId: string
  readonly of: string
}

/**
 * The draws to reserve, each `{block, of}` once: two `total`s on one measure in one block share a
 * reservation, and the smaller limit binds. In the order their first caveat appears.
 */
export const bindingTotals = (draws: ReadonlyArray<TotalDraw>): ReadonlyArray<TotalDraw> => {
  const byKey = new Map<string, TotalDraw>()
  for (const d of draws) {
    const key = `${d.blockId}\u0000${d.of}`
    const prev = byKey.get(key)
    if (prev === undefined || compareDecimal(d.limit, prev.limit) < 0) byKey.set(key, d)
  }
  return [...byKey.values()]
}
