// What the executor needs from outside the protocol, as services: the application that performs
// operations (section 7 step 11), the root-acceptance decision (7.1), the peer bindings (7.6), and
// the transport that forwards a revoke to executors below (9.1). Transports stay out of the
// protocol: the HTTP binding provides a Forwarder, tests provide their own.
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import { WritReason } from "../reason.js"
import type { AcceptedCall, HeldTally, StoreError } from "./stores.js"

// ---------------------------------------------------------------------------------------------
// The application (section 7 step 11)

/** The outcome an operation returns: the members of its tally that the executor does not fix. */
export interface Outcome {
  readonly st: "ok" | "failed" | "canceled"
  /** `err.code` when `st` is not `ok`: an application code (section 11, last paragraph) or `revoked`. */
  readonly code?: string
  /** The result body; `out` commits to it. */
  readonly res?: Json
  /** `used`: for each `max` or `total` bound consumed, the integer consumed (section 6). */
  readonly used?: Readonly<Record<string, number>>
  /** `rev.until`: the effect can be reversed by `sys/undo` until then (forward operations only). */
  readonly rev?: number
}

export interface Operation {
  /** A forward operation, or the reversal of a `sys/undo` (section 8.1). */
  readonly kind: "forward" | "undo"
  readonly call: JsonObject
  /** Identity of the call. */
  readonly callId: string
  readonly op: string
  readonly args: JsonObject
  /** The time the call was accepted (section 7 step 11). */
  readonly acc: number
  readonly chain: ReadonlyArray<JsonObject>
  /** For an undo: the tally whose effect is reversed. */
  readonly target: Option.Option<HeldTally>
  /**
   * Completes when the executor tells the operation to stop (a revoke of a writ in its chain,
   * section 9.1). An operation that stops returns `canceled`; one that cannot stop returns what it
   * did: the executor never reports `canceled` for work it did not stop.
   */
  readonly stopSignal: Effect.Effect<void>
  /** Whether the executor has told the operation to stop. */
  readonly stopRequested: Effect.Effect<boolean>
  /**
   * Section 7.5: records a writ this executor issued under the leaf, before it is sent to anyone;
   * it goes into the tally's `wrt` and a revoke of a writ above it is forwarded to its holder.
   */
  readonly recordIssued: (writ: JsonObject) => Effect.Effect<void, StoreError>
  /**
   * Section 7.5: records a sub-tally received, before acting on its contents. It is kept only when
   * it passes section 6.1 under the holder of a writ recorded with `recordIssued` (returns false
   * otherwise); a final sub-tally replaces a pending one for the same sub-call.
   */
  readonly recordSub: (tally: JsonObject) => Effect.Effect<boolean, StoreError>
}

export interface ApplicationService {
  readonly perform: (operation: Operation) => Effect.Effect<Outcome>
  /**
   * After a restart: the outcome of a call whose pending record was found, when the application can
   * determine it (section 9). None resolves the record to `failed` with `unknown_outcome`.
   */
  readonly recover?: (accepted: AcceptedCall) => Effect.Effect<Option.Option<Outcome>>
}

export class Application extends Context.Tag("mandate/writ/Application")<Application, ApplicationService>() {}

// ---------------------------------------------------------------------------------------------
// Root acceptance (section 7.1) and peer bindings (section 7.6)

export interface RootPolicyService {
  /** Whether the executor acts under writs rooted at `key` (a decision held outside the chain). */
  readonly accepts: (key: string) => Effect.Effect<boolean>
  /** The same decision as a plain function, when the policy can answer without effects. */
  readonly acceptsNow?: (key: string) => boolean
}

export class RootPolicy extends Context.Tag("mandate/writ/RootPolicy")<RootPolicy, RootPolicyService>() {
  /** A configured list of root keys. */
  static list(keys: ReadonlyArray<string>): Layer.Layer<RootPolicy> {
    const set = new Set(keys)
    return Layer.succeed(RootPolicy, { accepts: (key) => Effect.succeed(set.has(key)), acceptsNow: (key) => set.has(key) })
  }
}

export interface PeerBindingsService {
  /** Whether the transport identity `peer` speaks for `key`. A peer with no binding speaks for none. */
  readonly speaksFor: (peer: string, key: string) => Effect.Effect<boolean>
}

export class PeerBindings extends Context.Tag("mandate/writ/PeerBindings")<PeerBindings, PeerBindingsService>() {
  /** A configured map from transport identities to the keys each speaks for. */
  static map(bindings: Readonly<Record<string, ReadonlyArray<string>>>): Layer.Layer<PeerBindings> {
    const m = new Map(Object.entries(bindings).map(([p, keys]) => [p, new Set(keys)] as const))
    return Layer.succeed(PeerBindings, { speaksFor: (peer, key) => Effect.succeed(m.get(peer)?.has(key) ?? false) })
  }
  static readonly none: Layer.Layer<PeerBindings> = PeerBindings.map({})
}

/**
 * Who delivered a request (section 10): a transport that authenticated no peer; a peer it
 * authenticated and named; or one it authenticated but cannot name, which section 7.6 treats as a
 * peer with no binding (never as "no peer").
 */
export type Peer =
  | { readonly _tag: "none" }
  | { readonly _tag: "named"; readonly id: string }
  | { readonly _tag: "unnamed" }

export const Peer = {
  none: { _tag: "none" } as Peer,
  named: (id: string): Peer => ({ _tag: "named", id }),
  unnamed: { _tag: "unnamed" } as Peer
}

// ---------------------------------------------------------------------------------------------
// Forwarding revokes (section 9.1)

/** One ack and its body, as a revoke's answer carries them (section 10). */
export interface AckWithBody {
  readonly ack: JsonObject
  readonly res: Json
}

/** What an executor below answered to a forwarded revoke. */
export interface ForwardedAnswer {
  readonly ack: JsonObject
  readonly res: Json
  readonly fwd: ReadonlyArray<AckWithBody>
}

export interface ForwarderService {
  /**
   * Sends `revoke` to the executor `holder` (the `hld` of a writ this executor issued). None when
   * it could not be delivered or answered with no ack; the executor relays only acks that verify.
   */
  readonly forward: (revoke: JsonObject, holder: string) => Effect.Effect<Option.Option<ForwardedAnswer>>
}

export class Forwarder extends Context.Tag("mandate/writ/Forwarder")<Forwarder, ForwarderService>() {
  /** No transport: nothing is forwarded (a single executor, as in the scenarios of section 14.1). */
  static readonly none: Layer.Layer<Forwarder> = Layer.succeed(Forwarder, { forward: () => Effect.succeed(Option.none()) })
}

// ---------------------------------------------------------------------------------------------
// Implementation codes (section 11: outside the table, namespaced)

/** A store write at section 7 steps 9 and 10, or of a revoke, failed (section 9). */
export const STORE_UNAVAILABLE = "mandate/store_unavailable" as const
/** The application failed or died instead of returning an outcome. */
export const APPLICATION_ERROR = "mandate/application_error" as const
/** A verified revoke over its sender's allowance (section 12); the sender retries later. */
export const RATE_LIMITED = "mandate/rate_limited" as const
/** An audit row standing for refusals not recorded one by one (section 9.3, bounded by rate). */
export const AUDIT_SUPPRESSED = "mandate/audit_suppressed" as const

/** Every code the executor itself puts in `err.code` or an unsigned error: section 11's, or its own. */
export const ExecutorCode = Schema.Union(WritReason, Schema.Literal(STORE_UNAVAILABLE, APPLICATION_ERROR))
export type ExecutorCode = typeof ExecutorCode.Type

/**
 * Runs `work` as an operation that stops when told to (section 9.1): on the executor's stop signal
 * the work is interrupted, and only then is the outcome `canceled` with code `revoked`. Work that
 * finishes first reports what it did.
 */
export const cancelOnStop = <E, R>(op: Operation, work: Effect.Effect<Outcome, E, R>): Effect.Effect<Outcome, E, R> =>
  Effect.raceFirst(work, Effect.as(op.stopSignal, { st: "canceled", code: "revoked" } as Outcome))

// ---------------------------------------------------------------------------------------------
// Revocation intake (section 12)

/** Who signed a verified revoke: `known` when a root this executor accepts, or an issuer of a
 * chain rooted at one (the revoke's own verified chain, or a call this process accepted). */
export interface RevokeSigner {
  readonly iss: string
  readonly known: boolean
}

/**
 * Charges a verified revoke to its sender's allowance, before it is recorded (section 12). The
 * transport supplies it, keyed by its own notion of sender; `ok: false` answers the revoke with
 * `RATE_LIMITED` and records nothing.
 */
export type RevokeIntake = (signer: RevokeSigner) => Effect.Effect<
  { readonly ok: true } | { readonly ok: false; readonly retryAfter: number }
>
