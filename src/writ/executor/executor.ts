// The Writ executor: section 7 (executing a call), section 8 (standing operations), section 9
// (state, write failures, recovery after restart), 9.1 (revocation), 9.3 (audit) and 9.4 (acks).
//
// Shape of one call (section 7), each step commented with its number below:
//   1-2  verifier (src/writ/call.ts): a failure is an unsigned error, nothing is recorded
//   3-6  verifier and executor policy: a failure is a signed `failed` tally, returned, not stored
//   7-10 under the admission lock, so that they are atomic with each other and with recording a
//        revoke; step 10's consumption and step 9's pending entry are one `Atomic` store step
//   11   the operation runs outside the lock, with a stop signal a revoke can raise
//   12   the final tally, the call store, the tally store and (for sys/undo) the reversal store are
//        written in one `Atomic` step; if that fails the answer is a pending tally (section 9)
//
// Non-durable state lives in this module only: the admission lock, the stop signals of running
// operations, the reversals running now, and revokes that could not be persisted (still honored
// for as long as the process runs, section 9). A restart loses exactly these, as section 14.1 says.
import { Clock, Context, Deferred, Effect, Either, Fiber, FiberId, Layer, Option } from "effect"
import { Atomic, LimitExhausted, type LimitSpec, Reservations } from "../../accounting/reservations.js"
import { didKeyFromPublicKey } from "../../kernel/didkey.js"
import type { Json, JsonObject } from "../../kernel/json.js"
import { Signer } from "../../kernel/services.js"
import { ackSpec } from "../ack.js"
import { checkCall, checkCallChain, checkCallExpiry, checkForward, checkStanding, isStandingOp, verifyCallSignatures } from "../call.js"
import type { WritError } from "../reason.js"
import { verifyRevoke } from "../revoke.js"
import { verifyTallyObject } from "../tally.js"
import { checkObject, checkSignature, type ObjectInput } from "../verify.js"
import type { CheckedWrit } from "../writ.js"
import {
  APPLICATION_ERROR,
  Application,
  type AckWithBody,
  Forwarder,
  type Operation,
  type ExecutorCode,
  type Outcome,
  Peer,
  PeerBindings,
  RootPolicy,
  STORE_UNAVAILABLE
} from "./services.js"
import {
  type AcceptedCall,
  AckStore,
  AuditLog,
  type AuditEntry,
  CallStore,
  DelegationStore,
  type HeldTally,
  ReversalStore,
  RevokeStore,
  StoreError,
  TallyStore
} from "./stores.js"
import { hashOf, identity, signAck, signPending, signRefusal, signTally } from "./tally-sign.js"

// ---------------------------------------------------------------------------------------------
// Answers

/** The answer to a call (section 10): an unsigned error (steps 1 and 2) or a tally and its body. */
export type CallAnswer =
  | { readonly _tag: "error"; readonly reason: string }
  | { readonly _tag: "tally"; readonly tally: JsonObject; readonly res: Option.Option<Json> }

/** The answer to a revoke (sections 9.1, 9.4, 10). */
export type RevokeAnswer =
  /** An invalid revoke: not recorded, changes nothing (section 9.1). */
  | { readonly _tag: "invalid"; readonly reason: string }
  /** A valid revoke the executor could not persist: honored while it runs, answered as an error (section 9). */
  | { readonly _tag: "unsaved"; readonly code: string }
  | {
    readonly _tag: "recorded"
    readonly tallies: ReadonlyArray<JsonObject>
    readonly ack: JsonObject
    readonly res: JsonObject
    readonly fwd: ReadonlyArray<AckWithBody>
  }

/** The JSON an answer travels as (section 10 bodies; section 14.1 `expect`). */
export const callAnswerJson = (a: CallAnswer): JsonObject =>
  a._tag === "error"
    ? { error: a.reason }
    : Option.isSome(a.res)
    ? { tally: a.tally, res: a.res.value }
    : { tally: a.tally }

export const revokeAnswerJson = (a: RevokeAnswer): JsonObject =>
  a._tag === "invalid"
    ? { error: a.reason }
    : a._tag === "unsaved"
    ? { error: a.code }
    : a.fwd.length > 0
    ? { tallies: a.tallies, ack: a.ack, res: a.res, fwd: a.fwd.map((f) => ({ ack: f.ack, res: f.res })) }
    : { tallies: a.tallies, ack: a.ack, res: a.res }

export interface ExecutorService {
  /** The executor's own key (the leaf `hld` it acts as, section 7 step 6). */
  readonly did: string
  /** Section 7. `peer` is who the transport authenticated (section 7.6); default: no peer. */
  readonly call: (input: ObjectInput, peer?: Peer) => Effect.Effect<CallAnswer>
  /** Section 9.1. A revoke is not subject to peer binding (section 7.6); `peer` is audited. */
  readonly revoke: (input: ObjectInput, peer?: Peer) => Effect.Effect<RevokeAnswer>
  /**
   * Section 9 after a restart: every pending call record is resolved to a final tally, every
   * reversal that began and never reported becomes unknown. Returns the number of records resolved.
   */
  readonly recover: Effect.Effect<number, StoreError>
}

export class Executor extends Context.Tag("mandate/writ/Executor")<Executor, ExecutorService>() {}

// ---------------------------------------------------------------------------------------------
// Internals

/** A refusal at section 7 steps 3 to 10: signed, returned, never stored. */
class Refusal {
  readonly _tag = "Refusal"
  constructor(readonly reason: ExecutorCode) {}
}
const refuse = (reason: ExecutorCode) => Effect.fail(new Refusal(reason))
const refuseWith = (e: WritError) => new Refusal(e.reason)

interface Running {
  readonly forward: boolean
  readonly chain: ReadonlyArray<string>
  readonly issuers: ReadonlyArray<string>
  readonly stop: Deferred.Deferred<void>
}

/** What step 9 found, or that the call was accepted. */
type Admission =
  | { readonly _tag: "final"; readonly tally: JsonObject; readonly res: Option.Option<Json> }
  | { readonly _tag: "pending"; readonly accepted: AcceptedCall }
  | { readonly _tag: "accepted"; readonly accepted: AcceptedCall; readonly stop: Deferred.Deferred<void> }

const ascii = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

/** `used` covering the sub-tallies' (section 6, section 7.5): each name at least the sum below. */
const coverSubs = (used: Readonly<Record<string, number>>, sub: ReadonlyArray<JsonObject>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(used)) if (Number.isSafeInteger(v) && v >= 0) out[k] = v
  const sums: Record<string, number> = {}
  for (const s of sub) {
    const u = s.used
    if (typeof u !== "object" || u === null || Array.isArray(u)) continue
    for (const [k, v] of Object.entries(u as Record<string, unknown>)) {
      if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) sums[k] = (sums[k] ?? 0) + v
    }
  }
  for (const [k, v] of Object.entries(sums)) if ((out[k] ?? 0) < v) out[k] = v
  return out
}

/** An outcome the executor can sign: a known `st`, a string code, integer `rev`, JSON `res`. */
const wellFormed = (o: Outcome): boolean => {
  if (typeof o !== "object" || o === null || !["ok", "failed", "canceled"].includes(o.st)) return false
  if (o.code !== undefined && typeof o.code !== "string") return false
  if (o.rev !== undefined && !Number.isSafeInteger(o.rev)) return false
  if (o.used !== undefined && (typeof o.used !== "object" || o.used === null)) return false
  if (o.res !== undefined) {
    try {
      hashOf(o.res)
    } catch {
      return false
    }
  }
  return true
}

/** Section 7 step 10: the count and total limits of the chain, counts first, in chain order. */
const limitsOf = (chain: ReadonlyArray<CheckedWrit>, args: JsonObject): Array<LimitSpec> => {
  const counts: Array<LimitSpec> = []
  const totals: Array<LimitSpec> = []
  for (const w of chain) {
    const bnd = w.value.bnd
    // A writ with several `count` bounds is limited by the smallest; its entry is incremented once.
    const cs = Object.values(bnd).filter((b) => b.t === "count").map((b) => b.v as number)
    if (cs.length > 0) counts.push({ key: `writ/count/${w.id}`, limit: BigInt(Math.min(...cs)), amount: 1n })
    for (const name of Object.keys(bnd).sort(ascii)) {
      const b = bnd[name]
      if (b.t !== "total") continue
      // Present and within the leaf's value: section 4 step 4 puts it on the leaf, step 8 checked it.
      const arg = args[name]
      totals.push({ key: `writ/total/${w.id}/${name}`, limit: BigInt(b.v as number), amount: BigInt(arg as number) })
    }
  }
  return [...counts, ...totals]
}

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

/** Builds an executor over the stores and services in context. */
export const makeExecutor: Effect.Effect<ExecutorService, never, ExecutorRequirements> = Effect.gen(function*() {
  const context = yield* Effect.context<ExecutorRequirements>()
  const signer = Context.get(context, Signer)
  const app = Context.get(context, Application)
  const roots = Context.get(context, RootPolicy)
  const peers = Context.get(context, PeerBindings)
  const forwarder = Context.get(context, Forwarder)
  const reservations = Context.get(context, Reservations)
  const atomic = Context.get(context, Atomic)
  const calls = Context.get(context, CallStore)
  const tallies = Context.get(context, TallyStore)
  const revokes = Context.get(context, RevokeStore)
  const reversals = Context.get(context, ReversalStore)
  const delegations = Context.get(context, DelegationStore)
  const acks = Context.get(context, AckStore)
  const auditLog = Context.get(context, AuditLog)
  const did = didKeyFromPublicKey(signer.publicKey)

  // Steps 7 to 10 of forward and standing calls, and recording a revoke, run one at a time.
  const admission = yield* Effect.makeSemaphore(1)
  const running = new Map<string, Running>()
  /** Reversals running in this process, by target tally: one at a time per tally (section 8.1). */
  const reversing = new Map<string, Deferred.Deferred<boolean>>()
  const unsaved: Array<{ readonly writ: string; readonly iss: string }> = []
  /** Calls whose operation recorded an issued writ or a sub-tally in this process. */
  const delegating = new Set<string>()
  let recovering = false
  /** Audit fields of accepted calls, written with their final tally (section 9.3). */
  const auditBases = new Map<string, Omit<AuditEntry, "outcome" | "reason" | "signed">>()

  const sign = <A>(self: Effect.Effect<A, never, Signer>) => Effect.provideService(self, Signer, signer)

  const audit = (entry: AuditEntry) =>
    auditLog.append(entry).pipe(
      Effect.catchAll((e) => Effect.logWarning(`audit record not written: ${e.message}`))
    )

  /** The audit record's `peer` (section 9.3): the authenticated peer's name, "(unnamed)", or null. */
  const peerNameOf = (peer: Peer): string | null =>
    peer._tag === "named" ? peer.id : peer._tag === "unnamed" ? "(unnamed)" : null

  /** The audit record of a call or revoke refused before it had an identity (section 9.3). */
  const auditUnidentified = (time: number, kind: AuditEntry["kind"], peer: string | null, reason: string) =>
    audit({
      time, kind, identity: null, unparsed: reason, principal: null, peer,
      root: null, leaf: null, op: null, outcome: "error", reason, signed: null
    })

  /** Section 9: a revoke that could not be persisted is still honored while the process runs. */
  const unsavedCovers = (chain: ReadonlyArray<string>, issuers: ReadonlyArray<string>) =>
    unsaved.some((r) => (r.writ === "*" ? issuers.includes(r.iss) : chain.includes(r.writ)))

  // -------------------------------------------------------------------------------------------
  // Step 12: sign and persist the final tally (and, for sys/undo, the reversal's record).

  const finish = (
    accepted: AcceptedCall,
    outcome: Outcome,
    reversal: Effect.Effect<void, StoreError>
  ): Effect.Effect<CallAnswer> =>
    Effect.gen(function*() {
      const res = outcome.res === undefined ? Option.none<Json>() : Option.some(outcome.res)
      // Only work that delegated (in this process, or any work found after a restart) has
      // issued writs or sub-tallies to read back (section 7.5).
      const delegated = delegating.has(accepted.call) || recovering
        ? yield* delegations.forCall(accepted.leaf, accepted.id).pipe(Effect.either)
        : Either.right({ wrt: [] as ReadonlyArray<JsonObject>, sub: [] as ReadonlyArray<JsonObject> })
      const { wrt, sub } = Either.isRight(delegated) ? delegated.right : { wrt: [], sub: [] }
      const tally = yield* sign(signTally({
        call: accepted.call,
        writ: accepted.leaf,
        op: accepted.op,
        acc: accepted.acc,
        st: outcome.st,
        code: outcome.st === "ok" ? null : (outcome.code ?? APPLICATION_ERROR),
        res,
        used: coverSubs(outcome.used ?? {}, sub),
        rev: accepted.standing || outcome.rev === undefined ? null : outcome.rev,
        sub,
        wrt
      }))
      const persisted = yield* atomic.transaction(Effect.gen(function*() {
        if (Either.isLeft(delegated)) return yield* Effect.fail(delegated.left)
        yield* calls.finalize(accepted.leaf, accepted.id, tally, res)
        yield* tallies.put({
          tally: identity(tally),
          call: accepted.call,
          acc: accepted.acc,
          forward: !accepted.standing,
          chain: accepted.chain,
          issuers: accepted.issuers,
          object: tally,
          res
        })
        yield* reversal
        // The call's audit entry goes in the same step (one commit instead of two, section 9.3).
        const base = auditBases.get(accepted.call)
        if (base !== undefined) {
          yield* auditLog.append({
            ...base,
            outcome: String(tally.st),
            reason: outcome.st === "ok" ? null : (outcome.code ?? APPLICATION_ERROR),
            signed: identity(tally)
          })
        }
        // The consumption stays whatever the outcome (section 7.3); settling only closes the record.
        if (accepted.reservation !== null) {
          const settle = outcome.st === "ok"
            ? reservations.commit(accepted.reservation)
            : reservations.settleFailure(accepted.reservation)
          yield* settle.pipe(Effect.catchIf((e) => e._tag !== "StoreError", () => Effect.void))
        }
      })).pipe(Effect.either)
      if (Either.isRight(persisted)) auditBases.delete(accepted.call)
      if (Either.isLeft(persisted)) {
        // Section 9: performed but not persisted; answer what the durable record will resolve to.
        yield* Effect.logWarning(`final tally not persisted: ${persisted.left.message}`)
        return { _tag: "tally", tally: yield* sign(signPending(accepted.call, accepted.leaf, accepted.op, accepted.acc)), res: Option.none() } as const
      }
      return { _tag: "tally", tally, res } as const
    })

  // -------------------------------------------------------------------------------------------
  // Section 8.2: sys/tallies

  const performTallies = (accepted: AcceptedCall, call: JsonObject, chain: ReadonlyArray<CheckedWrit>) =>
    Effect.gen(function*() {
      const args = call.args as JsonObject
      const from = call.from as string
      const writ = args.writ
      // `from` issued the writ at index i; it may ask about that writ or any below it.
      const first = chain.findIndex((w) => w.value.iss === from)
      const index = typeof writ === "string" ? chain.findIndex((w) => w.id === writ) : -1
      if (typeof writ !== "string" || index < 0 || first < 0 || index < first) {
        return { st: "failed", code: "tally_mismatch" } as Outcome
      }
      const held = yield* tallies.underWrit(writ)
      return { st: "ok", res: { tallies: held.map((h) => h.object) } } as Outcome
    })

  // -------------------------------------------------------------------------------------------
  // Section 8.1: sys/undo

  const operation = (
    kind: Operation["kind"],
    accepted: AcceptedCall,
    call: JsonObject,
    stop: Deferred.Deferred<void>,
    target: Option.Option<HeldTally>
  ): Operation => ({
    kind,
    call,
    callId: accepted.call,
    op: accepted.op,
    args: call.args as JsonObject,
    acc: accepted.acc,
    chain: call.chain as ReadonlyArray<JsonObject>,
    target,
    stopSignal: Deferred.await(stop),
    stopRequested: Deferred.isDone(stop),
    recordIssued: (writ) =>
      Effect.zipRight(Effect.sync(() => delegating.add(accepted.call)), delegations.recordIssued({
        leaf: accepted.leaf,
        id: accepted.id,
        writ: identity(writ),
        hld: typeof writ.hld === "string" ? writ.hld : "",
        above: accepted.chain,
        aboveIssuers: accepted.issuers,
        object: writ
      })),
    recordSub: (sub) =>
      Effect.gen(function*() {
        // Section 7.5: a sub-tally passes section 6.1 under the child writ's holder, or is left out.
        const { wrt } = yield* delegations.forCall(accepted.leaf, accepted.id)
        const named = wrt.find((w) => identity(w) === sub.writ)
        if (named === undefined || typeof named.hld !== "string") return false
        const checked = yield* verifyTallyObject(sub, named.hld).pipe(Effect.either)
        if (Either.isLeft(checked)) return false
        yield* delegations.recordSub({
          leaf: accepted.leaf,
          id: accepted.id,
          subCall: checked.right.value.call,
          signer: named.hld,
          object: sub
        })
        return true
      })
  })

  const runApplication = (op: Operation): Effect.Effect<Outcome> =>
    app.perform(op).pipe(
      Effect.flatMap((outcome) =>
        wellFormed(outcome)
          ? Effect.succeed(outcome)
          : Effect.as(Effect.logWarning("application returned a malformed outcome"), {
            st: "failed",
            code: APPLICATION_ERROR
          } as Outcome)
      ),
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("application failed", cause), { st: "failed", code: APPLICATION_ERROR } as Outcome)
      )
    )

  const performUndo = (
    accepted: AcceptedCall,
    call: JsonObject,
    chain: ReadonlyArray<CheckedWrit>,
    stop: Deferred.Deferred<void>
  ): Effect.Effect<CallAnswer> =>
    Effect.gen(function*() {
      const fail = (code: ExecutorCode) => finish(accepted, { st: "failed", code }, Effect.void)
      const args = call.args as JsonObject
      // args.tally is an object (`malformed`).
      const target = args.tally
      if (typeof target !== "object" || target === null || Array.isArray(target)) return yield* fail("malformed")
      // It passes section 6.1 with this executor's own key as signer; any failure is `not_reversible`.
      const checked = yield* verifyTallyObject(target as JsonObject, did).pipe(Effect.either)
      if (Either.isLeft(checked)) return yield* fail("not_reversible")
      const t = checked.right.value
      // The leaf of the chain is the tally's writ (`tally_mismatch`).
      if (chain[chain.length - 1].id !== t.writ) return yield* fail("tally_mismatch")
      // rev is not null, now < rev.until by the executor's own clock, st is ok (`not_reversible`).
      const now = accepted.acc
      if (t.rev === null || !(now < t.rev.until) || t.st !== "ok") return yield* fail("not_reversible")
      // The tally is held in the tally store (`not_reversible`).
      const tallyId = checked.right.id
      const heldE = yield* tallies.get(tallyId).pipe(Effect.either)
      if (Either.isLeft(heldE)) return yield* fail(STORE_UNAVAILABLE)
      if (Option.isNone(heldE.right)) return yield* fail("not_reversible")
      const held = heldE.right
      // At most once per tally identity; one reversal at a time; waiters (section 8.1).
      while (true) {
        // Claim the tally, or wait for the reversal that holds it: one synchronous step, so two
        // fibers can never both claim.
        const claim = yield* Effect.sync(() => {
          const current = reversing.get(tallyId)
          if (current !== undefined) return { _tag: "wait" as const, current }
          const mine = Deferred.unsafeMake<boolean>(FiberId.none)
          reversing.set(tallyId, mine)
          return { _tag: "mine" as const, mine }
        })
        if (claim._tag === "wait") {
          // A reversal of this tally is running: wait for it, then look again.
          yield* Deferred.await(claim.current)
          continue
        }
        const mine = claim.mine
        return yield* Effect.gen(function*() {
          // Read under the claim, so a reversal that finished a moment ago is seen.
          const recordE = yield* reversals.get(tallyId).pipe(Effect.either)
          if (Either.isLeft(recordE)) return yield* fail(STORE_UNAVAILABLE)
          const record = recordE.right
          if (Option.isSome(record) && record.value.state === "succeeded") {
            // Done before: perform nothing, answer ok with the successful reversal's body.
            const r = record.value
            return yield* finish(accepted, Option.isSome(r.res) ? { st: "ok", res: r.res.value } : { st: "ok" }, Effect.void)
          }
          if (Option.isSome(record)) {
            // Begun and never reported (found after a restart, or its final write failed): store
            // loss is never proof that nothing happened.
            return yield* fail("unknown_outcome")
          }
          // Durably record that the reversal has begun before performing it.
          const begun = yield* atomic.transaction(reversals.begin(tallyId, accepted.call)).pipe(Effect.either)
          if (Either.isLeft(begun)) return yield* fail(STORE_UNAVAILABLE)
          const outcome = yield* runApplication(operation("undo", accepted, call, stop, held))
          const written = outcome.st === "ok"
            ? reversals.succeed(tallyId, accepted.call, outcome.res === undefined ? Option.none() : Option.some(outcome.res))
            : reversals.clear(tallyId)
          return yield* finish(accepted, { ...outcome, rev: undefined }, written)
        }).pipe(
          // However this ends, the claim is released and the waiters look again.
          Effect.ensuring(Effect.suspend(() => {
            if (reversing.get(tallyId) === mine) reversing.delete(tallyId)
            return Deferred.succeed(mine, true)
          }))
        )
      }
    })

  // -------------------------------------------------------------------------------------------
  // Section 7

  const call = (input: ObjectInput, peer: Peer = Peer.none): Effect.Effect<CallAnswer> =>
    Effect.gen(function*() {
      const now = yield* nowSeconds
      const peerName = peerNameOf(peer)
      // Step 1: section 6.1 steps 1 to 5 on the call (unsigned error).
      const checkedE = yield* checkCall(input).pipe(Effect.either)
      if (Either.isLeft(checkedE)) {
        yield* auditUnidentified(now, "call", peerName, checkedE.left.reason)
        return { _tag: "error", reason: checkedE.left.reason } as const
      }
      const checked = checkedE.right
      const K = checked.value
      // Step 2: every writ of the chain passes section 6.1, then the call's signature (unsigned error).
      const writsE = yield* verifyCallSignatures(checked).pipe(Effect.either)
      const baseAudit = {
        time: now, kind: "call" as const, identity: checked.id, unparsed: null, principal: K.from, peer: peerName,
        op: K.op
      }
      if (Either.isLeft(writsE)) {
        yield* audit({ ...baseAudit, root: null, leaf: null, outcome: "error", reason: writsE.left.reason, signed: null })
        return { _tag: "error", reason: writsE.left.reason } as const
      }
      const chain = writsE.right
      const leaf = chain[chain.length - 1]
      const standing = isStandingOp(K.op)
      const chainIds = chain.map((w) => w.id)
      const issuers = chain.map((w) => w.value.iss)
      const fullAudit = { ...baseAudit, root: chain[0].value.iss, leaf: leaf.id }
      const reply = (answer: CallAnswer, outcome?: string) =>
        Effect.as(
          audit({
            ...fullAudit,
            outcome: outcome ?? (answer._tag === "tally" ? String(answer.tally.st) : "error"),
            reason: answer._tag === "tally"
              ? ((answer.tally.err as { code?: string } | null)?.code ?? null)
              : answer.reason,
            signed: answer._tag === "tally" ? identity(answer.tally) : null
          }),
          answer
        )

      const admitted = yield* Effect.gen(function*() {
        // Step 3: the rest of section 4's chain verification.
        yield* checkCallChain(chain).pipe(Effect.mapError(refuseWith))
        // Step 4: forward only, every writ unexpired by the executor's own clock.
        if (!standing) yield* checkCallExpiry(chain, now).pipe(Effect.mapError(refuseWith))
        // Step 5: root acceptance (section 7.1).
        if (!(yield* roots.accepts(chain[0].value.iss))) yield* refuse("root_not_accepted")
        // Step 6: this executor is the leaf holder.
        if (leaf.value.hld !== did) yield* refuse("wrong_executor")
        // Steps 7 to 10 (and step 11's pending record) are atomic with other calls and with
        // recording a revoke.
        return yield* admission.withPermits(1)(Effect.gen(function*() {
          // Step 7: forward only, no writ of the chain revoked, by identity or key-wide.
          if (!standing) {
            const revoked = yield* revokes.covers(chainIds, issuers).pipe(
              Effect.mapError(() => new Refusal(STORE_UNAVAILABLE))
            )
            if (revoked || unsavedCovers(chainIds, issuers)) yield* refuse("revoked")
          }
          // Step 8: the peer binding first (section 7.6), failing closed; then standing.
          if (peer._tag === "unnamed") yield* refuse("peer_mismatch")
          if (peer._tag === "named" && !(yield* peers.speaksFor(peer.id, K.from))) yield* refuse("peer_mismatch")
          if (standing) yield* checkStanding(checked, chain).pipe(Effect.mapError(refuseWith))
          else yield* checkForward(checked, chain).pipe(Effect.mapError(refuseWith))
          // Step 9: replay.
          const entry = yield* calls.get(leaf.id, K.id).pipe(Effect.mapError(() => new Refusal(STORE_UNAVAILABLE)))
          if (Option.isSome(entry)) {
            const e = entry.value
            return e.state === "final"
              ? ({ _tag: "final", tally: e.tally, res: e.res } as Admission)
              : ({ _tag: "pending", accepted: e.accepted } as Admission)
          }
          // Step 10 with step 9's pending entry and step 11's acc: one atomic store step. A
          // refusal here consumes nothing and leaves no entry (the transaction rolls back).
          const limits = standing ? [] : limitsOf(chain, K.args)
          const reservation = limits.length > 0 ? `writ/call/${leaf.id}/${K.id}` : null
          const accepted: AcceptedCall = {
            leaf: leaf.id,
            id: K.id,
            call: checked.id,
            op: K.op,
            acc: now,
            standing,
            chain: chainIds,
            issuers,
            exp: leaf.value.exp,
            reservation
          }
          yield* atomic.transaction(Effect.gen(function*() {
            if (reservation !== null) yield* reservations.reserve({ id: reservation, limits, onFailure: "consume" })
            yield* calls.insertPending(accepted)
          })).pipe(
            Effect.mapError((e) =>
              e instanceof LimitExhausted
                ? new Refusal(e.key.startsWith("writ/count/") ? "count_exhausted" : "total_exhausted")
                : new Refusal(STORE_UNAVAILABLE)
            )
          )
          const stop = yield* Deferred.make<void>()
          running.set(checked.id, { forward: !standing, chain: chainIds, issuers, stop })
          return { _tag: "accepted", accepted, stop } as Admission
        }))
      }).pipe(Effect.either)

      if (Either.isLeft(admitted)) {
        const tally = yield* sign(signRefusal(checked.id, leaf.id, K.op, now, admitted.left.reason))
        return yield* reply({ _tag: "tally", tally, res: Option.none() })
      }
      const a = admitted.right
      if (a._tag === "final") return yield* reply({ _tag: "tally", tally: a.tally, res: a.res }, "replay")
      if (a._tag === "pending") {
        // The pending tally of the recorded entry, with its acc (section 7 step 9).
        const p = a.accepted
        return yield* reply({ _tag: "tally", tally: yield* sign(signPending(p.call, p.leaf, p.op, p.acc)), res: Option.none() })
      }
      // Step 11: perform the operation; step 12: sign and persist the tally. Once accepted, the
      // work runs to its tally on its own fiber: a caller that goes away (a dropped connection)
      // neither cancels it nor leaves its record pending.
      const accepted = a.accepted
      auditBases.set(accepted.call, fullAudit)
      // Interruptible explicitly: a fork inherits its parent's interruption mask, and a transport
      // may run the call uninterruptibly (as @effect/platform runs HTTP handlers); an operation
      // that races its stop signal (section 9.1) must still be able to interrupt the loser.
      const work = yield* Effect.forkDaemon(Effect.interruptible(Effect.gen(function*() {
        if (K.op === "sys/tallies") {
          const outcome = yield* performTallies(accepted, checked.json, chain).pipe(
            Effect.catchAll(() => Effect.succeed({ st: "failed", code: STORE_UNAVAILABLE } as Outcome))
          )
          return yield* finish(accepted, outcome, Effect.void)
        }
        if (K.op === "sys/undo") return yield* performUndo(accepted, checked.json, chain, a.stop)
        const outcome = yield* runApplication(operation("forward", accepted, checked.json, a.stop, Option.none()))
        return yield* finish(accepted, outcome, Effect.void)
      })).pipe(Effect.ensuring(Effect.sync(() => (running.delete(checked.id), delegating.delete(checked.id))))))
      const answer = yield* Fiber.join(work)
      // Written with the final tally unless that step failed (then the pending answer is audited).
      if (!auditBases.has(accepted.call)) return answer
      auditBases.delete(accepted.call)
      return yield* reply(answer)
    })

  // -------------------------------------------------------------------------------------------
  // Section 9.1 and 9.4

  /** Keeps each forwarded ack that passes section 9.4 steps 2 to 4 for this revoke. */
  const keepAck = (revokeId: string, a: AckWithBody) =>
    Effect.gen(function*() {
      const checked = yield* checkObject(ackSpec, a.ack).pipe(Effect.either)
      if (Either.isLeft(checked)) return
      const ok = yield* checkSignature(ackSpec, checked.right, checked.right.value.iss).pipe(Effect.either)
      if (Either.isLeft(ok)) return
      if (checked.right.value.revoke !== revokeId) return
      if (checked.right.value.out !== hashOf(a.res)) return
      if (!isAckBody(a.res)) return
      yield* acks.keep({ revoke: revokeId, ack: checked.right.id, object: a.ack, res: a.res }).pipe(
        Effect.catchAll((e) => Effect.logWarning(`relayed ack not kept: ${e.message}`))
      )
    })

  const revoke = (input: ObjectInput, peer: Peer = Peer.none): Effect.Effect<RevokeAnswer> =>
    Effect.gen(function*() {
      const now = yield* nowSeconds
      const peerName = peerNameOf(peer)
      // Section 9.1 steps 1 to 4, in order; an invalid revoke is not recorded and changes nothing.
      const verified = yield* verifyRevoke(input).pipe(Effect.either)
      if (Either.isLeft(verified)) {
        yield* auditUnidentified(now, "revoke", peerName, verified.left.reason)
        return { _tag: "invalid", reason: verified.left.reason } as const
      }
      const r = verified.right.revoke
      const { writ, iss } = r.value
      const rchain = verified.right.chain
      const covers = (chain: ReadonlyArray<string>, issuers: ReadonlyArray<string>) =>
        writ === "*" ? issuers.includes(iss) : chain.includes(writ)
      const baseAudit = {
        time: now, kind: "revoke" as const, identity: r.id, unparsed: null, principal: iss, peer: peerName,
        root: rchain.length > 0 ? rchain[0].value.iss : null, leaf: writ, op: null
      }

      // Recording the revoke is atomic with steps 7 to 11 of every forward call (section 7).
      const recorded = yield* admission.withPermits(1)(Effect.gen(function*() {
        const stored = yield* atomic.transaction(Effect.gen(function*() {
          yield* revokes.record({
            revoke: r.id,
            writ,
            iss,
            exp: rchain.length > 0 ? rchain[rchain.length - 1].value.exp : null,
            rcv: now
          })
          // The ack's body, computed at the moment of recording (section 9.4).
          const held = writ === "*" ? yield* tallies.underIssuer(iss) : yield* tallies.underWrit(writ)
          const pending = yield* calls.pending
          return { held, pending }
        })).pipe(Effect.either)
        const toStop = [...running.entries()].filter(([, run]) => run.forward && covers(run.chain, run.issuers))
        if (Either.isLeft(stored)) {
          // Section 9: not persisted, so answered as an error, but honored for as long as we run.
          unsaved.push({ writ, iss })
          for (const [, run] of toStop) yield* Deferred.succeed(run.stop, undefined)
          return Either.left(stored.left)
        }
        const open = stored.right.pending
          .filter((p) => !p.standing && covers(p.chain, p.issuers))
          .sort((x, y) => ascii(x.call, y.call))
        const held = [...stored.right.held]
          .sort((x, y) => ascii(x.call, y.call) || ascii(x.tally, y.tally))
          .map((h) => ({ call: h.call, tally: h.tally }))
        const body: JsonObject = { held, open: open.map((p) => p.call) }
        const ack = yield* sign(signAck(r.id, did, now, body))
        // Tell every forward operation under the revoked writ to stop (section 9.1).
        for (const [, run] of toStop) yield* Deferred.succeed(run.stop, undefined)
        return Either.right({ open, ack, body })
      }))

      if (Either.isLeft(recorded)) {
        yield* Effect.logWarning(`revoke not persisted: ${recorded.left.message}`)
        yield* audit({ ...baseAudit, outcome: "unsaved", reason: STORE_UNAVAILABLE, signed: null })
        return { _tag: "unsaved", code: STORE_UNAVAILABLE } as const
      }
      const { open, ack, body } = recorded.right
      // Every call still open is answered with a pending tally; its final tally follows when the
      // operation returns.
      const answered = yield* Effect.forEach(open, (p) => sign(signPending(p.call, p.leaf, p.op, p.acc)))

      // Forward to the holders of the writs this executor issued under the revoked writ, and relay
      // the acks that verify (section 9.1, 9.4).
      const issued = yield* delegations.issuedUnder(writ, iss).pipe(Effect.orElseSucceed(() => []))
      const holders = [...new Set(issued.map((w) => w.hld))].filter((h) => h !== "")
      yield* Effect.forEach(holders, (holder) =>
        Effect.gen(function*() {
          const got = yield* forwarder.forward(r.json, holder)
          if (Option.isNone(got)) return
          yield* keepAck(r.id, { ack: got.value.ack, res: got.value.res })
          for (const f of got.value.fwd) yield* keepAck(r.id, f)
        }), { discard: true, concurrency: "unbounded" })
      const kept = yield* acks.forRevoke(r.id).pipe(Effect.orElseSucceed(() => []))

      yield* audit({ ...baseAudit, outcome: "recorded", reason: null, signed: identity(ack) })
      return {
        _tag: "recorded",
        tallies: answered,
        ack,
        res: body,
        fwd: kept.map((k) => ({ ack: k.object, res: k.res }))
      } as const
    })

  // -------------------------------------------------------------------------------------------
  // Section 9: recovery after restart

  const recover: Effect.Effect<number, StoreError> = Effect.gen(function*() {
    recovering = true
    // A reversal that began and never reported: its outcome is unknown (section 8.1).
    yield* atomic.transaction(reversals.markBegunUnknown)
    const pending = yield* calls.pending
    for (const p of pending) {
      const found = app.recover === undefined ? Option.none<Outcome>() : yield* app.recover(p)
      const outcome: Outcome = Option.isSome(found) && !p.standing
        ? found.value
        : { st: "failed", code: "unknown_outcome" }
      const answer = yield* finish(p, outcome, Effect.void)
      // The call's audit entry: the crash lost the one it would have had when answered (9.3).
      yield* audit({
        time: yield* nowSeconds, kind: "call", identity: p.call, unparsed: null, principal: null, peer: null,
        root: null, leaf: p.leaf, op: p.op, outcome: answer._tag === "tally" ? String(answer.tally.st) : "error",
        reason: outcome.st === "ok" ? null : (outcome.code ?? null),
        signed: answer._tag === "tally" ? identity(answer.tally) : null
      })
      if (answer._tag === "tally" && answer.tally.st === "pending") {
        return yield* Effect.fail(
          new StoreError({ operation: "writ.recover", message: `pending record ${p.call} could not be resolved` })
        )
      }
    }
    return pending.length
  }).pipe(Effect.ensuring(Effect.sync(() => void (recovering = false))))

  return { did, call, revoke, recover }
})

/** Section 9.4 step 4: the body is an object whose `held` and `open` are arrays. */
const isAckBody = (u: Json): boolean =>
  typeof u === "object" && u !== null && !Array.isArray(u) &&
  Array.isArray((u as JsonObject).held) && Array.isArray((u as JsonObject).open)

/** The executor as a Layer over the stores and services it needs. */
export const layer: Layer.Layer<Executor, never, ExecutorRequirements> = Layer.effect(Executor, makeExecutor)

/**
 * The executor after a restart: its pending records are resolved (section 9) before it takes its
 * first call. A store that cannot be read or written fails the Layer.
 */
export const layerRecovered: Layer.Layer<Executor, StoreError, ExecutorRequirements> = Layer.effect(
  Executor,
  Effect.tap(makeExecutor, (executor) => executor.recover)
)
