// Outcomes and observations (seed "Outcome", "Value estimate and estimator state").
// An Outcome is a verified task-level result: recorded with the actions of the task as
// context, never as causal credit ("It does not automatically assign causal credit to preceding
// actions"). When the runtime or ledger declares a task, an outcome for another task is refused
// (`outcome_task_mismatch`: "Outcome task identity must match the runtime or ledger context when
// one is declared"). An observation is a realized gain of an action kind (in a context): it updates
// the ValueEstimator (the context's statistics and the kind's fallback) and is written with the
// estimator state it produced, so the ledger shows which `training_data_fingerprint` learned it.
import { Effect, Option, Schema } from "effect"
import type { StoreError } from "../accounting/store-error.js"
import { Kind, Outcome } from "./model.js"
import { ledgerError, type LedgerError } from "./reason.js"
import { Usd } from "./usd.js"
import { ValueEstimator } from "./value.js"
import { LedgerWriter } from "./writer.js"

export interface OutcomeContext {
  /** The task this runtime or ledger works on; when declared, every outcome must name it. */
  readonly taskId?: string
}

/** Checks `outcome` against the declared task (reason `outcome_task_mismatch`). */
export const checkOutcome = (outcome: Outcome, context: OutcomeContext = {}): Effect.Effect<Outcome, LedgerError> =>
  Effect.gen(function*() {
    const o = yield* Schema.validate(Outcome)(outcome).pipe(Effect.mapError((e) => ledgerError("invalid_action", e.message.slice(0, 500), "outcome")))
    if (context.taskId !== undefined && o.task_id !== context.taskId) {
      return yield* ledgerError("outcome_task_mismatch", `outcome for task ${o.task_id} in a context declared for task ${context.taskId}`, "outcome.task_id")
    }
    return o
  })

/** Records a verified outcome as an `outcome` line, after `checkOutcome`. */
export const recordOutcome = (outcome: Outcome, context: OutcomeContext = {}): Effect.Effect<void, LedgerError | StoreError, LedgerWriter> =>
  Effect.gen(function*() {
    const o = yield* checkOutcome(outcome, context)
    const writer = yield* LedgerWriter
    yield* writer.append([{ type: "outcome", outcome: o }])
  })

/**
 * Records the realized gain of an action of `kind` (in `context`): the ValueEstimator in context
 * learns it (contextual statistics and the kind's fallback) and the `observation` line carries the
 * estimator state after learning it. Without an estimator the observation is refused: there is no
 * state to attribute it to.
 */
export const recordObservation = (kind: string, gain: Usd, context?: string): Effect.Effect<void, LedgerError | StoreError, LedgerWriter> =>
  Effect.gen(function*() {
    const k = yield* Schema.validate(Kind)(kind).pipe(Effect.mapError(() => ledgerError("invalid_action", `not an action kind: ${kind.slice(0, 64)}`, "kind")))
    const g = yield* Schema.validate(Usd)(gain).pipe(Effect.mapError(() => ledgerError("invalid_usd", `not an exact decimal: ${String(gain).slice(0, 64)}`, "gain_usd")))
    if (context !== undefined && context.length > 128) return yield* ledgerError("invalid_action", "context over 128 characters", "context")
    const estimator = yield* Effect.serviceOption(ValueEstimator)
    if (Option.isNone(estimator)) return yield* ledgerError("invalid_action", "no ValueEstimator to learn the observation", "estimator")
    const state = yield* estimator.value.observe(k, g, context)
    const writer = yield* LedgerWriter
    yield* writer.append([{ type: "observation", kind: k, ...(context !== undefined ? { context } : {}), gain_usd: g, estimator: state }])
  })
