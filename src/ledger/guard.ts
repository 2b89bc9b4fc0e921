// The guard (seed "Reservation and settlement"): decide, reserve, run (or not),
// settle, record. `guard(action, run)`:
//   1. the policy's recommendation: its verdicts, then one atomic reserve of every draw through
//      accounting's Reservations (the same step writes the action, decision and reservation lines);
//   2. the mode applies it: enforce refuses what was not recommended (ActionDenied, or
//      DirectiveIssued for an extension directive); shadow and recommend run everything, reserving
//      the same draws with their limits lifted, so spend is still accounted (seed: "every proposed
//      action is applied, but the recommendation is preserved");
//   3. the run's exit settles the reservation: success commits the actual usage (replacing the
//      estimate), GuardAbort releases everything (no external spend), any other failure or an
//      interruption keeps the measured spend or, unmeasured, the whole estimate (conservative);
//      the dedup unit is given back on failure, so a failed action is never a completed duplicate.
// Every reservation gets its own identity (a random nonce), so concurrent semantic duplicates in a
// non-blocking mode never share one (seed: "so Shadow Mode does not alter agent behavior").
import { Cause, Effect, Either, Exit, Option, Schema } from "effect"
import { Atomic, type LimitExhausted, type LimitSpec, Reservations, type Settled } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { encodeBase64url, RandomBytes } from "../kernel/index.js"
import { type Action, type Cost, Decision, decodeAction, type Directive, Id, type Mode, type TokenUsage } from "./model.js"
import { fingerprint } from "./fingerprint.js"
import type { Draw, Policy } from "./policy.js"
import { type DecisionReason, ledgerError, LedgerError } from "./reason.js"
import { fromNanos, toNanos } from "./usd.js"
import { ValueEstimator } from "./value.js"
import { type HeldReservation, LedgerWriter } from "./writer.js"
import { type NegotiatedCapabilities, requireMode } from "./capability.js"
import type { EventBody } from "./events.js"
import { directiveEffect } from "./directive.js"

/** What a guarded run reports: its value and what it actually cost. */
export interface RunResult<A> {
  readonly value: A
  readonly actual: Cost
  readonly tokens?: TokenUsage
  /** `actual` is an estimate, not the provider's report (recorded on the settlement line). */
  readonly estimated?: boolean
}

/** A run fails with this to say it stopped before any external spend: the reservation is released. */
export class GuardAbort extends Schema.TaggedError<GuardAbort>()("GuardAbort", { detail: Schema.String }) {}

/** Enforce mode refused the action; nothing ran and nothing stays reserved. */
export class ActionDenied extends Schema.TaggedError<ActionDenied>()("ActionDenied", { decision: Decision }) {}

/** Enforce mode: a policy issued an extension directive (defer, reuse, stop, force_verify); nothing ran. */
export class DirectiveIssued extends Schema.TaggedError<DirectiveIssued>()("DirectiveIssued", { decision: Decision }) {}

export interface GuardConfig {
  readonly mode: Mode
  readonly policy: Policy
  /** Limit-key namespace (policy.ts). */
  readonly namespace: string
  readonly runId: string
  /** This process or worker: its held reservations are settled by `recover` after a crash. */
  readonly owner: string
  /** Required for enforce when given: the adapter must have blocked the canary (capability.ts). */
  readonly capabilities?: NegotiatedCapabilities
}

export interface GuardOptions<E, A = never, R = never> {
  /**
   * How to run the action a `modify` directive put in place of the proposed one (directive.ts).
   * Without it, enforce cannot apply a modify and refuses with DirectiveIssued.
   */
  readonly modified?: (action: Action) => Effect.Effect<RunResult<A>, E | GuardAbort, R>
  /** Measured spend of a failed run, when the failure carries it; otherwise the estimate is kept. */
  readonly failureSpend?: (e: E) => Cost | undefined
  /** Whether the spend `failureSpend` gave is itself an estimate (the failure line says measured: false). */
  readonly failureEstimated?: (e: E) => boolean
  /** Context for the value estimator (e.g. a task type). */
  readonly context?: string
  /**
   * This action's policy and run, in place of the guard's own (GuardConfig): one guard serves many
   * callers whose limits differ by caller, e.g. the gateway's calls by key (src/gateway), without
   * a guard built per call.
   */
  readonly policy?: Policy
  readonly runId?: string
}

/** What settling a failed run needs of the options. */
type Settling<E> = Pick<GuardOptions<E>, "failureSpend" | "failureEstimated">

/** A span per guarded action without a stack trace captured for it (a hot path: issue 30). */
const SPAN = { captureStackTrace: false } as const

const MAX = 2n ** 62n

const measureOf = (key: string): string => key.split("/")[2] ?? ""

/**
 * What stays consumed on each draw for a run that cost `cost`; dedup units only on success. Tokens
 * and USD are the actual usage in full, above the estimate too (seed: "Commit replaces the
 * reservation with actual usage"): the budget binds on real spend, and the accounting core reports
 * what went past the budget as overrun.
 */
const keptFor = (limits: ReadonlyArray<LimitSpec>, cost: Cost, success: boolean): Record<string, bigint> => {
  const out: Record<string, bigint> = {}
  for (const l of limits) {
    const m = measureOf(l.key)
    out[l.key] = m === "tokens" ? BigInt(cost.tokens)
      : m === "usd" ? toNanos(cost.usd)
      : m === "dedup" ? (success ? l.amount : 0n)
      : l.amount
  }
  return out
}

const sumMeasure = (limits: ReadonlyArray<LimitSpec>, kept: Record<string, bigint>, m: string) =>
  limits.filter((l) => measureOf(l.key) === m).reduce((s, l) => (kept[l.key] > s ? kept[l.key] : s), 0n)

/** A settlement's overrun per measure (the largest over its draws of that measure), as settlement-line members. */
const overrunFields = (settled: Settled) => {
  const by = Object.fromEntries(settled.limits.map((l, i) => [l.key, settled.overrun[i] ?? 0n]))
  const tokens = sumMeasure(settled.limits, by, "tokens")
  const usd = sumMeasure(settled.limits, by, "usd")
  return {
    overrun: tokens > 0n || usd > 0n,
    fields: { ...(tokens > 0n ? { overrun_tokens: tokens.toString() } : {}), ...(usd > 0n ? { overrun_usd: fromNanos(usd) } : {}) }
  }
}

/** The limits for this action: draws with caps applied. */
const limitsOf = (draws: ReadonlyArray<Draw>, caps: ReadonlyArray<{ key: string; by: bigint }>): Array<LimitSpec> =>
  draws.map((d) => {
    const by = caps.filter((c) => c.key === d.key).reduce((s, c) => s + c.by, 0n)
    return { key: d.key, limit: d.limit - by < 0n ? 0n : d.limit - by, amount: d.amount }
  })

export const makeGuard = (config: GuardConfig) =>
  Effect.gen(function*() {
    if (config.capabilities !== undefined) yield* requireMode(config.mode, config.capabilities)
    const reservations = yield* Reservations
    const atomic = yield* Atomic
    const writer = yield* LedgerWriter
    const random = yield* RandomBytes
    const estimator = yield* Effect.serviceOption(ValueEstimator)
    const { mode, owner } = config

    const reservationBody = (runId: string, action: Action, id: string, limits: ReadonlyArray<LimitSpec>): EventBody => ({
      type: "reservation", run_id: runId, action_id: action.id, reservation_id: id, owner,
      draws: limits.map((l) => ({ key: l.key, limit: l.limit.toString(), amount: l.amount.toString() }))
    })

    /** Settles `id` as `exit` says and writes the settlement in the same atomic step. */
    const settle = <A, E>(runId: string, action: Action, id: string, limits: ReadonlyArray<LimitSpec>, exit: Exit.Exit<RunResult<A>, E | GuardAbort>, options: Settling<E>) =>
      atomic.transaction(Effect.gen(function*() {
        const base = { type: "settlement" as const, run_id: runId, action_id: action.id, reservation_id: id }
        if (Exit.isSuccess(exit)) {
          const actual = exit.value.actual
          const kept = keptFor(limits, actual, true)
          const settled = yield* reservations.commit(id, kept)
          const over = overrunFields(settled)
          yield* writer.append([{
            ...base, state: "committed", reason: over.overrun ? "budget_overrun" : "committed", actual,
            ...(exit.value.tokens !== undefined ? { tokens: exit.value.tokens } : {}),
            ...(exit.value.estimated === true ? { estimated: true as const } : {}),
            kept_tokens: sumMeasure(limits, kept, "tokens").toString(), kept_usd: fromNanos(sumMeasure(limits, kept, "usd")),
            ...over.fields
          }])
          return
        }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure) && failure.value instanceof GuardAbort) {
          yield* reservations.release(id)
          yield* writer.append([{ ...base, state: "released", reason: "released_on_abort", actual: { ...action.estimate, tokens: 0, usd: fromNanos(0n) }, kept_tokens: "0", kept_usd: fromNanos(0n) }])
          return
        }
        const measured = Option.isSome(failure) ? options.failureSpend?.(failure.value as E) : undefined
        const estimated = measured !== undefined && Option.isSome(failure) && options.failureEstimated?.(failure.value as E) === true
        const spend = measured ?? action.estimate
        const kept = keptFor(limits, spend, false)
        const tag = Option.isSome(failure) && typeof failure.value === "object" && failure.value !== null && "_tag" in failure.value
          ? String((failure.value as { _tag: unknown })._tag).replace(/[^A-Za-z0-9_.:-]/g, "").slice(0, 64) || "Error"
          : Cause.isInterruptedOnly(exit.cause) ? "Interrupted" : "Defect"
        const settled = yield* reservations.settleFailure(id, kept)
        yield* writer.append([
          { type: "failure", run_id: runId, action_id: action.id, error: tag, measured: measured !== undefined && !estimated },
          { ...base, state: "failed", reason: "failure_settled", actual: spend, ...(estimated ? { estimated: true as const } : {}), kept_tokens: sumMeasure(limits, kept, "tokens").toString(), kept_usd: fromNanos(sumMeasure(limits, kept, "usd")), ...overrunFields(settled).fields }
        ])
      }))

    /** Set by a `stop` directive in enforce: every later action of this guard is refused with it (directive.ts). */
    let stopped = Option.none<Decision>()
    const refuseRecorded = (runId: string, action: Action, d: Decision) =>
      Effect.zipRight(
        writer.append([{ type: "action", run_id: runId, action }, { type: "decision", run_id: runId, decision: d }]),
        Effect.fail<ActionDenied | DirectiveIssued>(d.directive._tag === "deny" ? new ActionDenied({ decision: d }) : new DirectiveIssued({ decision: d }))
      )

    const guardDetailed = <A, E, R>(
      proposed: Action,
      run: Effect.Effect<RunResult<A>, E | GuardAbort, R>,
      options: GuardOptions<E, A, R> = {},
      depth = 0
    ): Effect.Effect<{ readonly value: A; readonly decision: Decision }, E | GuardAbort | ActionDenied | DirectiveIssued | LedgerError | StoreError, R> =>
      Effect.gen(function*() {
        const runId = options.runId ?? config.runId
        const policy = options.policy ?? config.policy
        const decoded = decodeAction(proposed)
        if (Either.isLeft(decoded)) {
          // Enforce refuses with the documented code; shadow and recommend never block (seed: "every
          // proposed action is applied"): a would-refuse is recorded and the action runs.
          if (mode === "enforce") return yield* decoded.left
          return yield* wouldRefuseUndecoded(runId, proposed, decoded.left.reason, run)
        }
        const action = decoded.right
        const fp = yield* fingerprint(action, "exact")
        const decision = (recommended: boolean, reason: DecisionReason, directive: Directive, policy?: string): Decision => ({
          action_id: action.id, mode, allowed: mode === "enforce" ? recommended : true, recommended, reason, directive,
          ...(policy !== undefined ? { policy } : {}), fingerprint: fp
        })
        const stop = stopped
        if (Option.isSome(stop)) {
          return yield* refuseRecorded(runId, action, decision(false, "directive_issued", { _tag: "stop" }, stop.value.policy))
        }
        const value = action.value ?? (Option.isSome(estimator) ? yield* estimator.value.estimate(action.kind, options.context) : undefined)
        const c = yield* policy.evaluate({ action, value, namespace: writer.limitNamespace(config.namespace) })
        const limits = limitsOf(c.draws, c.caps)
        const verdict = c.verdicts[0]
        // The directive's effect in this mode (directive.ts, the one place that decides it).
        if (verdict !== undefined) {
          const d = decision(false, verdict.reason, verdict.directive, verdict.policy)
          const modified = options.modified
          switch (directiveEffect(mode, verdict.directive, depth === 0 && modified !== undefined)) {
            case "refuse":
            case "issue":
              return yield* refuseRecorded(runId, action, d)
            case "stop":
              stopped = Option.some(d)
              return yield* refuseRecorded(runId, action, d)
            case "replace": {
              const replacement = (verdict.directive as Extract<Directive, { _tag: "modify" }>).action
              yield* writer.append([{ type: "action", run_id: runId, action }, { type: "decision", run_id: runId, decision: d }])
              const { modified: _, ...rest } = options
              return yield* guardDetailed(replacement, modified!(replacement), rest, 1)
            }
            case "run":
              break
          }
        }
        const id = `r-${encodeBase64url(yield* random.bytes(12))}`
        const reserveAndRecord = (ls: ReadonlyArray<LimitSpec>, d: Decision) =>
          atomic.transaction(Effect.gen(function*() {
            yield* reservations.reserve({ id, limits: ls, onFailure: "consume" })
            yield* writer.append([{ type: "action", run_id: runId, action }, { type: "decision", run_id: runId, decision: d }, reservationBody(runId, action, id, ls)])
          })).pipe(
            // A colliding random id or a malformed request is this module's bug, not a decision.
            Effect.catchTags({ ReservationConflict: Effect.die, ReservationInvalid: Effect.die })
          )
        /** Shadow must not change the agent's behaviour: a broken store or ledger is logged, the action runs. */
        const unrecorded = (d: Decision) => (e: StoreError | LedgerError) =>
          mode === "enforce"
            ? Effect.fail(e)
            : Effect.zipRight(Effect.logWarning("ledger guard: not recorded", e), Effect.map(run, (r) => ({ _tag: "ran", value: r.value, decision: d }) as const))

        if (verdict === undefined) {
          const allowed = decision(true, "allowed", { _tag: "allow" })
          const reserved = yield* reserveAndRecord(limits, allowed).pipe(
            Effect.as({ _tag: "reserved" } as const),
            Effect.catchTags({
              LimitExhausted: (ex) => {
                const draw = c.draws.find((x) => x.key === ex.key)!
                // Over the lowered limit but within the budget: the verification reserve refused it.
                const cap = c.caps.find((x) => x.key === ex.key)
                const byCap = cap !== undefined && ex.used + ex.amount <= draw.limit
                return Effect.succeed({ _tag: "refused", decision: decision(false, byCap ? cap.reason : draw.reason, { _tag: "deny" }, byCap ? cap.policy : draw.policy) } as const)
              },
              StoreError: unrecorded(allowed),
              LedgerError: unrecorded(allowed)
            })
          )
          if (reserved._tag === "ran") return { value: reserved.value, decision: reserved.decision }
          if (reserved._tag === "reserved") return yield* runAndSettle(runId, action, id, limits, run, options, allowed)
          if (mode === "enforce") return yield* refuseRecorded(runId, action, reserved.decision)
          return yield* runLifted(runId, action, id, limits, run, options, reserved.decision, reserveAndRecord, unrecorded)
        }
        return yield* runLifted(runId, action, id, limits, run, options, decision(false, verdict.reason, verdict.directive, verdict.policy), reserveAndRecord, unrecorded)
      }).pipe(Effect.withSpan("ledger.guard", { attributes: { kind: proposed.kind, mode, depth }, ...SPAN }))

    /**
     * Shadow and recommend, for an action that does not decode: its decision (not recommended, the
     * documented code) is recorded under its id, or a fresh `invalid-<hex>` id when the id itself is
     * what is wrong, and the action runs. Nothing describes what it would draw on, so no budget is
     * reserved for it; a ledger that cannot record it is logged, and the action still runs.
     */
    const wouldRefuseUndecoded = <A, E, R>(runId: string, proposed: unknown, reason: DecisionReason, run: Effect.Effect<RunResult<A>, E | GuardAbort, R>) =>
      Effect.gen(function*() {
        const given = typeof proposed === "object" && proposed !== null ? (proposed as { id?: unknown }).id : undefined
        const actionId = Schema.is(Id)(given) ? given : `invalid-${Buffer.from(yield* random.bytes(8)).toString("hex")}`
        const d: Decision = { action_id: actionId, mode, allowed: true, recommended: false, reason, directive: { _tag: "deny" }, fingerprint: "" }
        yield* writer.append([{ type: "decision", run_id: runId, decision: d }]).pipe(
          Effect.catchAll((e) => Effect.logWarning("ledger guard: not recorded", e))
        )
        const r = yield* run
        return { value: r.value, decision: d }
      })

    /**
     * A non-blocking mode applies what was not recommended: the same draws, their limits lifted, so
     * the spend is still accounted; the decision keeps the recommendation.
     */
    const runLifted = <A, E, R>(
      runId: string,
      action: Action, id: string, limits: ReadonlyArray<LimitSpec>, run: Effect.Effect<RunResult<A>, E | GuardAbort, R>, options: GuardOptions<E, A, R>, d: Decision,
      reserveAndRecord: (ls: ReadonlyArray<LimitSpec>, d: Decision) => Effect.Effect<void, LimitExhausted | StoreError | LedgerError>,
      unrecorded: (d: Decision) => (e: StoreError | LedgerError) => Effect.Effect<{ readonly _tag: "ran"; readonly value: A; readonly decision: Decision }, E | GuardAbort | StoreError | LedgerError, R>
    ) =>
      Effect.gen(function*() {
        const lifted = limits.map((l) => ({ ...l, limit: MAX }))
        const recorded = yield* reserveAndRecord(lifted, d).pipe(
          Effect.as({ _tag: "reserved" } as const),
          // Lifted limits cannot be exhausted short of 2^62; should one be, the action still runs unrecorded.
          Effect.catchTags({ LimitExhausted: (e) => unrecorded(d)(ledgerError("invalid_action", `limit ${e.key} over 2^62`)), StoreError: unrecorded(d), LedgerError: unrecorded(d) })
        )
        if (recorded._tag === "ran") return { value: recorded.value, decision: recorded.decision }
        return yield* runAndSettle(runId, action, id, lifted, run, options, d)
      })

    const runAndSettle = <A, E, R>(runId: string, action: Action, id: string, limits: ReadonlyArray<LimitSpec>, run: Effect.Effect<RunResult<A>, E | GuardAbort, R>, options: Settling<E>, decision: Decision) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const exit = yield* Effect.exit(restore(run))
          // A failed settlement leaves the reservation held; `recover` settles it conservatively.
          yield* settle(runId, action, id, limits, exit, options).pipe(
            Effect.catchAll((e) => Effect.logWarning("ledger guard: settlement not recorded; recover() will settle it", e))
          )
          const r = yield* exit
          return { value: r.value, decision }
        }))

    const guard = <A, E, R>(action: Action, run: Effect.Effect<RunResult<A>, E | GuardAbort, R>, options: GuardOptions<E, A, R> = {}) =>
      Effect.map(guardDetailed(action, run, options), (r) => r.value)

    /**
     * Settles every reservation `owner` left held (a killed process): each keeps its whole
     * estimate (the action may have spent it) except the dedup unit, as a failure would.
     */
    const recover = Effect.flatMap(writer.held(owner), (held) => recoverHeld(held, "keep")).pipe(
      Effect.provideService(Reservations, reservations),
      Effect.provideService(Atomic, atomic),
      Effect.provideService(LedgerWriter, writer)
    )

    return { guard, guardDetailed, recover, config } as const
  }).pipe(Effect.withSpan("ledger.makeGuard"))

export type Guard = Effect.Effect.Success<ReturnType<typeof makeGuard>>

/**
 * Settles reservations a dead process left held (seed "Failure settlement records measured or
 * conservatively estimated spend from a failed external action"), each with a `recovered_after_crash`
 * settlement line in the same atomic step. "keep": the whole estimate stays consumed (the action may
 * have spent it) but the dedup unit is given back, as a failure would; "release": everything is given
 * back, for an operator who knows the action never spent. One already settled (by its own process
 * before it died, or by another recovery) is only recorded, never settled twice. Answers how many.
 */
export const recoverHeld = (held: ReadonlyArray<HeldReservation>, how: "keep" | "release") =>
  Effect.gen(function*() {
    const reservations = yield* Reservations
    const atomic = yield* Atomic
    const writer = yield* LedgerWriter
    let settled = 0
    for (const h of held) {
      yield* atomic.transaction(Effect.gen(function*() {
        const r = yield* reservations.get(h.id)
        if (Option.isNone(r)) return
        const kept: Record<string, bigint> = {}
        for (const l of r.value.limits) kept[l.key] = how === "release" || measureOf(l.key) === "dedup" ? 0n : l.amount
        const final = r.value.state === "held"
          ? (how === "release" ? yield* reservations.release(h.id) : yield* reservations.settleFailure(h.id, kept))
          : r.value
        const byKey = Object.fromEntries(final.limits.map((l, i) => [l.key, final.consumed[i]]))
        const keptTokens = sumMeasure(final.limits, byKey, "tokens")
        const keptUsd = sumMeasure(final.limits, byKey, "usd")
        yield* writer.append([{
          type: "settlement", run_id: h.run_id, action_id: h.action_id, reservation_id: h.id,
          state: final.state === "held" ? "failed" : final.state, reason: "recovered_after_crash",
          actual: { tokens: Number(keptTokens), usd: fromNanos(keptUsd), latency_ms: 0, risk: 0 },
          kept_tokens: keptTokens.toString(), kept_usd: fromNanos(keptUsd)
        }])
        settled++
      }))
    }
    return settled
  }).pipe(Effect.withSpan("ledger.recoverHeld"))
export { LedgerError }
