// The durable state of a Writ executor (spec section 9), one service per store. The executor
// declares the tags; src/store/memory/writ-*.ts and src/store/sqlite/writ-*.ts implement them.
// Count and total stores are not here: they are limit keys of the accounting core's
// `Reservations` service (src/accounting/reservations.ts), `writ/count/<writ id>` and
// `writ/total/<writ id>/<bound name>`, consumed in the same `Atomic` step as the call store's
// pending entry (section 7 steps 9 and 10).
//
// Every store method fails only with the shared `StoreError`; the executor applies section 9's
// write-failure rules in one place. Every write made inside `Atomic.transaction` commits or rolls
// back together with the others (same SQL connection, or the same memory journal).
import { Context, Effect, Option } from "effect"
import type { StoreError } from "../../accounting/store-error.js"
import type { Json, JsonObject } from "../../kernel/json.js"

export { StoreError } from "../../accounting/store-error.js"

// ---------------------------------------------------------------------------------------------
// Call store: (leaf writ identity, `id`) -> pending or final (section 9, section 7 step 9).
// Lifetime: a forward call until the leaf's `exp`; a standing call as long as the tally store keeps
// a record under that leaf. Nothing is pruned yet: entries are kept, which only over-retains.

/** What the executor knows about an accepted call, from the moment it records it pending. */
export interface AcceptedCall {
  /** Identity of the leaf writ of the call's chain (the first half of the call-store key). */
  readonly leaf: string
  /** The call's `id` member (the second half of the key). */
  readonly id: string
  /** Identity of the call object (section 1.5). */
  readonly call: string
  readonly op: string
  /** Section 7 step 11: the time the call was accepted. */
  readonly acc: number
  /** A standing (`sys/`) call. */
  readonly standing: boolean
  /** Writ identities of the chain, root first: the tally store indexes the tally under each. */
  readonly chain: ReadonlyArray<string>
  /** `iss` of each writ of the chain, root first: what a key-wide revoke covers (section 9.1). */
  readonly issuers: ReadonlyArray<string>
  /** The leaf's `exp`: the call store's lifetime for a forward call (section 9). */
  readonly exp: number
  /** The accounting reservation holding this call's count and total consumption, if any. */
  readonly reservation: string | null
}

export type CallEntry =
  | { readonly state: "pending"; readonly accepted: AcceptedCall }
  | {
    readonly state: "final"
    readonly accepted: AcceptedCall
    /** The final tally, answered byte for byte to every retry (section 7 step 9). */
    readonly tally: JsonObject
    /** The result body stored with it. */
    readonly res: Option.Option<Json>
  }

export interface CallStoreService {
  readonly get: (leaf: string, id: string) => Effect.Effect<Option.Option<CallEntry>, StoreError>
  /** Records the pending entry of section 7 step 9. The key must be new. */
  readonly insertPending: (accepted: AcceptedCall) => Effect.Effect<void, StoreError>
  /**
   * Replaces a pending entry by its final tally (section 7 step 12, or a resolution after restart)
   * and answers true. False, writing nothing: the entry is no longer this process's pending one,
   * because another process sharing the store took it over after this one's lease lapsed and
   * resolved it (section 9); the caller answers with that resolution, never a second tally.
   */
  readonly finalize: (
    leaf: string,
    id: string,
    tally: JsonObject,
    res: Option.Option<Json>
  ) => Effect.Effect<boolean, StoreError>
  /** Every entry still pending, in acceptance order (recovery after restart, a revoke's answer). */
  readonly pending: Effect.Effect<ReadonlyArray<AcceptedCall>, StoreError>
  /**
   * A store shared by several executor processes: the pending entries whose process is gone, now
   * held by this one for recovery to resolve (section 9), in acceptance order. A live process's
   * pending entries are its running operations and are not returned. Absent: one process owns the
   * store, and recovery resolves every pending entry.
   */
  readonly claimOrphans?: Effect.Effect<ReadonlyArray<AcceptedCall>, StoreError>
}

export class CallStore extends Context.Tag("mandate/writ/CallStore")<CallStore, CallStoreService>() {}

// ---------------------------------------------------------------------------------------------
// Tally store: tally identity, indexed by every writ identity in its chain (section 9).
// Lifetime: at least until the later of the leaf's `exp` and `rev.until`; kept (not pruned).

export interface HeldTally {
  /** Identity of the tally (section 1.5). */
  readonly tally: string
  /** Identity of the call it answers. */
  readonly call: string
  readonly acc: number
  /** The answered call was a forward call (an ack's `held` covers every tally; section 9.4). */
  readonly forward: boolean
  readonly chain: ReadonlyArray<string>
  readonly issuers: ReadonlyArray<string>
  readonly object: JsonObject
  readonly res: Option.Option<Json>
}

export interface TallyStoreService {
  readonly put: (held: HeldTally) => Effect.Effect<void, StoreError>
  readonly get: (tally: string) => Effect.Effect<Option.Option<HeldTally>, StoreError>
  /**
   * Every tally whose chain includes `writ`, in ascending `acc`, ties in ascending tally identity
   * compared as ASCII bytes (section 8.2).
   */
  readonly underWrit: (writ: string) => Effect.Effect<ReadonlyArray<HeldTally>, StoreError>
  /** Every tally whose chain includes a writ issued by `key` (a key-wide revoke, section 9.4). */
  readonly underIssuer: (key: string) => Effect.Effect<ReadonlyArray<HeldTally>, StoreError>
}

export class TallyStore extends Context.Tag("mandate/writ/TallyStore")<TallyStore, TallyStoreService>() {}

// ---------------------------------------------------------------------------------------------
// Revoke store: writ identity, or for a key-wide revoke the revoking key (section 9).
// Lifetime: a writ's revoke until that writ's `exp` (recorded in `exp`); a key-wide revoke forever.

export interface RecordedRevoke {
  /** Identity of the revoke object. */
  readonly revoke: string
  /** The revoked writ's identity, or `"*"`. */
  readonly writ: string
  /** The revoker; for `"*"` the key every one of whose writs is revoked. */
  readonly iss: string
  /** `exp` of the revoked writ (its lifetime), null for a key-wide revoke (kept indefinitely). */
  readonly exp: number | null
  /** When it was recorded, by the executor's clock. */
  readonly rcv: number
}

export interface RevokeStoreService {
  /** Appends one record; recording a revoke never rewrites the others (section 12). */
  readonly record: (revoke: RecordedRevoke) => Effect.Effect<void, StoreError>
  /** Whether any of `writs` is revoked by identity, or any of `issuers` by a key-wide revoke. */
  readonly covers: (
    writs: ReadonlyArray<string>,
    issuers: ReadonlyArray<string>
  ) => Effect.Effect<boolean, StoreError>
}

export class RevokeStore extends Context.Tag("mandate/writ/RevokeStore")<RevokeStore, RevokeStoreService>() {}

// ---------------------------------------------------------------------------------------------
// Reversal store: target tally identity -> a reversal began under a call, or one succeeded (8.1).
// Lifetime: as long as the tally store holds the target.

export type Reversal =
  | { readonly state: "begun"; readonly call: string }
  | { readonly state: "succeeded"; readonly call: string; readonly res: Option.Option<Json> }
  /** A reversal that began and never reported, found after a restart (section 8.1). */
  | { readonly state: "unknown"; readonly call: string }

export interface ReversalStoreService {
  readonly get: (target: string) => Effect.Effect<Option.Option<Reversal>, StoreError>
  /** Durably records that a reversal of `target` has begun under `call` (before it runs). */
  readonly begin: (target: string, call: string) => Effect.Effect<void, StoreError>
  readonly succeed: (target: string, call: string, res: Option.Option<Json>) => Effect.Effect<void, StoreError>
  /** A reversal that failed consumes nothing: the record is removed and a later undo may retry. */
  readonly clear: (target: string) => Effect.Effect<void, StoreError>
  /** After a restart: every `begun` record becomes `unknown`. Returns how many changed. */
  readonly markBegunUnknown: Effect.Effect<number, StoreError>
}

export class ReversalStore extends Context.Tag("mandate/writ/ReversalStore")<ReversalStore, ReversalStoreService>() {}

// ---------------------------------------------------------------------------------------------
// Delegation store: writs this executor issued and sub-tallies it received, per call (7.5, 9).
// Lifetime: as long as the call's record; an issued writ's holder is where revokes are forwarded.

export interface IssuedWrit {
  /** The call (leaf, id) during which the writ was issued. */
  readonly leaf: string
  readonly id: string
  /** Identity of the issued writ. */
  readonly writ: string
  /** Its holder, to whom a revoke is forwarded (section 9.1). */
  readonly hld: string
  /** Writ identities of the chain above it, root first, ending with the parent. */
  readonly above: ReadonlyArray<string>
  /** `iss` of each writ above it, root first. */
  readonly aboveIssuers: ReadonlyArray<string>
  readonly object: JsonObject
}

export interface ReceivedSub {
  readonly leaf: string
  readonly id: string
  /** The `call` member of the sub-tally: a final tally replaces a pending one (section 7.5). */
  readonly subCall: string
  /** The sub-tally's signer (the child writ's holder). */
  readonly signer: string
  readonly object: JsonObject
}

export interface DelegationStoreService {
  /** Persisted before the writ is sent to anyone (section 7.5). */
  readonly recordIssued: (issued: IssuedWrit) => Effect.Effect<void, StoreError>
  /** Persisted before the executor acts on its contents; replaces the entry for the same sub-call. */
  readonly recordSub: (sub: ReceivedSub) => Effect.Effect<void, StoreError>
  /** What goes into the call's `wrt` and `sub`, in the order first recorded. */
  readonly forCall: (
    leaf: string,
    id: string
  ) => Effect.Effect<{ readonly wrt: ReadonlyArray<JsonObject>; readonly sub: ReadonlyArray<JsonObject> }, StoreError>
  /**
   * Every writ issued under `writ` (its chain includes it), or for `"*"` under any writ issued by
   * `iss`: the holders a revoke is forwarded to.
   */
  readonly issuedUnder: (writ: string, iss: string) => Effect.Effect<ReadonlyArray<IssuedWrit>, StoreError>
}

export class DelegationStore extends Context.Tag("mandate/writ/DelegationStore")<
  DelegationStore,
  DelegationStoreService
>() {}

// ---------------------------------------------------------------------------------------------
// Relayed acks: acks received while forwarding a revoke, returned in `fwd` (section 9.4).
// Lifetime: as long as the revoke they answer is kept.

export interface KeptAck {
  readonly revoke: string
  /** Identity of the ack. */
  readonly ack: string
  readonly object: JsonObject
  readonly res: Json
}

export interface AckStoreService {
  /** Keeps an ack once (same identity again is a no-op). */
  readonly keep: (kept: KeptAck) => Effect.Effect<void, StoreError>
  /** Every ack kept for `revoke`, in ascending ack identity compared as ASCII bytes (section 10). */
  readonly forRevoke: (revoke: string) => Effect.Effect<ReadonlyArray<KeptAck>, StoreError>
}

export class AckStore extends Context.Tag("mandate/writ/AckStore")<AckStore, AckStoreService>() {}

// ---------------------------------------------------------------------------------------------
// Audit record (section 9.3): append-only, one entry per call or revoke received.
// Lifetime: deployment policy; never consulted by a check.

export interface AuditEntry {
  /** Time by the executor's clock (integer Unix seconds). */
  readonly time: number
  readonly kind: "call" | "revoke"
  /** Identity of the call or revoke, or null when it could not be parsed. */
  readonly identity: string | null
  /** The reason it could not be parsed or verified far enough to have an identity. */
  readonly unparsed: string | null
  /** `from` of a call, `iss` of a revoke, when known. */
  readonly principal: string | null
  /** The transport-authenticated peer, or null when the transport authenticated none. */
  readonly peer: string | null
  readonly root: string | null
  readonly leaf: string | null
  readonly op: string | null
  /** `error`, `ok`, `failed`, `canceled`, `pending`, `inflight`, `recorded`, `unsaved`. */
  readonly outcome: string
  /** The reason code of a refusal or of the outcome, when there is one. */
  readonly reason: string | null
  /** Identity of the tally or ack signed, when one was. */
  readonly signed: string | null
}

export interface AuditLogService {
  readonly append: (entry: AuditEntry) => Effect.Effect<void, StoreError>
  readonly read: Effect.Effect<ReadonlyArray<AuditEntry>, StoreError>
}

export class AuditLog extends Context.Tag("mandate/writ/AuditLog")<AuditLog, AuditLogService>() {}

/** Every store tag the executor needs, for Layer signatures. */
export type WritStores = CallStore | TallyStore | RevokeStore | ReversalStore | DelegationStore | AckStore | AuditLog

/** One implementation of every store the executor needs, as a store module builds them. */
export interface WritStoreServices {
  readonly calls: CallStoreService
  readonly tallies: TallyStoreService
  readonly revokes: RevokeStoreService
  readonly reversals: ReversalStoreService
  readonly delegations: DelegationStoreService
  readonly acks: AckStoreService
  readonly audit: AuditLogService
}

/** The Context holding each store of `stores` under its tag (what every store module's Layer provides). */
export const writStoresContext = (stores: WritStoreServices): Context.Context<WritStores> =>
  Context.make(CallStore, stores.calls).pipe(
    Context.add(TallyStore, stores.tallies),
    Context.add(RevokeStore, stores.revokes),
    Context.add(ReversalStore, stores.reversals),
    Context.add(DelegationStore, stores.delegations),
    Context.add(AckStore, stores.acks),
    Context.add(AuditLog, stores.audit)
  )
