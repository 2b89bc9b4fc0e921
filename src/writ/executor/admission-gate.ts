// The admission gate: what makes section 7 steps 7 to 10 (and step 11's pending record) atomic with
// every other admission and with recording a revoke (section 7: "steps 7 to 10 MUST be atomic with
// respect to other calls and to recording a revoke"; section 9.1).
//
// The executor only says which writs and issuers a step touches and runs the step through the
// gate; the gate decides how the step is isolated and when its writes are durable:
//   - `serialGate` (the default, every store): one step at a time in this process;
//   - a store may provide its own, e.g. one that commits several steps in one transaction (group
//     commit) or one that takes database locks so several processes can share one executor key.
// Whatever the gate, a step's effect succeeds only once its writes are durable, so a call is
// answered only after the step that admitted it committed.
import { Context, Effect, Layer, Option, type Scope } from "effect"
import type { ReserveStep } from "../../accounting/backend.js"
import type { Reservation } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import type { AcceptedCall, CallEntry } from "./stores.js"

/** What a gated step touches. */
export interface GateKeys {
  /**
   * Writ identities: for an admission, every writ of the call's chain (the leaf last); for a revoke,
   * the revoked writ, or none for a key-wide revoke.
   */
  readonly writs: ReadonlyArray<string>
  /** Issuer keys: for an admission, `iss` of every writ of the chain; for a key-wide revoke, `iss`. */
  readonly issuers: ReadonlyArray<string>
}

/**
 * The store work of steps 7 to 10 for one call, as one step of the store's own (`admitInOne`):
 * the executor has made every check that reads no store, and the store makes, in section 7's
 * order, the ones that do, and the writes.
 */
export interface StoredAdmission {
  readonly keys: GateKeys
  /** Step 7 applies: a forward call is refused when a writ of its chain is revoked. */
  readonly revocable: boolean
  /**
   * Where the executor already knows a refusal comes, so the store stops there (answering
   * `Stopped`) unless an earlier step refuses first: after step 7 (a step 8 check failed), or
   * after step 9 (step 10's request is one no store accepts).
   */
  readonly stopAfter: "revocation" | "replay" | null
  /** The pending entry recorded when the call is accepted (step 9's key: its `leaf` and `id`). */
  readonly accepted: AcceptedCall
  /** Step 10's held reservation of the chain's count and total limits, when it has any. */
  readonly reservation: Reservation | null
}

/** What the store's step found; only `Recorded` and a `Drawn` reserve wrote anything. */
export type StoredAdmissionStep =
  | { readonly _tag: "Revoked" }
  | { readonly _tag: "Stopped" }
  /** Step 9: the call is already recorded (pending or final). */
  | { readonly _tag: "Found"; readonly entry: CallEntry }
  /** No reservation: the pending entry was recorded. */
  | { readonly _tag: "Recorded" }
  /**
   * Step 10's reserve (accounting's ReserveStep): `Drawn` recorded the pending entry with it;
   * `Short` and `Existing` wrote nothing.
   */
  | { readonly _tag: "Reserved"; readonly step: ReserveStep }

export interface AdmissionGateService {
  /** Steps 7 to 10 of one call (and step 11's pending record), atomically. */
  readonly admit: <A, E, R>(keys: GateKeys, step: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /** Recording one revoke and computing its ack's body (section 9.1, 9.4), atomically. */
  readonly revoke: <A, E, R>(keys: GateKeys, step: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /**
   * A gate whose store does steps 7 to 10's store work as one step of its own (PostgreSQL: one
   * statement, so one round trip, src/store/postgres/writ-admit.ts), isolated as `admit` would
   * isolate it and durable when it succeeds. Absent: the executor composes the step from the
   * stores inside `admit`.
   */
  readonly admitInOne?: (admission: StoredAdmission) => Effect.Effect<StoredAdmissionStep, StoreError>
  /**
   * A gate shared by several processes: runs `onRevoke` with the keys of every revoke another
   * process records, for as long as the scope lives, so this process tells its running operations
   * under it to stop (section 9.1). Absent: no other process records revokes.
   */
  readonly revokedElsewhere?: (onRevoke: (keys: GateKeys) => Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
  /**
   * A store several processes share, read synchronously and cheaply: a number that moves whenever
   * any process records a revoke (undefined when it cannot be read now). The plain replay path
   * answers from its table only while it is the number seen before the store last said "not
   * revoked" (section 7: step 7 before step 9). Absent: no other process records revokes, or the
   * gate reports them by `revokedElsewhere`.
   */
  readonly revocationMark?: () => number | undefined
  /**
   * The same number read from a store that has no synchronous read (PostgreSQL), by a read that
   * began after this request was made (so after any ack its caller has seen); undefined when it
   * cannot be read now. A replay answered by the Effect path skips the revoke store's lookup of
   * step 7 while the number is the one read just before that lookup last said "not revoked"
   * (replays.ts). Absent: every replay looks the chain up.
   */
  readonly revocationSeq?: Effect.Effect<number | undefined>
}

export class AdmissionGate extends Context.Tag("mandate/writ/AdmissionGate")<AdmissionGate, AdmissionGateService>() {}

/** One step at a time in this process: the gate of a single executor process on any store. */
export const serialGate: Effect.Effect<AdmissionGateService> = Effect.map(Effect.makeSemaphore(1), (lock) => ({
  admit: (_keys, step) => lock.withPermits(1)(step),
  revoke: (_keys, step) => lock.withPermits(1)(step)
}))

export const serialLayer: Layer.Layer<AdmissionGate> = Layer.effect(AdmissionGate, serialGate)

/** The gate in context, or a fresh serial one (the executor's default). */
export const gateFromContext: Effect.Effect<AdmissionGateService> = Effect.flatMap(
  Effect.serviceOption(AdmissionGate),
  Option.match({ onNone: () => serialGate, onSome: Effect.succeed })
)
