// Grant caveats (SPEC §6.3). A request is authorized by a grant only if every caveat in every block
// is satisfied. Unknown caveats and malformed values fail closed as hard (`forbidden`) failures;
// only `each`, `total` and `risk` can fail softly, which asks the human (`consent_required`, §6.6).
import { Effect, Predicate, Schema } from "effect"
import {
  Amount,
  MEASURE_NAME,
  MeasureName,
  Scale,
  Unit,
  addDecimal,
  compareDecimal,
  isQuantity,
  isUses,
  quantityValue,
  type Decimal,
  type Quantity
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

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)
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

const isRiskLevel = (v: unknown): v is RiskLevel => v === "low" || v === "medium" || v === "high"

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

/** A caveat that is not satisfied. `caveat` is the value as written in the grant (§7 `need`). */
export interface CaveatFailure {
  readonly severity: Severity
  readonly caveat: unknown
  readonly block: number
  readonly message: string
}

/** A `total` the commit draws on: reserve `amount` against `limit` (§6.3, reserved atomically). */
export interface TotalDraw {
  readonly blockId: string
  readonly block: number
  readonly caveat: { readonly total: Limit }
  readonly of: string
  readonly limit: Decimal
  readonly amount: Decimal
}

const RANK: Readonly<Record<RiskLevel, number>> = { low: 0, medium: 1, high: 2 }

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

/**
 * Evaluates every caveat of every block (§6.3, §6.4 step 6) and returns every failure, hard and
 * soft, in grant order. Never fails: a malformed value is a hard failure, not an exception.
 */
export const evaluateCaveats = <E, R>(
  blocks: ReadonlyArray<CaveatBlock>,
  ctx: CaveatContext,
  usedOf: TotalsLookup<E, R>
): Effect.Effect<Evaluation, E, R> =>
  Effect.gen(function* () {
    const failures: Array<CaveatFailure> = []
    const draws: Array<TotalDraw> = []
    const isCommit = ctx.verb === "COMMIT"
    const proposal = ctx.proposal
    // §5.1/§6.3: a malformed `uses` in the proposal being checked is a hard failure for any limit,
    // whichever measure the limit names. Absent `uses` means nothing measured.
    const usesPresent = proposal !== undefined && has(proposal, "uses") && proposal.uses !== undefined
    const usesOk = !usesPresent || isUses(proposal!.uses)
    const uses = usesPresent && usesOk ? (proposal!.uses as Readonly<Record<string, Quantity>>) : {}

    for (let b = 0; b < blocks.length; b++) {
      const { caveats, id: blockId } = blocks[b]
      for (const caveat of caveats) {
        const fail = (severity: Severity, message: string) => failures.push({ severity, caveat, block: b, message })
        // Fail closed on anything unknown or malformed, for every verb.
        const problem = caveatProblem(caveat)
        if (problem !== undefined) {
          fail("hard", problem)
          continue
        }
        const c = caveat as Record<string, unknown>
        if (has(c, "svc")) {
          if (!(c.svc as ReadonlyArray<string>).includes(ctx.service)) fail("hard", `service ${ctx.service} is not listed`)
        } else if (has(c, "verbs")) {
          if (!(c.verbs as ReadonlyArray<string>).includes(ctx.verb)) fail("hard", `verb ${ctx.verb} is not listed`)
        } else if (has(c, "can")) {
          if (!(c.can as ReadonlyArray<string>).some((p) => matchesCapability(p, ctx.capability))) {
            fail("hard", `capability ${ctx.capability} is not allowed`)
          }
        } else if (has(c, "exp")) {
          if (!(ctx.now < (c.exp as number))) fail("hard", "the grant has expired")
        } else if (has(c, "nbf")) {
          if (!(ctx.now >= (c.nbf as number))) fail("hard", "the grant is not valid yet")
        } else if (!isCommit) {
          // `each`, `total`, `risk` and `only` are satisfied for verbs other than COMMIT (§6.3).
          continue
        } else if (proposal === undefined) {
          fail("hard", "COMMIT without a proposal to check")
        } else if (has(c, "only")) {
          if (proposal.hash !== c.only) fail("hard", "the grant is for another proposal")
        } else if (has(c, "risk")) {
          const risk = proposal.risk
          if (!isRiskLevel(risk)) fail("hard", "the proposal's risk is not low, medium or high")
          else if (ctx.replay !== true && RANK[risk] > RANK[c.risk as RiskLevel]) fail("soft", `risk ${risk} is above ${String(c.risk)}`)
        } else {
          const total = has(c, "total")
          const limit = (total ? c.total : c.each) as Limit
          if (!usesOk) {
            fail("hard", "the proposal's uses is malformed")
            continue
          }
          if (ctx.replay === true) continue
          // Only what is reported is bound (§6.3): an own member named `of`, nothing inherited.
          if (!has(uses, limit.of)) continue
          const q = uses[limit.of]
          if (q.unit !== limit.unit) {
            fail("soft", `${limit.of} is in ${q.unit ?? "no unit"}, the limit in ${limit.unit ?? "no unit"}`)
            continue
          }
          const max = quantityValue({ amount: limit.max, scale: limit.scale })
          const amount = quantityValue(q)
          if (!total) {
            if (compareDecimal(amount, max) > 0) fail("soft", `${limit.of} is over the per-commit limit`)
            continue
          }
          const used = yield* usedOf(blockId, limit.of)
          if (compareDecimal(addDecimal(used, amount), max) > 0) fail("soft", `${limit.of} would exceed the total limit`)
          else draws.push({ blockId, block: b, caveat: c as { total: Limit }, of: limit.of, limit: max, amount })
        }
      }
    }
    return { failures, draws: failures.length === 0 ? draws : [] }
  })
