// The Writ executor: section 7 (executing a call), section 8 (standing operations), section 9
// (state, write failures, recovery after restart), 9.1 (revocation), 9.3 (audit) and 9.4 (acks).
// This module wires the steps together; each lives in a module named after its spec section:
//
//   state.ts       the services and the non-durable state (running operations, reversal claims,
//                  unsaved revokes, audit bases): what a restart loses, as section 14.1 says
//   admission.ts   section 7 steps 1 to 10
//   perform.ts     step 11 (operation.ts: the application), sys-tallies.ts (8.2), sys-undo.ts (8.1)
//   finish.ts      step 12: sign and persist the final tally
//   revocation.ts  sections 9.1 and 9.4
//   recovery.ts    section 9 after a restart
//   audit.ts       section 9.3;  answers.ts: what a call or revoke is answered (section 10)
import { Context, Effect, Fiber, FiberSet, Layer, Option, type Scope } from "effect"
import type { ObjectInput } from "../verify.js"
import { admit } from "./admission.js"
import type { CallAnswer, RevokeAnswer } from "./answers.js"
import { auditAnswer, auditUnidentified, flushSuppressed, peerNameOf } from "./audit.js"
import { perform } from "./perform.js"
import { recover } from "./recovery.js"
import { replayKeyOf } from "./replay-table.js"
import { answerReplay, rememberReplay, replayNow } from "./replays.js"
import { revoke, stopUnder } from "./revocation.js"
import { VerificationCache } from "../../kernel/verification-cache.js"
import { RootLifetime } from "../chain.js"
import { Peer, type RevokeIntake } from "./services.js"
import { unixSeconds } from "../../kernel/clock.js"
import { type ExecutorEnv, type ExecutorOptions, type ExecutorRequirements, makeEnv, type StepEnv } from "./state.js"
import type { AuditEntry, StoreError } from "./stores.js"

export * from "./answers.js"
export type { ExecutorOptions, ExecutorRequirements } from "./state.js"

export interface ExecutorService {
  /** The executor's own key (the leaf `hld` it acts as, section 7 step 6). */
  readonly did: string
  /** Section 7. `peer` is who the transport authenticated (section 7.6); default: no peer. */
  readonly call: (input: ObjectInput, peer?: Peer) => Effect.Effect<CallAnswer>
  /**
   * Section 9.1. A revoke is not subject to peer binding (section 7.6); `peer` is audited. The
   * transport's `intake` is charged once the revoke has verified, before it is recorded (12).
   */
  readonly revoke: (input: ObjectInput, peer?: Peer, intake?: RevokeIntake) => Effect.Effect<RevokeAnswer>
  /**
   * Section 9.3: a request the transport refused before handing it over (too large, wrong path,
   * method or media type, unreadable, over the revoke rate) is audited as a call or revoke
   * refused before it had an identity, on the same (bounded) path.
   */
  readonly refused: (kind: AuditEntry["kind"], reason: string, peer?: Peer) => Effect.Effect<void>
  /**
   * Section 9 after a restart: every pending call record is resolved to a final tally, every
   * reversal that began and never reported becomes unknown. Returns the number of records resolved.
   */
  readonly recover: Effect.Effect<number, StoreError>
  /**
   * Section 7 for a replay, as a plain function: the answer `call` would give `input` when it is
   * answered from the replay table with nothing to write (replays.ts `replayNow`), else undefined,
   * and `call` answers it. For transports' hot paths; `nowMillis` is the Clock's time.
   */
  readonly replayNow?: (input: ObjectInput, peer: Peer, nowMillis: number) => CallAnswer | undefined
}

export class Executor extends Context.Tag("mandate/writ/Executor")<Executor, ExecutorService>() {}

/** Section 7: a replay of bytes already verified from the lookup (replays.ts), else admission,
 * then the accepted operation on a fiber of its own. */
const call = (env: ExecutorEnv, input: ObjectInput, peer: Peer = Peer.none): Effect.Effect<CallAnswer> =>
  Effect.gen(function*() {
    const key = replayKeyOf(input)
    if (key !== null) {
      const replayed = yield* answerReplay(env, key, peer)
      if (Option.isSome(replayed)) return replayed.value
    }
    // Admission and handing the accepted work to its own fiber are one uninterruptible stretch: a
    // caller that goes away while its step waits for a batch's COMMIT (group commit) must not
    // leave a pending record and a running entry that no operation will ever settle.
    const started = yield* Effect.uninterruptible(Effect.gen(function*() {
      const admitted = yield* admit(env, input, peer, key)
      if (admitted._tag === "answered") return admitted
      const { accepted, checked } = admitted
      const { state } = env
      // Step 11: perform the operation; step 12: sign and persist the tally (with the call's
      // audit fields, admitted.base). Once accepted, the
      // work runs to its tally on a fiber the executor's scope owns: a caller that goes away (a
      // dropped connection) neither cancels it nor leaves its record pending.
      // Interruptible explicitly: a fork inherits its parent's interruption mask, and a transport
      // may run the call uninterruptibly (as @effect/platform runs HTTP handlers); an operation
      // that races its stop signal (section 9.1) must still be able to interrupt the loser.
      // Every log line of the accepted work names the call and its leaf writ.
      const work = yield* FiberSet.run(state.work, Effect.interruptible(perform(env, admitted)).pipe(
        Effect.annotateLogs({ call: accepted.call, leaf: accepted.leaf }),
        Effect.ensuring(Effect.sync(() => (state.running.delete(checked.id), state.delegating.delete(checked.id))))
      ))
      return { _tag: "started", admitted, work } as const
    }))
    if (started._tag === "answered") return started.answer
    const { admitted, work } = started
    const { answer, audited } = yield* Fiber.join(work)
    // Only a final tally that was persisted is remembered (a pending one is not an answer to keep).
    if (key !== null) rememberReplay(env, key, admitted.checked, admitted.chain, answer)
    // Written with the final tally unless that step failed (then the pending answer is audited).
    if (audited) return answer
    return yield* auditAnswer(env, admitted.base, answer)
  })

/** Runs `self` with what the executor owns and was configured with when it was built: its
 * verification cache and section 12's root lifetime, whoever calls it (one context change, made
 * once per executor, instead of one per service per call). */
const ownedBy = (env: StepEnv<"cache" | "rootLifetime">) => {
  const mine = Context.make(VerificationCache, env.cache).pipe(Context.add(RootLifetime, env.rootLifetime))
  return <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.mapInputContext(self, (context: Context.Context<never>) => Context.merge(context, mine))
}

// The entry points' spans, named so a trace shows where a call's time goes. Without a captured
// call-site stack (`Effect.fn` makes an Error per call for it): the hot path's spans cost no stack.
const callSpan = { captureStackTrace: false } as const

/**
 * Builds an executor over the stores and services in context, owning its accepted work in the
 * current scope: closing the scope awaits that work for `shutdownGrace`, then interrupts the rest.
 */
export const makeExecutorWith = (
  options: ExecutorOptions = {}
): Effect.Effect<ExecutorService, never, ExecutorRequirements | Scope.Scope> =>
  Effect.gen(function*() {
    const env = yield* makeEnv(options)
    // Revokes recorded by the other processes of a shared store stop this one's operations (9.1).
    if (env.gate.revokedElsewhere !== undefined) yield* env.gate.revokedElsewhere((keys) => stopUnder(env, keys))
    // Added after the FiberSet, so it runs first when the scope closes: await, then interrupt.
    yield* Effect.addFinalizer(() =>
      // Interruptible: finalizers run uninterruptibly, and the timeout must be able to end the wait.
      Effect.interruptible(FiberSet.awaitEmpty(env.state.work)).pipe(
        Effect.timeoutOption(options.shutdownGrace ?? "10 seconds"),
        Effect.zipRight(Effect.flatMap(unixSeconds, (now) => flushSuppressed(env, now)))
      )
    )
    const owned = ownedBy(env)
    return {
      did: env.did,
      call: (input: ObjectInput, peer?: Peer) =>
        Effect.withSpan(owned(call(env, input, peer)), "writ.executor.call", callSpan),
      revoke: (input: ObjectInput, peer?: Peer, intake?: RevokeIntake) =>
        Effect.withSpan(owned(revoke(env, input, peer, intake)), "writ.executor.revoke", callSpan),
      refused: (kind, reason, peer = Peer.none) =>
        Effect.flatMap(unixSeconds, (now) => auditUnidentified(env, now, kind, peerNameOf(peer), reason)),
      recover: owned(recover(env)).pipe(Effect.withSpan("writ.executor.recover")),
      replayNow: (input, peer, nowMillis) => {
        const key = replayKeyOf(input)
        return key === null ? undefined : replayNow(env, key, peer, nowMillis)
      }
    }
  })

/** An executor with the default options. */
export const makeExecutor: Effect.Effect<ExecutorService, never, ExecutorRequirements | Scope.Scope> = makeExecutorWith()

/** The executor as a scoped Layer over the stores and services it needs. */
export const layerWith = (options: ExecutorOptions): Layer.Layer<Executor, never, ExecutorRequirements> =>
  Layer.scoped(Executor, makeExecutorWith(options))

export const layer: Layer.Layer<Executor, never, ExecutorRequirements> = layerWith({})

/**
 * The executor after a restart: its pending records are resolved (section 9) before it takes its
 * first call. A store that cannot be read or written fails the Layer.
 */
export const layerRecovered: Layer.Layer<Executor, StoreError, ExecutorRequirements> = Layer.scoped(
  Executor,
  Effect.tap(makeExecutor, (executor) => executor.recover)
)
