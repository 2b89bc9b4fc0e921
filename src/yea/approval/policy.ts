// The policy (SPEC-approval §2, the framework's policy guide): what runs without asking.
//
// Two things are called policy. The signed policy is a `pg1.` grant the person (the pinned
// principal) issues to this server's key: it is the only thing that can let a plan run on its
// own. The unsigned tightening (`deny`, `outOfBand`, from the server's options and
// `~/.yea/policy.json`, see tighten.ts) can only narrow it. Only `plans[0]` is ever auto-run, and
// only when it can be undone. Each step of `decide` is one statement, in the order the vectors
// pin (approval.json `decide`: denied beats out of band, out of band beats not undoable).
import { Effect, Either } from "effect"
import { caveatBlocks, decodeGrant, verifyChain, type Grant } from "../grant.js"
import { bindingTotals, caveatVerdict, RANK, type CaveatContext, type RiskLevel } from "../caveat.js"
import { evaluateCaveats } from "../caveat-evaluation.js"
import { decimal, unitsAt, type Decimal } from "../measure.js"
import type { HashedPlan } from "./plan.js"
import { denied, needsApproval, outOfBand, type Denied, type NeedsApproval, type OutOfBand } from "./reason.js"

export { RANK }
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

/**
 * The signed policy verified as a grant to this server from the pinned principal (SPEC §6.4 1–5),
 * by the core's own decoding and chain check, so its reason is the core's text.
 */
const verifiedPolicy = (token: string, view: PolicyView): Either.Either<Grant, string> =>
  Either.mapLeft(
    Either.flatMap(decodeGrant(token), (grant) => verifyChain(grant, { trusted: view.principal === undefined ? [] : [view.principal], proofKey: view.server })),
    (e) => e.message
  )

/** The plan as the caveats see it: a COMMIT of the plan at this server (SPEC-approval "Mapping"). */
const commitOf = (plan: HashedPlan, view: PolicyView, now: number): CaveatContext => ({
  service: view.server,
  verb: "COMMIT",
  capability: plan.tool,
  now,
  proposal: { hash: plan.planHash, risk: plan.risk, uses: plan.plan.uses }
})

/**
 * The draws of a run on its totals (each `{block, of}` once, smallest max), or the reason it may
 * not run on its own: the core's caveat check (caveat.ts `checkCaveats`), whose reason text is the
 * one authorize and COMMIT give. Hard or soft, a failure here asks the person.
 */
const evaluate = <E, R>(grant: Grant, plan: HashedPlan, view: PolicyView, now: number, used: UsedLookup<E, R>) =>
  evaluateCaveats(caveatBlocks(grant), commitOf(plan, view, now), (block, of) => Effect.map(used(block, of), (units) => decimal(units, LEDGER_SCALE))).pipe(
    Effect.flatMap((evaluation) =>
      caveatVerdict(evaluation).pipe(
        Effect.catchTags({
          CaveatsForbidden: (e) => Effect.fail(needsApproval(e.message)),
          CaveatsNeedConsent: (e) => Effect.fail(needsApproval(e.message))
        })
      )
    ),
    Effect.map((draws) =>
      bindingTotals(draws).map((d): Draw => ({ key: { block: d.blockId, of: d.of }, amount: toLedgerUnits(d.amount), max: toLedgerUnits(d.limit) }))
    )
  )

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
    const reserve = yield* evaluate(grant.right, first, view, now, used)
    return { kind: "run", plan: first, reserve } as const
  })
