// Evaluating a grant's caveats for one request (SPEC §6.3, §6.4 step 6): a plain function over
// the caveats, with what is committed or reserved under each `total` read beforehand, and the one
// caveat check built on it. caveat.ts defines the caveats, their failures and the verdict.
import { Effect, Predicate } from "effect"
import {
  caveatProblem,
  type CaveatBlock,
  type CaveatContext,
  type CaveatFailure,
  CaveatFailureKind,
  type CaveatsForbidden,
  type CaveatsNeedConsent,
  caveatVerdict,
  type CommitProposal,
  type Evaluation,
  failure,
  has,
  isRiskLevel,
  type Limit,
  matchesCapability,
  RANK,
  type RiskLevel,
  type TotalDraw,
  type TotalsLookup
} from "./caveat.js"
import { addDecimal, compareDecimal, isUses, quantityValue, type Decimal, type Quantity } from "./measure.js"

/** What `uses` a proposal reports, as the caveats read it (§5.1/§6.3). */
interface UsesView {
  /** A malformed `uses` is a hard failure for any limit, whichever measure it names. */
  readonly ok: boolean
  readonly uses: Readonly<Record<string, Quantity>>
}

const usesView = (proposal: CommitProposal | undefined): UsesView => {
  // Absent `uses` means nothing measured.
  const present = proposal !== undefined && has(proposal, "uses") && proposal.uses !== undefined
  const ok = !present || isUses(proposal!.uses)
  return { ok, uses: present && ok ? (proposal!.uses as Readonly<Record<string, Quantity>>) : {} }
}

/** The `total` limit a caveat binds for this request when it needs a lookup, else undefined. */
const totalRead = (caveat: unknown, ctx: CaveatContext, view: UsesView): Limit | undefined => {
  if (ctx.verb !== "COMMIT" || ctx.proposal === undefined || ctx.replay === true || !view.ok) return undefined
  if (!Predicate.isRecord(caveat) || !has(caveat, "total") || caveatProblem(caveat) !== undefined) return undefined
  const limit = caveat.total as Limit
  return has(view.uses, limit.of) && view.uses[limit.of].unit === limit.unit ? limit : undefined
}

/** The key of one `total` lookup: block id and measure. */
const readKey = (blockId: string, of: string) => `${blockId}\u0000${of}`

/**
 * The `total` lookups an evaluation of `blocks` for `ctx` reads, each (block id, measure) once, in
 * grant order: exactly those {@link evaluateCaveatsWith} asks its `used` for.
 */
export const totalsRead = (blocks: ReadonlyArray<CaveatBlock>, ctx: CaveatContext): ReadonlyArray<{ readonly blockId: string; readonly of: string }> => {
  const view = usesView(ctx.proposal)
  const out: Array<{ readonly blockId: string; readonly of: string }> = []
  const seen = new Set<string>()
  for (const { caveats, id: blockId } of blocks) {
    for (const caveat of caveats) {
      const limit = totalRead(caveat, ctx, view)
      if (limit === undefined || seen.has(readKey(blockId, limit.of))) continue
      seen.add(readKey(blockId, limit.of))
      out.push({ blockId, of: limit.of })
    }
  }
  return out
}

/**
 * Evaluates every caveat of every block (§6.3, §6.4 step 6) and returns every failure, hard and
 * soft, in grant order, with what is committed or reserved under each `total` from `used` (read
 * beforehand: {@link totalsRead}). A plain function: it runs on every request.
 */
export const evaluateCaveatsWith = (
  blocks: ReadonlyArray<CaveatBlock>,
  ctx: CaveatContext,
  used: (blockId: string, of: string) => Decimal
): Evaluation => {
  const failures: Array<CaveatFailure> = []
  const draws: Array<TotalDraw> = []
  const isCommit = ctx.verb === "COMMIT"
  const proposal = ctx.proposal
  // §5.1/§6.3: a malformed `uses` in the proposal being checked is a hard failure for any limit,
  // whichever measure the limit names. Absent `uses` means nothing measured.
  const { ok: usesOk, uses } = usesView(proposal)

  for (let b = 0; b < blocks.length; b++) {
    const { caveats, id: blockId } = blocks[b]
    for (const caveat of caveats) {
      const fail = (kind: CaveatFailureKind) => failures.push(failure(kind, caveat, b))
      // Fail closed on anything unknown or malformed, for every verb.
      if (caveatProblem(caveat) !== undefined) {
        fail(CaveatFailureKind.Malformed())
        continue
      }
      const c = caveat as Record<string, unknown>
      if (has(c, "svc")) {
        if (!(c.svc as ReadonlyArray<string>).includes(ctx.service)) fail(CaveatFailureKind.Service({ service: ctx.service }))
      } else if (has(c, "verbs")) {
        if (!(c.verbs as ReadonlyArray<string>).includes(ctx.verb)) fail(CaveatFailureKind.Verb({ verb: ctx.verb }))
      } else if (has(c, "can")) {
        if (!(c.can as ReadonlyArray<string>).some((p) => matchesCapability(p, ctx.capability))) {
          fail(CaveatFailureKind.Capability({ capability: ctx.capability }))
        }
      } else if (has(c, "exp")) {
        if (!(ctx.now < (c.exp as number))) fail(CaveatFailureKind.Expired())
      } else if (has(c, "nbf")) {
        if (!(ctx.now >= (c.nbf as number))) fail(CaveatFailureKind.NotYetValid())
      } else if (!isCommit) {
        // `each`, `total`, `risk` and `only` are satisfied for verbs other than COMMIT (§6.3).
        continue
      } else if (proposal === undefined) {
        fail(CaveatFailureKind.NoProposal())
      } else if (has(c, "only")) {
        if (proposal.hash !== c.only) fail(CaveatFailureKind.Proposal({ only: c.only as string }))
      } else if (has(c, "risk")) {
        const risk = proposal.risk
        if (!isRiskLevel(risk)) fail(CaveatFailureKind.MalformedRisk({ risk }))
        else if (ctx.replay !== true && RANK[risk] > RANK[c.risk as RiskLevel]) fail(CaveatFailureKind.Risk({ risk, ceiling: c.risk as RiskLevel }))
      } else {
        const total = has(c, "total")
        const limit = (total ? c.total : c.each) as Limit
        if (!usesOk) {
          fail(CaveatFailureKind.MalformedUses({ uses: proposal.uses }))
          continue
        }
        if (ctx.replay === true) continue
        // Only what is reported is bound (§6.3): an own member named `of`, nothing inherited.
        if (!has(uses, limit.of)) continue
        const q = uses[limit.of]
        if (q.unit !== limit.unit) {
          fail(CaveatFailureKind.Unit({ of: limit.of, unit: q.unit, limitUnit: limit.unit }))
          continue
        }
        const max = quantityValue({ amount: limit.max, scale: limit.scale })
        const amount = quantityValue(q)
        if (!total) {
          if (compareDecimal(amount, max) > 0) fail(CaveatFailureKind.Each({ limit }))
          continue
        }
        if (compareDecimal(addDecimal(used(blockId, limit.of), amount), max) > 0) fail(CaveatFailureKind.Total({ limit }))
        else draws.push({ blockId, block: b, caveat: c as { total: Limit }, of: limit.of, limit: max, amount })
      }
    }
  }
  return { failures, draws: failures.length === 0 ? draws : [] }
}

/**
 * {@link evaluateCaveatsWith} with each `total` read through `usedOf` first, in grant order (one
 * Effect per lookup, none when nothing is bound by a `total`). Never fails but with `usedOf`'s
 * error: a malformed value is a hard failure, not an exception.
 */
export const evaluateCaveats = <E, R>(
  blocks: ReadonlyArray<CaveatBlock>,
  ctx: CaveatContext,
  usedOf: TotalsLookup<E, R>
): Effect.Effect<Evaluation, E, R> => {
  const reads = totalsRead(blocks, ctx)
  if (reads.length === 0) return Effect.sync(() => evaluateCaveatsWith(blocks, ctx, unread))
  return Effect.map(
    Effect.forEach(reads, (r) => usedOf(r.blockId, r.of)),
    (values) => {
      const byKey = new Map(reads.map((r, i) => [readKey(r.blockId, r.of), values[i]] as const))
      return evaluateCaveatsWith(blocks, ctx, (blockId, of) => byKey.get(readKey(blockId, of)) ?? unread(blockId, of))
    }
  )
}

/** A lookup `totalsRead` did not list: never asked for, by construction. */
const unread = (blockId: string, of: string): never => {
  throw new Error(`total ${of} of block ${blockId} was not read before the evaluation`)
}

/**
 * The one caveat check, used by authorize (every verb, COMMIT included) and by the approval
 * decision: `evaluateCaveats`, then `caveatVerdict`.
 */
export const checkCaveats = <E, R>(
  blocks: ReadonlyArray<CaveatBlock>,
  ctx: CaveatContext,
  usedOf: TotalsLookup<E, R>
): Effect.Effect<ReadonlyArray<TotalDraw>, CaveatsForbidden | CaveatsNeedConsent | E, R> => Effect.flatMap(evaluateCaveats(blocks, ctx, usedOf), caveatVerdict)
