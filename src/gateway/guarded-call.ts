// A model call as a decision-ledger action (seed 003 "Action, Cost, and TokenUsage"; "Reservation
// and settlement"). Every call the gateway forwards, or refuses after reading it, goes through the
// ledger's guard: one atomic step reserves the call's worst case on every budget level and writes
// the action, decision and reservation lines; the answer's usage settles it with its settlement
// line. So the ledger's settled sum is the budgets' spent amount by construction, the privacy modes
// apply to gateway calls as to any action, `mandate ledger replay` reads gateway runs, and a
// reservation left by a killed gateway is found by its owner (recovery.ts).
//
// The budget levels are USD draws of the ledger (nano-USD, measure "usd"), one namespace per level
// (`gateway.key.ID`, `gateway.user.ID`, `gateway.team.ID`, through the writer's `limitNamespace`,
// which pseudonymizes it in safe_telemetry): the limit key's window is the level's reset period.
// The key's own checks (allow list, a known price, the per-call ceiling) are the policy's verdicts,
// so shadow and recommend record what enforce would have refused, and run the call.
import { createHash } from "node:crypto"
import { Effect, Schema } from "effect"
import { OwnerLease } from "../accounting/owner-lease.js"
import type { EventBody } from "../ledger/events.js"
import { makeGuard } from "../ledger/guard.js"
import { type Action, Cost, type Decision, type Mode, type TokenUsage } from "../ledger/model.js"
import type { Contribution, Draw, Policy, Verdict } from "../ledger/policy.js"
import { fromNanos } from "../ledger/usd.js"
import { LedgerWriter, type LedgerWriterService } from "../ledger/writer.js"
import { type Level, windowOf } from "./budget.js"
import type { GatewayServerCode } from "./reason.js"
import type { Provider, Route, Usage } from "./wire/types.js"

/** The ledger kind of a gateway call. */
export const LLM_CALL_KIND = "llm_call"

/** The gateway prices in micro-USD; the ledger's USD draws count nano-USD. */
export const NANOS_PER_MICRO = 1000n

/** The limit of a level with no budget of its own: accounted, never binding (the guard's own lift). */
export const UNBOUNDED_NANOS = 2n ** 62n

const SAFE_ID = /^[A-Za-z0-9._:@+=-]{1,96}$/

/** A level id as it may stand in a limit key and an Id: itself when plain, else a digest of it. */
export const plainId = (id: string): string => (SAFE_ID.test(id) ? id : `h.${createHash("sha256").update(id, "utf8").digest("hex").slice(0, 40)}`)

/** The ledger namespace of one budget level (before the writer's `limitNamespace`). */
export const levelNamespace = (l: Pick<Level, "level" | "id">): string => `gateway.${l.level}.${plainId(l.id)}`

/** The limit key of a level in the window holding `nowMs` (the ledger's `ledger/NS/usd/NAME` form, policy.ts). */
export const levelKey = (l: Level, limitNamespace: (ns: string) => string, timeZone: string, nowMs: number): string =>
  `ledger/${limitNamespace(levelNamespace(l))}/usd/${windowOf(l.budget.period, timeZone, nowMs)}`

/** What the gateway read of one call before deciding it. */
export interface CallFacts {
  readonly id: string
  readonly route: Route
  readonly provider: Provider
  readonly model: string
  readonly stream: boolean
  /** The key level's id (the key's stable id, or its hash for a key the store does not know). */
  readonly keyId: string
  readonly user?: string | undefined
  readonly team?: string | undefined
  readonly levels: ReadonlyArray<Level>
  readonly models?: ReadonlyArray<string> | undefined
  /** micro-USD; undefined when no price is known for the model. */
  readonly worst: bigint | undefined
  readonly ceiling?: bigint | undefined
  readonly inputTokens: number
  readonly maxOutputTokens: number
}

/** The run a call belongs to: its key's (the ledger groups and replays by run). */
export const runOf = (f: Pick<CallFacts, "keyId">): string => `gateway.${plainId(f.keyId)}`

/** The call as a ledger Action: its worst case is the estimate; prompts are never part of it. */
export const callAction = (f: CallFacts): Action => {
  const tokens: TokenUsage = { uncached_input: f.inputTokens, cached_input: 0, output: f.maxOutputTokens, reasoning: 0, total: f.inputTokens + f.maxOutputTokens }
  return {
    id: f.id,
    kind: LLM_CALL_KIND,
    // local_full keeps these; safe_telemetry drops metadata whole and pseudonymizes the principal.
    metadata: {
      route: f.route, provider: f.provider, model: f.model, stream: f.stream, key: f.keyId,
      ...(f.user !== undefined ? { user: f.user } : {}), ...(f.team !== undefined ? { team: f.team } : {})
    },
    estimate: { tokens: tokens.total, usd: fromNanos((f.worst ?? 0n) * NANOS_PER_MICRO), latency_ms: 0, risk: 0 },
    tokens_estimate: tokens,
    principal: plainId(f.user ?? f.keyId)
  }
}

/** The call's policy: the key's checks as verdicts (in this order), every level as a USD draw. */
export const callPolicy = (f: CallFacts, limitNamespace: (ns: string) => string, timeZone: string, nowMs: number): Policy => {
  const verdicts: Array<Verdict> = []
  const deny = (reason: Verdict["reason"], policy: string) => verdicts.push({ directive: { _tag: "deny" }, reason, policy })
  if (f.models !== undefined && !f.models.includes(f.model)) deny("model_not_allowed", "gateway:models")
  if (f.worst === undefined) deny("price_unknown", "gateway:prices")
  if (f.ceiling !== undefined && f.worst !== undefined && f.worst > f.ceiling) deny("call_ceiling_exceeded", "gateway:ceiling")
  const amount = (f.worst ?? 0n) * NANOS_PER_MICRO
  const draws: Array<Draw> = f.levels.map((l) => ({
    key: levelKey(l, limitNamespace, timeZone, nowMs),
    limit: l.budget.limit >= UNBOUNDED_NANOS / NANOS_PER_MICRO ? UNBOUNDED_NANOS : l.budget.limit * NANOS_PER_MICRO,
    amount,
    reason: "usd_budget_exhausted",
    policy: `gateway:${l.level}`,
    measure: "usd"
  }))
  const c: Contribution = { draws, caps: [], verdicts }
  return { name: "gateway", evaluate: () => Effect.succeed(c) }
}

/** What a call cost: the ledger's Cost and TokenUsage of `usage` priced at `micro`. */
export const costOf = (usage: Usage, micro: bigint, latencyMs: number): { readonly actual: Cost; readonly tokens: TokenUsage } => {
  const cached = Math.min(usage.cacheReadTokens, usage.inputTokens)
  const tokens: TokenUsage = {
    uncached_input: usage.inputTokens - cached, cached_input: cached, output: usage.outputTokens, reasoning: 0,
    total: usage.inputTokens + usage.outputTokens
  }
  return { actual: { tokens: tokens.total, usd: fromNanos(micro * NANOS_PER_MICRO), latency_ms: Math.max(0, Math.round(latencyMs)), risk: 0 }, tokens }
}

/**
 * A forwarded call that failed after the upstream produced output (an upstream error mid-stream):
 * what it produced stays charged, as measured or, without a usage report, as estimated.
 */
export class UpstreamFailedAfterOutput extends Schema.TaggedError<UpstreamFailedAfterOutput>()("UpstreamFailedAfterOutput", {
  actual: Cost,
  estimated: Schema.Boolean,
  status: Schema.Number
}) {}

/** The gateway's reason code and message for a decision the guard refused. */
export const refusalOf = (d: Decision, worstMicro: bigint | undefined, f: Pick<CallFacts, "model" | "provider" | "ceiling">): { readonly code: GatewayServerCode; readonly message: string } => {
  switch (d.reason) {
    case "model_not_allowed": return { code: "gateway/model_not_allowed", message: `model ${f.model} is not on this key's allow list` }
    case "price_unknown": return { code: "gateway/no_price", message: `no price is known for ${f.provider} model ${f.model}` }
    case "call_ceiling_exceeded":
      return { code: "gateway/call_ceiling", message: `the call's worst case, ${worstMicro} micro-USD, is above this key's per-call ceiling of ${f.ceiling}` }
    default: {
      const level = d.policy?.startsWith("gateway:") === true ? d.policy.slice("gateway:".length) : "key"
      return { code: "gateway/budget_exhausted", message: `the ${level} budget does not cover this call's worst case of ${worstMicro ?? 0n} micro-USD` }
    }
  }
}

/** Who waits for the settlement line of a call, by action id (the gateway's record reports what the ledger holds). */
export type SettlementWaiters = Map<string, (line: Extract<EventBody, { type: "settlement" }>) => void>

/** The guards' own policy, never evaluated: every call brings its own (GuardOptions.policy). */
const UNSET_POLICY: Policy = { name: "gateway", evaluate: () => Effect.dieMessage("a gateway call without its policy") }

/**
 * One guard per mode for the life of a gateway, over one writer that hands each call its settlement
 * line: a call's policy and run (its key's levels and checks) are given with the call
 * (GuardOptions.policy, runId), so no guard is built per call (issue 30: no runtime tax per call).
 */
export const makeCallGuards = (waiters: SettlementWaiters) =>
  Effect.gen(function*() {
    const writer = yield* LedgerWriter
    const lease = yield* OwnerLease
    const capturing: LedgerWriterService = {
      ...writer,
      append: (bodies) => {
        for (const b of bodies) if (b.type === "settlement") waiters.get(b.action_id)?.(b)
        return writer.append(bodies)
      }
    }
    const make = (mode: Mode) =>
      makeGuard({ mode, policy: UNSET_POLICY, namespace: "gateway", runId: "gateway", owner: lease.owner }).pipe(Effect.provideService(LedgerWriter, capturing))
    return { enforce: yield* make("enforce"), shadow: yield* make("shadow"), recommend: yield* make("recommend"), limitNamespace: writer.limitNamespace }
  })
