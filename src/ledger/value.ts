// Value estimates (seed "Value estimate and estimator state"). Explicit estimates
// (an Action's own `value`) are used as given. Otherwise the estimator answers from what it has
// observed: for the action's kind in its context (`contextual`), else for the kind (`historical`),
// else a zero prior. "Historical estimates are observational": they describe past gains of a kind,
// not what this action will cause. Every observation updates both the context's statistics and
// the kind's fallback, and moves `training_data_fingerprint` (a hash chain over the observations),
// so two estimators of one version with different learned state are told apart.
import { Context, Effect, Layer, Ref } from "effect"
import { encodeCanonical, hashB64, utf8 } from "../kernel/index.js"
import type { EstimatorState, ValueEstimate } from "./model.js"
import { fromNanos, toNanos, type Usd } from "./usd.js"

interface Stats {
  readonly n: number
  readonly sum: bigint
  /** Sum of squares of the gains in nano-dollars, as a float (for the uncertainty only). */
  readonly sumSq: number
}

interface State {
  readonly estimator: EstimatorState
  readonly byKind: ReadonlyMap<string, Stats>
  readonly byContext: ReadonlyMap<string, Stats>
}

export interface ValueEstimatorService {
  readonly estimate: (kind: string, context?: string) => Effect.Effect<ValueEstimate>
  /** An observed gain of an action of `kind` in `context`: updates the context and the kind's fallback. */
  readonly observe: (kind: string, gain: Usd, context?: string) => Effect.Effect<EstimatorState>
  readonly state: Effect.Effect<EstimatorState>
}

export class ValueEstimator extends Context.Tag("mandate/ledger/ValueEstimator")<ValueEstimator, ValueEstimatorService>() {}

/** The fingerprint of an estimator that has learned nothing yet. */
export const initialFingerprint = (id: string, version: string): string => hashB64(utf8(`mandate.value/${id}/${version}`))

/** Shrinks confidence for small samples: n / (n + 5). */
const confidenceOf = (n: number): number => n / (n + 5)

const add = (s: Stats | undefined, g: bigint): Stats => {
  const f = Number(g)
  return s === undefined ? { n: 1, sum: g, sumSq: f * f } : { n: s.n + 1, sum: s.sum + g, sumSq: s.sumSq + f * f }
}

const ctxKey = (kind: string, context: string) => `${kind}\u0000${context}`

export const makeValueEstimator = (id: string, version: string): Effect.Effect<ValueEstimatorService> =>
  Effect.map(Ref.make<State>({
    estimator: { id, version, training_data_fingerprint: initialFingerprint(id, version) },
    byKind: new Map(),
    byContext: new Map()
  }), (ref): ValueEstimatorService => {
    const fromStats = (s: Stats, provenance: ValueEstimate["provenance"], estimator: EstimatorState): ValueEstimate => {
      const mean = s.sum / BigInt(s.n)
      const m = Number(s.sum) / s.n
      const variance = Math.max(0, s.sumSq / s.n - m * m)
      return {
        expected_gain_usd: fromNanos(mean),
        uncertainty_usd: fromNanos(BigInt(Math.round(Math.sqrt(variance)))),
        confidence: confidenceOf(s.n),
        sample_size: s.n,
        provenance,
        estimator
      }
    }
    return {
      estimate: (kind, context) =>
        Effect.map(Ref.get(ref), (st) => {
          const c = context === undefined ? undefined : st.byContext.get(ctxKey(kind, context))
          if (c !== undefined) return fromStats(c, "contextual", st.estimator)
          const k = st.byKind.get(kind)
          if (k !== undefined) return fromStats(k, "historical", st.estimator)
          return { expected_gain_usd: "0" as Usd, uncertainty_usd: "0" as Usd, confidence: 0, sample_size: 0, provenance: "prior", estimator: st.estimator }
        }),
      observe: (kind, gain, context) =>
        Ref.modify(ref, (st) => {
          const g = toNanos(gain)
          const byKind = new Map(st.byKind).set(kind, add(st.byKind.get(kind), g))
          const byContext = context === undefined ? st.byContext : new Map(st.byContext).set(ctxKey(kind, context), add(st.byContext.get(ctxKey(kind, context)), g))
          const training_data_fingerprint = hashB64(utf8(encodeCanonical(
            { prev: st.estimator.training_data_fingerprint, kind, context: context ?? null, gain },
            "utf16"
          )))
          const estimator = { ...st.estimator, training_data_fingerprint }
          return [estimator, { estimator, byKind, byContext }]
        }),
      state: Effect.map(Ref.get(ref), (s) => s.estimator)
    }
  })

export const valueEstimatorLayer = (id = "mandate.mean", version = "1"): Layer.Layer<ValueEstimator> =>
  Layer.effect(ValueEstimator, makeValueEstimator(id, version))
