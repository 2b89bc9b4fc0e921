// Replay under another policy (seed "Replay"): what policy P would have recommended
// for every recorded proposed action, in recorded order, against fresh budgets, and the diff with
// what was recommended then. The same guard decides (an in-memory store, enforce mode); an action P allows
// is settled with its recorded actual usage if it ran, or with its estimate if it never ran: replay
// "does not know what unexecuted trajectories would have produced and is not causal proof".
import { Deferred, Effect, Exit, Fiber, Layer, Schema, Stream } from "effect"
import { RandomBytes } from "../kernel/index.js"
import type { LedgerEvent } from "./events.js"
import { GuardAbort, type Guard, makeGuard, type RunResult } from "./guard.js"
import type { Action, Cost, Decision, Mode } from "./model.js"
import type { Policy } from "./policy.js"
import type { DecisionReason, LedgerError } from "./reason.js"
import { fromNanos, toNanos, type Usd } from "./usd.js"
import { createLedger, type LedgerStore, LedgerWriter, type LedgerWriterService, makeWriter } from "./writer.js"
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

/** One recorded proposal (an action line), with what the recording and the replay said of it. */
interface Entry {
  readonly action: Action
  decision?: Decision
  state?: "committed" | "released" | "failed"
  actual?: Cost
  /** What P recommended, once the replay decided it. */
  now?: { readonly recommended: boolean; readonly reason: DecisionReason }
}

/** How a recorded action ended, as the replayed run reproduces it. */
type Ending =
  | { readonly _tag: "ran"; readonly actual: Cost }
  | { readonly _tag: "failed"; readonly actual: Cost }
  | { readonly _tag: "aborted" }

class RecordedFailure extends Schema.TaggedError<RecordedFailure>()("RecordedFailure", { actual: Schema.Unknown }) {}

/** A replayed action that is running: its recorded ending completes it. */
interface InFlight {
  readonly entry: Entry
  readonly ending: Deferred.Deferred<Ending>
  readonly fiber: Fiber.RuntimeFiber<unknown, LedgerError | StoreError>
}

const add = (s: Sums | undefined, tokens: number, usd: bigint): Sums => ({
  count: (s?.count ?? 0) + 1,
  tokens: (s?.tokens ?? 0) + tokens,
  usd: fromNanos(toNanos(s?.usd ?? "0") + usd)
})

/** The namespace of a ledger limit key (`ledger/<namespace>/<measure>/...`, policy.ts). */
const namespaceOf = (key: string): string | undefined => /^ledger\/([^/]+)\//.exec(key)?.[1]

/**
 * Replays `events` under `policy`. `memory` provides fresh in-memory Reservations, Atomic and a
 * LedgerStore (src/store/memory), so the replay never touches the recorded ledger's budgets.
 *
 * The recording is replayed as it happened, not one action after another: an action is decided
 * where its decision line stands, in the mode it was recorded in, by a guard of its own run (a
 * `stop` ends that run only), on the budgets of its run's namespace; it stays reserved until its
 * settlement line, where it ends as recorded (its actual spend, its measured failure, its abort).
 * Actions are keyed by run and by their place in the ledger, never by `action.id` alone: runs (and
 * retries) reuse ids. So a replay under the recorded policy reproduces every recommendation.
 */
export const replay = <E, R>(
  events: Stream.Stream<LedgerEvent, E, R>,
  policy: Policy,
  memory: Layer.Layer<Reservations | Atomic | LedgerStore>,
  /** Called as actions are replayed: how many are done, of how many recorded. */
  onProgress: (done: number, total: number) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<ReplayReport, E | LedgerError | StoreError, R> =>
  Effect.gen(function*() {
    const recorded: Array<LedgerEvent> = []
    const namespaces = new Map<string, string>()
    let total = 0
    yield* Stream.runForEach(events, (e) => Effect.sync(() => {
      if (e.type === "action") total++
      if (e.type === "reservation" && !namespaces.has(e.run_id)) {
        const ns = e.draws.map((d) => namespaceOf(d.key)).find((n) => n !== undefined)
        if (ns !== undefined) namespaces.set(e.run_id, ns)
      }
      if (e.type === "action" || e.type === "decision" || e.type === "reservation" || e.type === "settlement") recorded.push(e)
    }))
    // A run that never reserved (everything refused) shares the ledger's most common namespace.
    const counts = new Map<string, number>()
    for (const ns of namespaces.values()) counts.set(ns, (counts.get(ns) ?? 0) + 1)
    const fallback = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "replay"

    return yield* Effect.gen(function*() {
      const writer = yield* LedgerWriter
      // The replay's own decisions, as its guard writes them (the last one is the one just made).
      let last: Decision | undefined
      const capturing: LedgerWriterService = {
        ...writer,
        append: (bodies) => {
          for (const b of bodies) if (b.type === "decision") last = b.decision
          return writer.append(bodies)
        }
      }
      const guards = new Map<string, Guard>()
      const guardOf = (run: string, mode: Mode) =>
        Effect.gen(function*() {
          const key = JSON.stringify([run, mode])
          const found = guards.get(key)
          if (found !== undefined) return found
          const g = yield* makeGuard({ mode, policy, namespace: namespaces.get(run) ?? fallback, runId: "replay", owner: "replay" })
          guards.set(key, g)
          return g
        }).pipe(Effect.provideService(LedgerWriter, capturing))

      const entries: Array<Entry> = []
      interface Decided { readonly entry: Entry; flight: InFlight | undefined; reservation?: string }
      const byReservation = new Map<string, Decided>()
      // Decided and not yet settled, by run and action id: a settlement imported without its
      // reservation line (`mandate ledger record`) settles the earliest of its run and action.
      const open = new Map<string, Array<Decided>>()
      const keyOf = (run: string, action: string) => JSON.stringify([run, action])
      const running = new Set<InFlight>()
      let pending: { run: string; entry: Entry } | undefined
      /** The entry just decided, and its replayed run when it runs: the next reservation line is its. */
      let decided: Decided | undefined
      let done = 0

      /** Ends a replayed run as `ending` says and waits for its settlement. */
      const end = (f: InFlight, ending: Ending) =>
        Effect.gen(function*() {
          running.delete(f)
          yield* Deferred.succeed(f.ending, ending)
          const exit = yield* Fiber.await(f.fiber)
          if (Exit.isFailure(exit)) return yield* exit
        })

      /** Decides the pending action under P now, where the recording decided it. */
      const decide = Effect.gen(function*() {
        if (pending === undefined) return
        const { run, entry } = pending
        pending = undefined
        decided = { entry, flight: undefined }
        const k = keyOf(run, entry.action.id)
        open.set(k, [...(open.get(k) ?? []), decided])
        const mode = entry.decision?.mode ?? "enforce"
        const guard = yield* guardOf(run, mode)
        const ending = yield* Deferred.make<Ending>()
        const running_ = yield* Deferred.make<void>()
        const body = Effect.zipRight(Deferred.succeed(running_, undefined), Deferred.await(ending))
        const go: Effect.Effect<RunResult<undefined>, RecordedFailure | GuardAbort> = Effect.flatMap(body, (x): Effect.Effect<RunResult<undefined>, RecordedFailure | GuardAbort> =>
          x._tag === "ran" ? Effect.succeed({ value: undefined, actual: x.actual })
            : x._tag === "failed" ? Effect.fail(new RecordedFailure({ actual: x.actual }))
            : Effect.fail(new GuardAbort({ detail: "recorded abort" })))
        last = undefined
        const fiber: Fiber.RuntimeFiber<void, LedgerError | StoreError> = yield* Effect.fork(guard.guardDetailed(entry.action, go, { failureSpend: (e: RecordedFailure) => e.actual as Cost }).pipe(
          Effect.asVoid,
          // A refusal, a recorded failure or abort is the replayed action's own ending, not the replay's.
          Effect.catchTags({ ActionDenied: () => Effect.void, DirectiveIssued: () => Effect.void, RecordedFailure: () => Effect.void, GuardAbort: () => Effect.void })
        ))
        yield* Effect.raceFirst(Deferred.await(running_), Effect.asVoid(Fiber.await(fiber)))
        const flight: InFlight = { entry, ending, fiber }
        const made = last as Decision | undefined
        if (made === undefined) {
          // No decision written: the replay's own store or checks failed.
          const exit = yield* Fiber.await(fiber)
          if (Exit.isFailure(exit)) return yield* exit
        }
        entry.now = { recommended: made?.recommended ?? false, reason: made?.reason ?? "allowed" }
        if (yield* Deferred.isDone(running_)) {
          running.add(flight)
          // Recorded as not run (refused in enforce): it never ran, so it is counted at its estimate.
          if (entry.decision !== undefined && !entry.decision.allowed) yield* end(flight, { _tag: "ran", actual: entry.action.estimate })
          else decided.flight = flight
        }
        yield* onProgress(++done, total)
      })

      for (const e of recorded) {
        if (e.type === "action") {
          yield* decide
          const entry: Entry = { action: e.action }
          entries.push(entry)
          pending = { run: e.run_id, entry }
        } else if (e.type === "decision") {
          if (pending !== undefined && pending.run === e.run_id && pending.entry.action.id === e.decision.action_id) pending.entry.decision = e.decision
          yield* decide
        } else if (e.type === "reservation") {
          yield* decide
          if (decided !== undefined && decided.entry.action.id === e.action_id) {
            decided.reservation = e.reservation_id
            byReservation.set(e.reservation_id, decided)
          }
          decided = undefined
        } else if (e.type === "settlement") {
          yield* decide
          const k = keyOf(e.run_id, e.action_id)
          const r = byReservation.get(e.reservation_id) ??
            open.get(k)?.find((x) => x.reservation === undefined && x.entry.state === undefined && (x.entry.decision?.allowed ?? true))
          byReservation.delete(e.reservation_id)
          if (r === undefined) continue
          const rest = (open.get(k) ?? []).filter((x) => x !== r)
          if (rest.length > 0) open.set(k, rest)
          else open.delete(k)
          r.entry.state = e.state
          r.entry.actual = e.actual
          const f = r.flight
          if (f !== undefined && running.has(f)) {
            yield* end(f, e.state === "committed" ? { _tag: "ran", actual: e.actual } : e.state === "failed" ? { _tag: "failed", actual: e.actual } : { _tag: "aborted" })
          }
        }
      }
      yield* decide
      // Never settled in the recording (held by a process that died): the estimate stays, as it did.
      for (const f of [...running]) yield* end(f, { _tag: "ran", actual: f.entry.action.estimate })

      let unchanged = 0
      let newlyDenied: Sums = { count: 0, tokens: 0, usd: "0" as Usd }
      let newlyAllowed: Sums = { count: 0, tokens: 0, usd: "0" as Usd }
      const byReason: Record<string, Sums> = {}
      for (const r of entries) {
        // Recommendations are compared: in shadow and recommend what ran is not what was recommended.
        const then = r.decision?.recommended ?? true
        const now = r.now?.recommended ?? true
        const ran = r.state !== undefined && r.state !== "released"
        const actual = ran && r.actual !== undefined ? r.actual : r.action.estimate
        if (then === now) unchanged++
        else if (then) {
          const t = ran ? actual.tokens : 0
          const u = ran ? toNanos(actual.usd) : 0n
          newlyDenied = add(newlyDenied, t, u)
          const why = r.now?.reason ?? "allowed"
          byReason[why] = add(byReason[why], t, u)
        } else {
          newlyAllowed = add(newlyAllowed, r.action.estimate.tokens, toNanos(r.action.estimate.usd))
          const why = r.decision?.reason ?? "allowed"
          byReason[why] = add(byReason[why], r.action.estimate.tokens, toNanos(r.action.estimate.usd))
        }
      }
      return { actions: entries.length, unchanged, newly_denied: newlyDenied, newly_allowed: newlyAllowed, by_reason: byReason, note: REPLAY_NOTE }
    }).pipe(Effect.provide(Layer.effect(LedgerWriter, Effect.zipRight(createLedger({ ledger: "replay", mode: "local_full", key: undefined }), makeWriter)).pipe(
      Layer.provideMerge(Layer.merge(memory, RandomBytes.seeded(new Uint8Array(8))))
    )))
  }).pipe(Effect.withSpan("ledger.replay"))
