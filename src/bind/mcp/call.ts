// The guarded callback (SPEC-mcp-ts "How a call runs", SPEC-approval §5–§6): steps 1–11 in order,
// one Effect. Each outcome of the contract is a tagged failure of the approval core, turned into a
// tool result with `catchTags` at the end; nothing here decides policy itself.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Option, Schema } from "effect"
import { unixSeconds } from "../../kernel/clock.js"
import {
  ApprovalStore,
  buildForm,
  checkInput,
  checkJobConsent,
  checkState,
  decide,
  effectivePhrase,
  hashPlans,
  inputHash as hashInput,
  jobConsentCode,
  judgeAnswer,
  newState,
  refused,
  RequestStateCodec,
  type HashedPlan
} from "../../yea/approval/index.js"
import type { ApprovalContext, Extra } from "./context.js"
import { applyPlan } from "./apply.js"
import type { JobDefinition, JobPlan } from "./job-types.js"
import { errorResult, planListLines, plansData, safe, textResult } from "./render.js"
import { whileAsking } from "./keep-alive.js"

class PlanFailed extends Schema.TaggedError<PlanFailed>()("PlanFailed", { message: Schema.String }) {}

const callPlan = (job: JobDefinition, input: Record<string, unknown>, extra: Extra) =>
  Effect.tryPromise({ try: () => job.plan(input, extra), catch: (e) => new PlanFailed({ message: e instanceof Error ? e.message : String(e) }) })

const hashed = (job: JobDefinition, input: Record<string, unknown>, plans: ReadonlyArray<JobPlan>) =>
  hashPlans({ name: job.name, risk: job.risk, revert: job.revertible }, input, plans)

/** planHash → phrase; an untypeable phrase fails the call (SPEC-mcp-ts `confirmWith`). */
const phrasesFor = (job: JobDefinition, input: Record<string, unknown>, plans: ReadonlyArray<HashedPlan>) =>
  Effect.map(
    Effect.forEach(plans, (p) => Effect.map(effectivePhrase(job.confirmWith?.(p.plan, input)), (ph) => [p.planHash, ph] as const)),
    (pairs) => Object.fromEntries(pairs) as Record<string, string>
  )

/** Can the client show a form? The SDK's own check: `elicitation.form` in the initialize capabilities. */
export type CanElicit = () => boolean
export type Elicit = (message: string, requestedSchema: Record<string, unknown>) => Promise<{ action: string; content?: Record<string, unknown> }>

const CONSENT_LINE = "Ask the user to run `mandate yea approve <code>` in their terminal, then call again."

/** Step 9: fail closed with the plans and one approval code per plan that isn't denied. */
const failClosed = (ctx: ApprovalContext, job: JobDefinition, input: unknown, plans: ReadonlyArray<HashedPlan>, why: string, deny: ReadonlyArray<string>, phrases: Record<string, string>, only?: string) =>
  Effect.gen(function* () {
    const now = yield* unixSeconds
    const lines = [`Approval needed: ${safe(why)}. It can't be given in this chat.`, ...planListLines(plans)]
    const principal = ctx.options.principal
    const noCodes =
      principal === undefined
        ? "no pinned principal key, so no consent can be accepted here"
        : ctx.storeKind === "memory"
          ? "this server keeps approvals in memory, which `mandate yea approve` can't write to"
          : undefined
    if (noCodes !== undefined) return errorResult([...lines, `No approval codes: ${noCodes}.`], { plans: plansData(plans), codes: [], why: noCodes })
    const codes: Array<{ planHash: string; code: string }> = []
    for (const p of plans) {
      if (deny.includes(p.tool) || (only !== undefined && p.planHash !== only)) continue
      codes.push({ planHash: p.planHash, code: yield* jobConsentCode({ server: ctx.options.serviceId, principal: principal!, input, plan: p, phrase: phrases[p.planHash], now }) })
    }
    for (const c of codes) lines.push(`[${plans.findIndex((p) => p.planHash === c.planHash) + 1}] approval code: ${c.code}`)
    lines.push(CONSENT_LINE)
    return errorResult(lines, { plans: plansData(plans), codes })
  })

/** Step 6: a stored consent for one of these plans, checked and consumed once, runs that plan. */
const findConsent = (ctx: ApprovalContext, plans: ReadonlyArray<HashedPlan>, deny: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const store = yield* ApprovalStore
    const now = yield* unixSeconds
    for (const p of plans) {
      if (deny.includes(p.tool)) continue // a denied tool never runs, even with a stored consent
      const grant = yield* store.getConsent(p.planHash)
      if (Option.isNone(grant)) continue
      const ok = yield* Effect.option(checkJobConsent(grant.value, { plan: p, principal: ctx.options.principal, server: ctx.options.serviceId, now }))
      if (Option.isNone(ok)) continue
      if (yield* store.consumeOnce(`consent:${ok.value.id}`, ok.value.exp)) return Option.some(p)
    }
    return Option.none<HashedPlan>()
  })

/** Steps 1–11 for one call. `preview` was taken off the input by the wrapper schema. */
export const runJobCall = Effect.fn("yea.mcp.job")(function* (
  ctx: ApprovalContext,
  job: JobDefinition,
  input: Record<string, unknown>,
  preview: boolean,
  extra: Extra,
  canElicit: CanElicit,
  elicit: Elicit
) {
  const sub = ctx.sub(extra)
  if (ctx.options.transport === "http" && sub === "") return errorResult(["✗ refused: this call has no authenticated caller"])
  const body = Effect.gen(function* () {
    yield* checkInput(input) // step 1
    const t = yield* ctx.tightening
    if (!t.ok) return errorResult([`✗ refused: ${safe(t.why)}`])
    const tight = t.value
    if (tight.deny.includes(job.name)) return errorResult([`✗ denied: your policy never allows ${safe(job.name)}`]) // step 2
    const outcome = yield* callPlan(job, input, extra) // step 3
    if (!Array.isArray(outcome)) return textResult([`? ${safe((outcome as { clarify: string }).clarify)}`])
    const raw = outcome as ReadonlyArray<JobPlan>
    if (raw.length === 0) return errorResult(["✗ nothing to do: the job returned no plans"])
    const plans = yield* hashed(job, input, raw)
    const phrases = yield* phrasesFor(job, input, plans)
    if (preview) return textResult(["Preview (nothing ran):", ...planListLines(plans)], { plans: plansData(plans) }) // step 4
    const applyOf = (p: HashedPlan) => raw[plans.indexOf(p)].apply
    const consented = yield* findConsent(ctx, plans, tight.deny) // step 6
    if (Option.isSome(consented)) return job.finish(yield* applyPlan(ctx, job, consented.value, input, sub, applyOf(consented.value), []))
    const store = yield* ApprovalStore
    const now = yield* unixSeconds
    const policy = yield* ctx.policy
    const view = { grant: policy, principal: ctx.options.principal, server: ctx.options.serviceId, ...tight }
    return yield* decide(plans, view, store.used, now).pipe(
      Effect.flatMap((d) =>
        Effect.gen(function* () {
          if (d.kind === "nothing") return errorResult(["✗ nothing to do"])
          const held = yield* store.reserve(d.reserve)
          if (Option.isNone(held)) return yield* askPerson(ctx, job, input, sub, plans, phrases, "a limit filled up while this call was being decided", tight, extra, canElicit, elicit, raw)
          return job.finish(yield* applyPlan(ctx, job, d.plan, input, sub, applyOf(d.plan), [held.value]))
        })
      ),
      Effect.catchTags({
        Denied: (e) => Effect.succeed(errorResult([`✗ denied: ${safe(e.why)}`])),
        NeedsApproval: (e) => askPerson(ctx, job, input, sub, plans, phrases, e.why, tight, extra, canElicit, elicit, raw),
        OutOfBand: (e) => failClosed(ctx, job, input, plans, e.why, tight.deny, phrases)
      })
    )
  })
  return yield* body.pipe(
    Effect.catchTags({
      InvalidInput: (e) => Effect.succeed(errorResult([`✗ invalid input: ${safe(e.why)}`])),
      InvalidPhrase: (e) => Effect.succeed(errorResult([`✗ the job's phrase is unusable: ${safe(e.why)}`])),
      ApprovalStoreError: (e) => Effect.succeed(errorResult([`✗ refused: the approval store failed (${safe(e.why)}); nothing ran`])),
      PlanFailed: (e) => Effect.succeed(errorResult([`✗ the job could not plan: ${safe(e.message)}`]))
    })
  )
})

/** Steps 8 and 10: the form rounds, each through the sealed state, its nonce consumed once. */
const askPerson = (
  ctx: ApprovalContext,
  job: JobDefinition,
  input: Record<string, unknown>,
  sub: string,
  firstPlans: ReadonlyArray<HashedPlan>,
  firstPhrases: Record<string, string>,
  firstWhy: string,
  tight: { readonly deny: ReadonlyArray<string>; readonly outOfBand: "low" | "medium" | "high" },
  extra: Extra,
  canElicit: CanElicit,
  elicit: Elicit,
  firstRaw: ReadonlyArray<JobPlan>
): Effect.Effect<CallToolResult, never, import("./context.js").ApprovalServices> =>
  Effect.gen(function* () {
    let plans = firstPlans
    let raw = firstRaw
    let phrases = firstPhrases
    let why = firstWhy
    let round = 1
    const codec = yield* RequestStateCodec
    const store = yield* ApprovalStore
    const ih = yield* hashInput(input)
    const bind = `tools/call\u0000${job.name}\u0000${sub}`
    for (;;) {
      const form = canElicit() ? buildForm(plans, why, tight, phrases) : null
      if (form === null) return yield* failClosed(ctx, job, input, plans, why, tight.deny, phrases)
      const state = yield* newState({ tool: job.name, inputHash: ih, sub, plans: form.offered, round })
      const sealed = yield* codec.mint({ yea: state }, bind)
      const answer = yield* whileAsking(extra, Effect.tryPromise(() => elicit(form.message, form.requestedSchema as Record<string, unknown>))).pipe(Effect.option)
      // The state comes back through the codec, as a client-carried state would (SPEC-approval §4–§5).
      const opened = yield* codec.open(sealed, bind)
      const now = yield* unixSeconds
      const checked = yield* checkState((opened as { yea?: unknown }).yea, { tool: job.name, inputHash: ih, sub, now })
      if (!(yield* store.consumeOnce(checked.nonce, checked.exp))) return yield* Effect.fail(refused("this approval was already used; nothing ran"))
      // Step 10: the plans are recomputed; the choice is found by plan hash.
      const again = yield* callPlan(job, input, extra)
      if (!Array.isArray(again)) return textResult([`? ${safe((again as { clarify: string }).clarify)}`])
      raw = again as ReadonlyArray<JobPlan>
      plans = yield* hashed(job, input, raw)
      phrases = yield* phrasesFor(job, input, plans)
      const verdict = yield* Effect.either(judgeAnswer(checked, Option.getOrUndefined(answer), plans, tight, phrases))
      if (verdict._tag === "Right") {
        const p = verdict.right
        return job.finish(yield* applyPlan(ctx, job, p, input, sub, raw[plans.indexOf(p)].apply, []))
      }
      const v = verdict.left
      switch (v._tag) {
        case "AskAgain":
          round = v.round
          why = v.why
          continue
        case "OutOfBand":
          return yield* failClosed(ctx, job, input, plans, v.why, tight.deny, phrases, v.plan)
        case "NotApproved":
          return errorResult(["✗ not approved: nothing ran"])
        default:
          return errorResult([`✗ ${v.code}: ${safe(v.why)}; nothing ran`])
      }
    }
  }).pipe(
    Effect.catchAll((e) =>
      Effect.succeed(
        errorResult([`✗ refused: ${safe(typeof e === "object" && e !== null && "why" in e ? String((e as { why: unknown }).why) : e instanceof Error ? e.message : String(e))}; nothing ran`])
      )
    )
  )
