// The policy (SPEC-approval §2, the framework's policy guide): what runs without asking.
//
// Two things are called policy. The signed policy is a `pg1.` grant the person (the pinned
// principal) issues to this server's key: it is the only thing that can let a plan run on its
// own. The unsigned tightening (`deny`, `outOfBand`, from the server's options and
// `~/.yea/policy.json`, see tighten.ts) can only narrow it. Only `plans[0]` is ever auto-run, and
// only when it can be undone. Each step of `decide` is one statement, in the order the vectors
// pin (approval.json `decide`: denied beats out of band, out of band beats not undoable).
import { Effect, Either } from "effect"
import { decodeGrant, verifyChain, type Grant } from "../grant.js"
import { caveatProblem, matchesCapability, type Limit, type RiskLevel } from "../caveat.js"
import { formatQuantity, quantityValue, unitsAt, compareDecimal, type Decimal } from "../measure.js"
import type { HashedPlan } from "./plan.js"
import { denied, needsApproval, outOfBand, type Denied, type NeedsApproval, type OutOfBand } from "./reason.js"

export const RANK: Readonly<Record<RiskLevel, number>> = { low: 0, medium: 1, high: 2 }
export const atLeast = (risk: RiskLevel, level: RiskLevel): boolean => RANK[risk] >= RANK[level]

/** Totals are kept in units of 10^−18, the largest scale of §5.1, so every limit adds exactly. */
export const LEDGER_SCALE = 18
export const toLedgerUnits = (d: Decimal): bigint => unitsAt(d, LEDGER_SCALE)

/** What the decision reads: the signed policy and the tightening, at this call. */
export interface PolicyView {
  /** The signed policy grant (`pg1.`), or null when there is none. */
  readonly grant: string | null
  /** The pinned principal key; undefined when none is usable (nothing then runs on its own). */
  readonly principal: string | undefined
  /** This server's key: the service id and the holder the policy must be issued to. */
  readonly server: string
  readonly deny: ReadonlyArray<string>
  readonly outOfBand: RiskLevel
}

/** A `total` the run draws on: reserve `amount` against `max` under `{block, of}` (§8 ledger). */
export interface Draw {
  readonly key: { readonly block: string; readonly of: string }
  readonly amount: bigint
  readonly max: bigint
}

export type Decision =
  | { readonly kind: "nothing" }
  | { readonly kind: "run"; readonly plan: HashedPlan; readonly reserve: ReadonlyArray<Draw> }

/** Spend already settled or reserved under a policy block and measure, in ledger units. */
export type UsedLookup<E = never, R = never> = (block: string, of: string) => Effect.Effect<bigint, E, R>

const unitText = (unit: string | undefined, none: string) => (unit === undefined ? none : `in ${unit}`)

/** The signed policy verified as a grant to this server from the pinned principal (§6.4 1–5). */
const verifiedPolicy = (token: string, view: PolicyView): Either.Either<Grant, string> =>
  Either.gen(function* () {
    const grant = yield* Either.mapLeft(decodeGrant(token), (e) =>
      /base64url|strict JSON|UTF-8/.test(e.message) ? "malformed grant: not valid b64url JSON" : `malformed grant: ${e.message}`
    )
    // Signatures and links only: trust and holder are checked below, each with its own reason.
    yield* Either.mapLeft(verifyChain(grant, { trusted: [grant.principal], proofKey: grant.holder }), () => "grant signature does not verify")
    if (view.principal === undefined || grant.principal !== view.principal) {
      return yield* Either.left("grant is issued by a principal this service does not trust")
    }
    if (grant.holder !== view.server) return yield* Either.left("proof key is not the grant holder")
    return grant
  })

interface TotalAcc {
  block: string
  of: string
  limit: Limit
  max: Decimal
}

/** The first caveat the run fails, or the draws on its totals (each `{block, of}` once, smallest max). */
const evaluate = <E, R>(grant: Grant, plan: HashedPlan, view: PolicyView, now: number, used: UsedLookup<E, R>) =>
  Effect.gen(function* () {
    const tool = plan.tool
    const uses = plan.plan.uses ?? {}
    const totals = new Map<string, TotalAcc>()
    for (const block of grant.blocks) {
      for (const caveat of block.caveats) {
        const problem = caveatProblem(caveat)
        if (problem !== undefined) return Either.left(`malformed caveat: ${problem}`)
        const c = caveat as Record<string, unknown>
        if ("svc" in c) {
          if (!(c.svc as ReadonlyArray<string>).includes(view.server)) return Either.left("the signed policy is for another service")
        } else if ("verbs" in c) {
          if (!(c.verbs as ReadonlyArray<string>).includes("COMMIT")) return Either.left("does not allow COMMIT")
        } else if ("can" in c) {
          if (!(c.can as ReadonlyArray<string>).some((p) => matchesCapability(p, tool))) {
            return Either.left(`the signed policy doesn't let ${tool} run without asking`)
          }
        } else if ("exp" in c) {
          if (!(now < (c.exp as number))) return Either.left("grant has expired")
        } else if ("nbf" in c) {
          if (!(now >= (c.nbf as number))) return Either.left("grant is not valid yet")
        } else if ("only" in c) {
          if (c.only !== plan.planHash) return Either.left("the signed policy is for another plan")
        } else if ("risk" in c) {
          const ceiling = c.risk as RiskLevel
          if (RANK[plan.risk] > RANK[ceiling]) return Either.left(`risk ${plan.risk} exceeds ceiling ${ceiling}`)
        } else {
          const isTotal = "total" in c
          const limit = (isTotal ? c.total : c.each) as Limit
          // Only what the plan reports is bound (SPEC §6.3).
          if (!Object.prototype.hasOwnProperty.call(uses, limit.of)) continue
          const q = uses[limit.of]
          if (q.unit !== limit.unit) {
            return Either.left(`${limit.of} is ${unitText(q.unit, "without a unit")}, but the limit is ${unitText(limit.unit, "without a unit")}`)
          }
          const max = quantityValue({ amount: limit.max, scale: limit.scale })
          if (!isTotal) {
            if (compareDecimal(quantityValue(q), max) > 0) {
              return Either.left(`${limit.of} over the per-commit limit of ${formatQuantity({ amount: limit.max, scale: limit.scale, unit: limit.unit })}`)
            }
            continue
          }
          const key = `${block.id}\u0000${limit.of}`
          const prev = totals.get(key)
          if (prev === undefined || compareDecimal(max, prev.max) < 0) totals.set(key, { block: block.id, of: limit.of, limit, max })
        }
      }
    }
    const draws: Array<Draw> = []
    for (const t of totals.values()) {
      const amount = toLedgerUnits(quantityValue(uses[t.of]))
      const max = toLedgerUnits(t.max)
      const already = yield* used(t.block, t.of)
      if (already + amount > max) {
        return Either.left(`${t.of} would pass the total limit of ${formatQuantity({ amount: t.limit.max, scale: t.limit.scale, unit: t.limit.unit })}`)
      }
      draws.push({ key: { block: t.block, of: t.of }, amount, max })
    }
    return Either.right(draws)
  })

/** A grant that names no tool at all lets nothing run here (the policy guide: "name its tools with --can"). */
const namesTools = (grant: Grant): boolean =>
  grant.blocks.some((b) => b.caveats.some((c) => typeof c === "object" && c !== null && "can" in c))

/**
 * What a job call does with these plans under this policy (SPEC-approval §2): run `plans[0]`
 * (with the totals it draws on), or fail with why it is denied, needs the person, or needs them
 * outside the chat.
 */
export const decide = <E, R>(
  plans: ReadonlyArray<HashedPlan>,
  view: PolicyView,
  used: UsedLookup<E, R>,
  now: number
): Effect.Effect<Decision, Denied | NeedsApproval | OutOfBand | E, R> =>
  Effect.gen(function* () {
    if (plans.length === 0) return { kind: "nothing" } as const
    const first = plans[0]
    if (view.deny.includes(first.tool)) return yield* Effect.fail(denied(`your policy never allows ${first.tool}`))
    if (atLeast(first.risk, view.outOfBand)) {
      return yield* Effect.fail(outOfBand(`risk is ${first.risk}, which needs approval outside the chat`))
    }
    // Only undoable plans run on their own, whatever the policy says (security guide).
    if (!first.undoable) return yield* Effect.fail(needsApproval(`${first.tool} can't be undone`))
    if (view.grant === null) return yield* Effect.fail(needsApproval(`no signed policy lets ${first.tool} run without asking`))
    const grant = verifiedPolicy(view.grant, view)
    if (Either.isLeft(grant)) return yield* Effect.fail(needsApproval(grant.left))
    if (!namesTools(grant.right)) {
      return yield* Effect.fail(needsApproval(`the signed policy names no tools, so it doesn't let ${first.tool} run without asking`))
    }
    const draws = yield* evaluate(grant.right, first, view, now, used)
    if (Either.isLeft(draws)) return yield* Effect.fail(needsApproval(draws.left))
    return { kind: "run", plan: first, reserve: draws.right } as const
  })
