// The executor's state and the services it runs over. The durable state is in the stores (section
// 9); what is here lives only as long as the process, and a restart loses exactly this, as section
// 14.1 says: the stop signals of running operations, the reversals running
// now, revokes that could not be persisted (still honored while the process runs, section 9), the
// calls that delegated. (The audit fields of an accepted call travel with it as a value, from
// admission to its final tally: see perform.ts.)
import { Context, Deferred, type Duration, Effect, FiberSet, type Scope } from "effect"
import { DecisionEvents, type DecisionEventsService } from "../../accounting/decision-events.js"
import { Atomic, Reservations } from "../../accounting/reservations.js"
import { didKeyFromPublicKey } from "../../kernel/didkey.js"
import { Signer } from "../../kernel/services.js"
import { VerificationCache } from "../../kernel/verification-cache.js"
import { RootLifetime } from "../chain.js"
import { type AdmissionGateService, gateFromContext } from "./admission-gate.js"
import type { CallAnswer } from "./answers.js"
import { type BucketOptions, type Buckets, tokenBuckets } from "./intake.js"
import { DEFAULT_REPLAY_TABLE_BYTES, replayTable, type ReplayTable } from "./replay-table.js"
import { Application, Forwarder, PeerBindings, RootPolicy } from "./services.js"
import {
  AckStore,
  AuditLog,
  type AuditEntry,
  CallStore,
  DelegationStore,
  ReversalStore,
  RevokeStore,
  TallyStore
} from "./stores.js"

export type ExecutorRequirements =
  | Signer
  | Application
  | RootPolicy
  | PeerBindings
  | Forwarder
  | Reservations
  | Atomic
  | CallStore
  | TallyStore
  | RevokeStore
  | ReversalStore
  | DelegationStore
  | AckStore
  | AuditLog
  | VerificationCache

/** An accepted forward or standing operation, running now (section 7 step 11). */
export interface Running {
  readonly forward: boolean
  readonly chain: ReadonlyArray<string>
  readonly issuers: ReadonlyArray<string>
  /** Raised by a revoke that covers the operation's chain (section 9.1). */
  readonly stop: Deferred.Deferred<void>
}

/** The audit fields of an accepted call, written with its final tally (section 9.3). */
export type AuditBase = Omit<AuditEntry, "outcome" | "reason" | "signed">

export interface ExecutorOptions {
  /**
   * How long closing the executor waits for accepted work to reach its tally before interrupting
   * it. Interrupted work leaves its pending record, which recovery resolves (section 9). Default
   * 10 seconds.
   */
  readonly shutdownGrace?: Duration.DurationInput
  /**
   * The audit rows a peer's unauthenticated refusals may add (section 9.3: bounded the way revoke
   * intake is). Past it, refusals are counted and one `suppressed` row stands for them. Default
   * 100 at once, 10 per second; peers without transport authentication share one allowance.
   */
  readonly refusalAudit?: BucketOptions
  /**
   * The audit rows replays answered from the call store may add, per peer (section 9.3; replays.ts).
   * Default 100 at once, 10 per second.
   */
  readonly replayAudit?: BucketOptions
  /** Bytes the table of verified calls' final answers may hold (replays.ts). Default 16 MiB. */
  readonly replayTableBytes?: number
}

/** Issuers of accepted chains remembered as known principals (section 12), most recent kept. */
export const KNOWN_ISSUERS_MAX = 10_000

export interface ExecutorState {
  /**
   * Accepted work (section 7 steps 11 and 12), owned by the executor's scope rather than by the
   * request that brought it: a dropped connection does not end it, closing the executor does.
   */
  readonly work: FiberSet.FiberSet<Performed>
  /** Running operations by call identity. */
  readonly running: Map<string, Running>
  /** Reversals running in this process, by target tally: one at a time per tally (section 8.1). */
  readonly reversing: Map<string, Deferred.Deferred<boolean>>
  /** Revokes that could not be persisted, honored for as long as the process runs (section 9). */
  readonly unsaved: Array<{ readonly writ: string; readonly iss: string }>
  /** Calls whose operation recorded an issued writ or a sub-tally in this process. */
  readonly delegating: Set<string>
  /** Set while recovery after restart runs: every finished call reads its delegations back. */
  recovering: boolean
  /** Issuers of chains accepted in this process: known principals for revoke intake (12). */
  readonly knownIssuers: Set<string>
  /** The allowance of audit rows for unauthenticated refusals, by peer (section 9.3). */
  readonly refusalAudit: Buckets
  /** Refusals not audited one by one, by peer, until their summary row is written. */
  readonly suppressed: Map<string | null, number>
  /** The allowance of audit rows for replays, by peer (section 9.3). */
  readonly replayAudit: Buckets
  /** Replays not audited one by one, by peer, until their summary row is written. */
  readonly suppressedReplays: Map<string | null, number>
  /** Final answers of verified calls by received bytes (replays.ts). */
  readonly replays: ReplayTable
  /**
   * Counts revokes as this process records them (once when the record is written, once when its
   * step is over, durable or not) and revokes recorded elsewhere (section 9.1): a replay answered
   * by plain code (replays.ts) needs the store's answer to step 7 only when this moved since.
   */
  revocations: number
}

/**
 * An accepted call's answer once performed, and whether its audit entry was written with the
 * final tally (section 9.3; when that step failed, the answer is audited on its own).
 */
export interface Performed {
  readonly answer: CallAnswer
  readonly audited: boolean
}

/** The executor's own key and the services its steps read. */
export interface ExecutorServices {
  /** The executor's own key (the leaf `hld` it acts as, section 7 step 6). */
  readonly did: string
  readonly signer: Context.Tag.Service<Signer>
  readonly app: Context.Tag.Service<Application>
  readonly roots: Context.Tag.Service<RootPolicy>
  readonly peers: Context.Tag.Service<PeerBindings>
  readonly forwarder: Context.Tag.Service<Forwarder>
  readonly reservations: Context.Tag.Service<Reservations>
  readonly atomic: Context.Tag.Service<Atomic>
  readonly calls: Context.Tag.Service<CallStore>
  readonly tallies: Context.Tag.Service<TallyStore>
  readonly revokes: Context.Tag.Service<RevokeStore>
  readonly reversals: Context.Tag.Service<ReversalStore>
  readonly delegations: Context.Tag.Service<DelegationStore>
  readonly acks: Context.Tag.Service<AckStore>
  readonly auditLog: Context.Tag.Service<AuditLog>
  /** Decoded keys and passed signature checks, owned by this executor. */
  readonly cache: Context.Tag.Service<VerificationCache>
  /** Section 12's limit on a root's remaining lifetime, as configured when the executor was built. */
  readonly rootLifetime: Context.Tag.Service<RootLifetime>
  /**
   * Where section 7's decisions are published: the DecisionEvents in context when
   * the executor was built, optional (none: dropped), so a ledger is chosen by the composition root.
   */
  readonly decisions: DecisionEventsService
  /**
   * What makes steps 7 to 10 atomic with other calls and with recording a revoke: the
   * AdmissionGate in context when the executor was built, or one step at a time in this process.
   */
  readonly gate: AdmissionGateService
}

/** Everything the executor owns: its services, its own key and its state. */
export interface ExecutorEnv extends ExecutorServices {
  readonly state: ExecutorState
}

/**
 * What one step is handed: the services `K` it uses and the parts `S` of the state it reads or
 * changes (the whole ExecutorEnv satisfies every step; a step cannot reach what it does not name).
 */
export type StepEnv<K extends keyof ExecutorServices, S extends keyof ExecutorState = never> = [S] extends [never]
  ? Pick<ExecutorServices, K>
  : Pick<ExecutorServices, K> & { readonly state: Pick<ExecutorState, S> }

/** The services in context and a fresh state, whose accepted work lives in the current scope. */
export const makeEnv = (
  options: ExecutorOptions
): Effect.Effect<ExecutorEnv, never, ExecutorRequirements | Scope.Scope> => Effect.gen(function*() {
  const context = yield* Effect.context<ExecutorRequirements>()
  const signer = Context.get(context, Signer)
  return {
    did: didKeyFromPublicKey(signer.publicKey),
    signer,
    app: Context.get(context, Application),
    roots: Context.get(context, RootPolicy),
    peers: Context.get(context, PeerBindings),
    forwarder: Context.get(context, Forwarder),
    reservations: Context.get(context, Reservations),
    atomic: Context.get(context, Atomic),
    calls: Context.get(context, CallStore),
    tallies: Context.get(context, TallyStore),
    revokes: Context.get(context, RevokeStore),
    reversals: Context.get(context, ReversalStore),
    delegations: Context.get(context, DelegationStore),
    acks: Context.get(context, AckStore),
    auditLog: Context.get(context, AuditLog),
    cache: Context.get(context, VerificationCache),
    rootLifetime: yield* RootLifetime,
    decisions: yield* DecisionEvents,
    gate: yield* gateFromContext,
    state: {
      work: yield* FiberSet.make<Performed>(),
      running: new Map(),
      reversing: new Map(),
      unsaved: [],
      delegating: new Set(),
      recovering: false,
      knownIssuers: new Set(),
      refusalAudit: tokenBuckets(options.refusalAudit ?? { burst: 100, perSecond: 10 }, yield* Effect.clock),
      suppressed: new Map(),
      replayAudit: tokenBuckets(options.replayAudit ?? { burst: 100, perSecond: 10 }, yield* Effect.clock),
      suppressedReplays: new Map(),
      replays: replayTable(options.replayTableBytes ?? DEFAULT_REPLAY_TABLE_BYTES),
      revocations: 0
    }
  }
})

/** Signs with the executor's own key. */
export const signWith = (env: StepEnv<"signer">) => <A>(self: Effect.Effect<A, never, Signer>): Effect.Effect<A> =>
  Effect.provideService(self, Signer, env.signer)

/** Section 9: a revoke that could not be persisted is still honored while the process runs. */
export const unsavedCovers = (env: StepEnv<never, "unsaved">, chain: ReadonlyArray<string>, issuers: ReadonlyArray<string>) =>
  env.state.unsaved.some((r) => (r.writ === "*" ? issuers.includes(r.iss) : chain.includes(r.writ)))

/** Remembers the issuers of an accepted chain as known principals, keeping the most recent. */
export const rememberIssuers = (env: StepEnv<never, "knownIssuers">, issuers: ReadonlyArray<string>) => {
  const known = env.state.knownIssuers
  for (const iss of issuers) {
    known.delete(iss)
    known.add(iss)
  }
  for (const oldest of known) {
    if (known.size <= KNOWN_ISSUERS_MAX) break
    known.delete(oldest)
  }
}
