// Replay under another policy (seed "Replay"; issue 9 item 8): what policy P would have recommended
// for every recorded proposed action, in recorded order, against fresh budgets, and the diff with
// what was recorded. The same guard decides (an in-memory store, enforce mode); an action P allows
// is settled with its recorded actual usage if it ran, or with its estimate if it never ran: replay
// "does not know what unexecuted trajectories would have produced and is not causal proof".
import { Effect, Layer, Schema, Stream } from "effect"
import { RandomBytes } from "../kernel/index.js"
import type { LedgerEvent } from "./events.js"
import { makeGuard } from "./guard.js"
import type { Action, Cost, Decision } from "./model.js"
import type { Policy } from "./policy.js"
import type { DecisionReason, LedgerError } from "./reason.js"
import { fromNanos, toNanos, type Usd } from "./usd.js"
import { createLedger, type LedgerStore, LedgerWriter, makeWriter } from "./writer.js"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"

export const REPLAY_NOTE =
  "Replay is not causal: it says what the policy would have recommended for the actions that were proposed. " +
  "It cannot know what the agent would have done after a different decision, and actions that never ran are counted at their estimates."

export interface Sums { count: number; tokens: number; usd: Usd }

export interface ReplayReport {
  readonly actions: number
  readonly unchanged: number
  /** Recorded as allowed, denied under P: the spend they had is what P would have saved. */
  readonly newly_denied: Sums
  /** Recorded as denied, allowed under P: their estimates are what P would have spent more. */
  readonly newly_allowed: Sums
  /** Changed decisions by the reason that decided them (P's reason when denied, the recorded one when allowed). */
  readonly by_reason: Readonly<Record<string, Sums>>
  readonly note: string
}

interface Recorded {
  action: Action
  decision?: Decision
  state?: "committed" | "released" | "failed"
  actual?: Cost
}

class RecordedFailure extends Schema.TaggedError<RecordedFailure>()("RecordedFailure", {}) {}

const add = (s: Sums | undefined, tokens: number, usd: bigint): Sums => ({
  count: (s?.count ?? 0) + 1,
  tokens: (s?.tokens ?? 0) + tokens,
  usd: fromNanos(toNanos(s?.usd ?? "0") + usd)
})

/**
 * Replays `events` under `policy`. `memory` provides fresh in-memory Reservations, Atomic and a
 * LedgerStore (src/store/memory), so the replay never touches the recorded ledger's budgets.
 */
export const replay = <E, R>(
  events: Stream.Stream<LedgerEvent, E, R>,
  policy: Policy,
  memory: Layer.Layer<Reservations | Atomic | LedgerStore>,
  /** Called as actions are replayed: how many are done, of how many recorded. */
  onProgress: (done: number, total: number) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<ReplayReport, E | LedgerError | StoreError, R> =>
  Effect.gen(function*() {
    const recorded = new Map<string, Recorded>()
    let namespace = "replay"
    yield* Stream.runForEach(events, (e) => Effect.sync(() => {
      if (e.type === "action") recorded.set(e.action.id, { action: e.action })
      else if (e.type === "decision") { const r = recorded.get(e.decision.action_id); if (r) r.decision = e.decision }
      else if (e.type === "settlement") { const r = recorded.get(e.action_id); if (r) { r.state = e.state; r.actual = e.actual } }
      else if (e.type === "ledger") namespace = "replay"
    }))
    return yield* Effect.gen(function*() {
      const guard = yield* makeGuard({ mode: "enforce", policy, namespace, runId: "replay", owner: "replay" })
      let unchanged = 0
      let newlyDenied: Sums = { count: 0, tokens: 0, usd: "0" as Usd }
      let newlyAllowed: Sums = { count: 0, tokens: 0, usd: "0" as Usd }
      const byReason: Record<string, Sums> = {}
      let done = 0
      for (const r of recorded.values()) {
        const ran = r.state !== undefined && r.state !== "released"
        const actual = ran && r.actual !== undefined ? r.actual : r.action.estimate
        const run = r.state === "failed" ? Effect.fail(new RecordedFailure()) : Effect.succeed({ value: undefined, actual })
        // What P recommends: a recorded failure still ran (allowed); a refusal names P's reason; a
        // failure of the replay's own stores or checks ends the replay.
        const now = yield* guard.guardDetailed(r.action, run, { failureSpend: () => actual }).pipe(
          Effect.as({ allowed: true, reason: "allowed" as DecisionReason }),
          Effect.catchTags({
            RecordedFailure: () => Effect.succeed({ allowed: true, reason: "allowed" as DecisionReason }),
            ActionDenied: (e) => Effect.succeed({ allowed: false, reason: e.decision.reason }),
            DirectiveIssued: (e) => Effect.succeed({ allowed: false, reason: e.decision.reason }),
            // The replayed run never aborts; should one, it released everything, as an abort does.
            GuardAbort: () => Effect.succeed({ allowed: true, reason: "allowed" as DecisionReason })
          })
        )
        const allowedNow = now.allowed
        const reasonNow = now.reason
        const allowedThen = r.decision?.allowed ?? true
        if (allowedThen === allowedNow) unchanged++
        else if (allowedThen) {
          const t = ran ? actual.tokens : 0
          const u = ran ? toNanos(actual.usd) : 0n
          newlyDenied = add(newlyDenied, t, u)
          byReason[reasonNow] = add(byReason[reasonNow], t, u)
        } else {
          newlyAllowed = add(newlyAllowed, r.action.estimate.tokens, toNanos(r.action.estimate.usd))
          const why = r.decision?.reason ?? "allowed"
          byReason[why] = add(byReason[why], r.action.estimate.tokens, toNanos(r.action.estimate.usd))
        }
        yield* onProgress(++done, recorded.size)
      }
      return { actions: recorded.size, unchanged, newly_denied: newlyDenied, newly_allowed: newlyAllowed, by_reason: byReason, note: REPLAY_NOTE }
    }).pipe(Effect.provide(Layer.effect(LedgerWriter, Effect.zipRight(createLedger({ ledger: "replay", mode: "local_full", key: undefined }), makeWriter)).pipe(
      Layer.provideMerge(Layer.merge(memory, RandomBytes.seeded(new Uint8Array(8))))
    )))
  }).pipe(Effect.withSpan("ledger.replay"))
