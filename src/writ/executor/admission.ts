// Section 7 steps 1 to 10: from the received bytes to an accepted call (or its answer).
//   1-2  verifier (src/writ/call.ts): a failure is an unsigned error, nothing is recorded
//   3-6  verifier and executor policy: a failure is a signed `failed` tally, returned, not stored
//   7-10 through the admission gate (admission-gate.ts), atomic with each other and with recording a
//        revoke; step 10's consumption and step 9's pending entry are one `Atomic` store step
import { Deferred, Effect, Either, Option, String as Str } from "effect"
import type { LimitSpec } from "../../accounting/reservations.js"
import type { Json, JsonObject } from "../../kernel/json.js"
import { type CheckedCall, checkForward, checkStanding, isStandingOp, verifyCallStepsEither } from "../call.js"
import { expiryFailure } from "../chain.js"
import type { WritError } from "../reason.js"
import type { ObjectInput } from "../verify.js"
import type { CheckedWrit } from "../writ.js"
import { admitInOne, type Found } from "./admission-one.js"
import type { CallAnswer } from "./answers.js"
import { auditAnswer, auditRefusal, auditReplay, auditUnidentified, peerNameOf } from "./audit.js"
import { publishAccepted, publishRefused } from "./decisions.js"
import { refusalOf, refuse, refuseUnavailable, SignedRefusal, storeStep, UnsignedError } from "./failures.js"
import { checkPeer, checkRevoked, checkRoot } from "./live-checks.js"
import { rememberReplay } from "./replays.js"
import { type Peer, STORE_UNAVAILABLE } from "./services.js"
import { unixSeconds } from "../../kernel/clock.js"
import { type AuditBase, rememberIssuers, signWith, type StepEnv, unsavedCovers } from "./state.js"
import type { AcceptedCall } from "./stores.js"
import { identity, signPending, signRefusal } from "./tally-sign.js"


/** A call answered by steps 1 to 10 (and audited), or accepted for step 11. */
export type Admission =
  | { readonly _tag: "answered"; readonly answer: CallAnswer }
  | {
    readonly _tag: "accepted"
    readonly accepted: AcceptedCall
    readonly checked: CheckedCall
    readonly chain: ReadonlyArray<CheckedWrit>
    readonly stop: Deferred.Deferred<void>
    /** The audit fields written with the final tally (section 9.3). */
    readonly base: AuditBase
  }

/** Section 7 step 10: the count and total limits of the chain, counts first, in chain order. */
export const limitsOf = (chain: ReadonlyArray<CheckedWrit>, args: JsonObject): Array<LimitSpec> => {
  const counts: Array<LimitSpec> = []
  const totals: Array<LimitSpec> = []
  for (const w of chain) {
    const bnd = w.value.bnd
    // A writ with several `count` bounds is limited by the smallest; its entry is incremented once.
    const cs = Object.values(bnd).filter((b) => b.t === "count").map((b) => b.v as number)
    if (cs.length > 0) counts.push({ key: `writ/count/${w.id}`, limit: BigInt(Math.min(...cs)), amount: 1n })
    for (const name of Object.keys(bnd).sort(Str.Order)) {
      const b = bnd[name]
      if (b.t !== "total") continue
      // Present and within the leaf's value: section 4 step 4 puts it on the leaf, step 8 checked it.
      const arg = args[name]
      totals.push({ key: `writ/total/${w.id}/${name}`, limit: BigInt(b.v as number), amount: BigInt(arg as number) })
    }
  }
  return [...counts, ...totals]
}

/**
 * Steps 1 to 10 for the call in `input`, delivered by `peer` (section 7.6). `replayKey` names the
 * received bytes (replays.ts): a final answer found at step 9 is remembered under it.
 */
/** What steps 3 to 10 read and change. */
type CheckedEnv = StepEnv<
  "atomic" | "calls" | "did" | "gate" | "peers" | "reservations" | "revokes" | "rootLifetime" | "roots",
  "knownIssuers" | "running" | "unsaved"
>

/** What admission reads and changes: steps 1 to 10, its audit (9.3) and decisions. */
export type AdmitEnv = CheckedEnv & StepEnv<
  "auditLog" | "cache" | "decisions" | "signer",
  "refusalAudit" | "replayAudit" | "replays" | "suppressed" | "suppressedReplays"
>

export const admit = (env: AdmitEnv, input: ObjectInput, peer: Peer, replayKey: string | null = null): Effect.Effect<Admission> => {
  const peerName = peerNameOf(peer)
  return Effect.gen(function*() {
    const now = yield* unixSeconds
    // Steps 1 to 3 as plain code (call.ts's sans-IO core), with the executor's own cache: step 1
    // is section 6.1 steps 1 to 5 on the call, step 2 every writ then the call's signature (both
    // unsigned errors), step 3 the chain's links (a signed refusal, below).
    const verified = verifyCallStepsEither(input, env.cache.sync)
    if (Either.isLeft(verified) && verified.left.step === 1) {
      const e = verified.left.error
      return yield* auditUnidentified(env, now, "call", peerName, e.reason).pipe(
        Effect.zipRight(publishRefused(env, { principal: null, subject: null, op: null }, e.reason)),
        Effect.zipRight(Effect.fail(new UnsignedError({ reason: e.reason })))
      )
    }
    const checked = Either.isLeft(verified) ? (verified.left as Extract<typeof verified.left, { call: CheckedCall }>).call : verified.right.call
    const K = checked.value
    const facts = { principal: K.from, subject: checked.id, op: K.op }
    const baseAudit = {
      time: now, kind: "call" as const, identity: checked.id, unparsed: null, principal: K.from, peer: peerName,
      op: K.op
    }
    // Step 2 failed: an unsigned error.
    if (Either.isLeft(verified) && verified.left.step === 2) {
      const e = verified.left.error
      return yield* auditRefusal(env, { ...baseAudit, root: null, leaf: null, outcome: "error", reason: e.reason, signed: null }).pipe(
        Effect.zipRight(publishRefused(env, facts, e.reason)),
        Effect.zipRight(Effect.fail(new UnsignedError({ reason: e.reason })))
      )
    }
    // Past step 2 the chain is verified writs; step 3's failure is refused in admitChecked, signed.
    const chain = Either.isRight(verified) ? verified.right.chain : (verified.left as Extract<typeof verified.left, { step: 3 }>).chain
    const linkFailure = Either.isLeft(verified) ? verified.left.error : undefined
    const leaf = chain[chain.length - 1]
    yield* Effect.annotateCurrentSpan({ call: checked.id, leaf: leaf.id, op: K.op.slice(0, 256) })
    const fullAudit: AuditBase = { ...baseAudit, root: chain[0].value.iss, leaf: leaf.id }
    const answered = (answer: CallAnswer, outcome?: string) =>
      Effect.map(auditAnswer(env, fullAudit, answer, outcome), (answer) => ({ _tag: "answered", answer }) as const)
    const sign = signWith(env)

    // A refusal found inside the gate's step (steps 7 to 10) is signed and its audit row written
    // in that same step: one store step (one group-commit savepoint, one wait for a COMMIT) per
    // refused call instead of two. Its root passed step 5, so the row is not on the peer's
    // allowance for unauthenticated refusals (below).
    const refusedInStep = (reason: string): Effect.Effect<Refused> =>
      Effect.flatMap(sign(signRefusal(checked.id, leaf.id, K.op, now, reason)), (tally) => {
        const answer = { _tag: "tally", tally, res: Option.none() } as const
        return Effect.as(auditAnswer(env, fullAudit, answer), { _tag: "refused", reason, answer } as const)
      })

    return yield* admitChecked(env, checked, chain, linkFailure, now, peer, refusedInStep).pipe(
      Effect.annotateLogs({ call: checked.id, leaf: leaf.id }),
      Effect.flatMap((found): Effect.Effect<Admission> => {
        switch (found._tag) {
          case "refused":
            return Effect.as(publishRefused(env, facts, found.reason), { _tag: "answered", answer: found.answer } as const)
          case "final": {
            // Step 9: the stored answer, byte for byte; audited on the replays' bounded path.
            const answer = { _tag: "tally", tally: found.tally, res: found.res } as const
            if (replayKey !== null) rememberReplay(env, replayKey, checked, chain, answer)
            return Effect.as(auditReplay(env, fullAudit, answer), { _tag: "answered", answer } as const)
          }
          case "pending": {
            // The pending tally of the recorded entry, with its acc (section 7 step 9).
            const p = found.accepted
            return Effect.flatMap(
              sign(signPending(p.call, p.leaf, p.op, p.acc)),
              (tally) => answered({ _tag: "tally", tally, res: Option.none() })
            )
          }
          case "accepted":
            return Effect.as(
              publishAccepted(env, facts, found.accepted.standing ? [] : limitsOf(chain, K.args)),
              { _tag: "accepted", accepted: found.accepted, checked, chain, stop: found.stop, base: fullAudit } as const
            )
        }
      }),
      // Steps 3 to 10: a signed `failed` tally, returned and not stored. A chain whose root this
      // executor does not accept authenticates nobody it acts for: anyone can sign one with a key
      // of their own, as many as they like. Its refusal's audit row is therefore on the peer's
      // allowance for unauthenticated refusals (section 9.3, section 12), as steps 1 and 2 are.
      Effect.catchTag("SignedRefusal", (e) =>
        Effect.flatMap(
          Effect.zipRight(publishRefused(env, facts, e.reason), sign(signRefusal(checked.id, leaf.id, K.op, now, e.reason))),
          (tally) => {
            const answer = { _tag: "tally", tally, res: Option.none() } as const
            return Effect.flatMap(env.roots.accepts(chain[0].value.iss), (anchored) =>
              anchored
                ? answered(answer)
                : Effect.as(
                  auditRefusal(env, { ...fullAudit, outcome: String(tally.st), reason: e.reason, signed: identity(tally) }),
                  { _tag: "answered", answer } as const
                ))
          }
        ))
    )
  }).pipe(
    // Steps 1 and 2: an unsigned error (audited where it was found).
    Effect.catchTag("UnsignedError", (e) => Effect.succeed({ _tag: "answered", answer: { _tag: "error", reason: e.reason } } as const))
  )
}

/** A refusal at steps 7 to 10 signed and audited inside the gate's step (`refusedInStep`). */
interface Refused {
  readonly _tag: "refused"
  readonly reason: string
  readonly answer: Extract<CallAnswer, { _tag: "tally" }>
}

/** Steps 3 to 10 of a call that passed steps 1 and 2; `inStep` answers a refusal made inside
 * the gate's step, in that step. */
const admitChecked = (
  env: CheckedEnv,
  checked: CheckedCall,
  chain: ReadonlyArray<CheckedWrit>,
  linkFailure: WritError | undefined,
  now: number,
  peer: Peer,
  inStep: (reason: string) => Effect.Effect<Refused>
): Effect.Effect<Found | Refused, SignedRefusal> =>
  Effect.gen(function*() {
    const { state } = env
    const K = checked.value
    const leaf = chain[chain.length - 1]
    const standing = isStandingOp(K.op)
    const chainIds = chain.map((w) => w.id)
    const issuers = chain.map((w) => w.value.iss)
    // Step 3: the rest of section 4's chain verification (found by the core, refused here, signed).
    if (linkFailure !== undefined) return yield* Effect.fail(linkFailure)
    // Step 4: forward only, every writ unexpired by the executor's own clock (and section 12's
    // root lifetime), as plain code.
    const expired = standing ? undefined : expiryFailure(chain, now, env.rootLifetime.maxSeconds)
    if (expired !== undefined) return yield* Effect.fail(expired)
    // Step 5: root acceptance (section 7.1).
    yield* checkRoot(env, chain)
    // Step 6: this executor is the leaf holder.
    if (leaf.value.hld !== env.did) yield* refuse("wrong_executor")
    // Steps 7 to 10 (and step 11's pending record) are atomic with other calls and with
    // recording a revoke. The running entry is made inside the step, so a revoke recorded after it
    // tells the operation to stop (section 9.1); it is taken back if the step's writes turn out
    // not to be durable (a gate that commits several steps together fails them all, section 9).
    let mine: Deferred.Deferred<void> | undefined
    // Step 7 against the revokes this process could not persist (section 9), before the gate too:
    // they are only ever added to, so one that covers the chain now covers it inside the gate, and
    // a store that cannot even begin a transaction still answers `revoked` for them.
    if (!standing && unsavedCovers(env, chainIds, issuers)) yield* refuse("revoked")
    // Step 10's limits and step 11's pending record, as either path writes them (pure: made
    // once here, used only if steps 7 to 9 pass).
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
    const admitStep = env.gate.admitInOne
    if (admitStep !== undefined) {
      // The gate's store does steps 7 to 10's store work in one step (admission-one.ts).
      const found = yield* admitInOne(env, admitStep, { checked, chain, peer, standing, limits, accepted })
      if (found._tag === "accepted") rememberIssuers(env, issuers)
      return found
    }
    const found = yield* env.gate.admit({ writs: chainIds, issuers }, Effect.gen(function*() {
      // Step 7: forward only, no writ of the chain revoked, by identity or key-wide.
      yield* checkRevoked(env, chainIds, issuers, standing)
      // Step 8: the peer binding first (section 7.6), failing closed; then standing.
      yield* checkPeer(env, peer, K.from)
      if (standing) yield* checkStanding(checked, chain)
      else yield* checkForward(checked, chain)
      // Step 9: replay.
      const entry = yield* env.calls.get(leaf.id, K.id)
      if (Option.isSome(entry)) {
        const e = entry.value
        return e.state === "final"
          ? ({ _tag: "final", tally: e.tally, res: e.res } as Found)
          : ({ _tag: "pending", accepted: e.accepted } as Found)
      }
      // Step 10 with step 9's pending entry and step 11's acc: one atomic store step. A
      // refusal here consumes nothing and leaves no entry (the transaction rolls back).
      yield* env.atomic.transaction(Effect.gen(function*() {
        if (reservation !== null) yield* env.reservations.reserve({ id: reservation, limits, onFailure: "consume" })
        yield* env.calls.insertPending(accepted)
      })).pipe(
        storeStep("writ.admission"),
        Effect.catchTags({
          LimitExhausted: (e) => refuse(e.key.startsWith("writ/count/") ? "count_exhausted" : "total_exhausted"),
          // A request this executor built wrongly is no less a refusal to run (section 9).
          ReservationConflict: () => refuse(STORE_UNAVAILABLE),
          ReservationInvalid: () => refuse(STORE_UNAVAILABLE)
        })
      )
      const stop = yield* Deferred.make<void>()
      state.running.set(checked.id, { forward: !standing, chain: chainIds, issuers, stop })
      mine = stop
      return { _tag: "accepted", accepted, stop } as Found
    }).pipe(
      // Nothing was consumed (the reserve's own transaction rolled back): only the refusal's audit
      // row is written, in this step. A batch that then fails to commit fails the step with a
      // StoreError, refused `store_unavailable` below and audited apart, as before.
      Effect.catchTags({
        SignedRefusal: (e): Effect.Effect<Found | Refused> => inStep(e.reason),
        WritError: (e): Effect.Effect<Found | Refused> => inStep(e.reason)
      })
    )).pipe(
      Effect.tapErrorTag("StoreError", () =>
        Effect.sync(() => {
          if (mine !== undefined && state.running.get(checked.id)?.stop === mine) state.running.delete(checked.id)
        }))
    )
    if (found._tag === "accepted") rememberIssuers(env, issuers)
    return found
  }).pipe(
    Effect.catchTags({
      WritError: (e) => Effect.fail(refusalOf(e)),
      // Section 9: a store that cannot be read or written at steps 7 to 10 means the operation
      // MUST NOT run; refused with the executor's code, recording nothing.
      StoreError: refuseUnavailable
    })
  )
