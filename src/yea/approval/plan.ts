// Plans and plan hashes (SPEC-approval §1). A job tool returns plans instead of acting; approval
// binds to a plan hash that stays the same when the same plan is recomputed:
//
//   planHash = b64url(sha256(canonical({tool, input, summary, effects, risk, uses?, undoWindow?})))
//
// It leaves out volatile members (`data`, ids, expiry). `uses` is left out when empty, so `{}` and
// no `uses` hash alike (approval.json "emptyUses"). `input` is the tool's validated input, so an
// approval for Chen's refund can't run Ana's; an input with no canonical form (a non-integer
// number, §1) can't be bound and fails closed.
import { Effect, Either, Schema } from "effect"
import { hashB64 } from "../../kernel/hash.js"
import { canonical, canonicalBytes } from "../canonical.js"
import { RiskLevel } from "../caveat.js"
import { Uses } from "../measure.js"
import { invalidInput, type InvalidInput } from "./reason.js"

/** One effect line of a plan (SPEC §5.1's effect shape; kept open, rendered by Lens). */
export const PlanEffect = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A plan as a job tool states it (without `apply`/`revert`, which are code, not data). */
export const PlanSpec = Schema.Struct({
  summary: Schema.String,
  effects: Schema.Array(PlanEffect),
  uses: Schema.optional(Uses),
  risk: Schema.optional(RiskLevel),
  /** Seconds during which `revert` may undo the plan once applied (§7). */
  undoWindow: Schema.optional(Schema.Int.pipe(Schema.positive())),
  data: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "PlanSpec" })
export type PlanSpec = typeof PlanSpec.Type

/** A plan with its hash, effective risk and whether it can be undone (approval.json `plans[i]`). */
export const HashedPlan = Schema.Struct({
  tool: Schema.String,
  plan: PlanSpec,
  planHash: Schema.String,
  risk: RiskLevel,
  undoable: Schema.Boolean
}).annotations({ identifier: "HashedPlan" })
export type HashedPlan = typeof HashedPlan.Type

/** What the hash needs to know of the tool: its name, default risk and whether it can revert. */
export interface ToolFacts {
  readonly name: string
  readonly risk?: RiskLevel
  readonly revert?: boolean
}

/** The plan's own risk wins, then the tool's default, then `medium` (SPEC-mcp-ts `job()` `risk`). */
export const effectiveRisk = (tool: ToolFacts, plan: PlanSpec): RiskLevel => plan.risk ?? tool.risk ?? "medium"

/** Undoable: the tool can revert and the plan states an undo window (§7). */
export const isUndoable = (tool: ToolFacts, plan: PlanSpec): boolean => tool.revert === true && plan.undoWindow !== undefined

const hasUses = (plan: PlanSpec): boolean => plan.uses !== undefined && Object.keys(plan.uses).length > 0

/** The hashed members, in one object: also the `job` a consent code carries (§6). */
export const planPreimage = (tool: string, input: unknown, plan: PlanSpec, risk: RiskLevel): Record<string, unknown> => {
  const o: Record<string, unknown> = { tool, input, summary: plan.summary, effects: plan.effects, risk }
  if (hasUses(plan)) o.uses = plan.uses
  if (plan.undoWindow !== undefined) o.undoWindow = plan.undoWindow
  return o
}

/** §1: the input must have a canonical form (integers only), before anything is planned. */
export const checkInput = (input: unknown): Effect.Effect<string, InvalidInput> =>
  Either.match(canonical(input), {
    onLeft: (e) => Effect.fail(invalidInput(`the input at ${e.path} has no canonical form: ${e.message}`)),
    onRight: (c) => Effect.succeed(c)
  })

/** `b64url(sha256(canonical(input)))`: what the state and consent codes bind the input by (§4). */
export const inputHash = (input: unknown): Effect.Effect<string, InvalidInput> =>
  Effect.map(checkInput(input), (c) => hashB64(new TextEncoder().encode(c)))

/** Hashes one plan of `tool` for `input` (§1). */
export const hashPlan = (tool: ToolFacts, input: unknown, plan: PlanSpec): Effect.Effect<HashedPlan, InvalidInput> =>
  Effect.gen(function* () {
    const risk = effectiveRisk(tool, plan)
    const bytes = canonicalBytes(planPreimage(tool.name, input, plan, risk))
    if (Either.isLeft(bytes)) return yield* Effect.fail(invalidInput(`the plan has no canonical form at ${bytes.left.path}: ${bytes.left.message}`))
    return { tool: tool.name, plan, planHash: hashB64(bytes.right), risk, undoable: isUndoable(tool, plan) }
  })

/** Hashes every plan, in order (only `plans[0]` is ever auto-run, §2). */
export const hashPlans = (tool: ToolFacts, input: unknown, plans: ReadonlyArray<PlanSpec>) =>
  Effect.forEach(plans, (p) => hashPlan(tool, input, p))
