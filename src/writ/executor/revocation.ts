// Section 9.1 (revocation) and 9.4 (acks): a valid revoke is recorded atomically with steps 7 to
// 11 of every forward call, stops the running operations it covers, is answered with the pending
// tallies of the calls still open and a signed ack, and is forwarded to the holders of the writs
// this executor issued under the revoked writ, whose acks are relayed when they verify.
import { Deferred, Effect, Option, String as Str } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import { ackSpec } from "../ack.js"
import { verifyRevoke } from "../revoke.js"
import { checkObject, checkSignature, type ObjectInput } from "../verify.js"
import type { GateKeys } from "./admission-gate.js"
import type { RevokeAnswer } from "./answers.js"
import { audit, auditRefusal, auditUnidentified, peerNameOf } from "./audit.js"
import { storeStep, UnsignedError } from "./failures.js"
import { type AckWithBody, Peer, RATE_LIMITED, type RevokeIntake, STORE_UNAVAILABLE } from "./services.js"
import { unixSeconds } from "../../kernel/clock.js"
import { signWith, type StepEnv } from "./state.js"
import { hashOf, identity, signAck, signPending } from "./tally-sign.js"

/** Section 9.4 step 4: the body is an object whose `held` and `open` are arrays. */
const isAckBody = (u: Json): boolean =>
  typeof u === "object" && u !== null && !Array.isArray(u) &&
  Array.isArray((u as JsonObject).held) && Array.isArray((u as JsonObject).open)

/** Keeps each forwarded ack that passes section 9.4 steps 2 to 4 for this revoke; drops any other. */
const keepAck = (env: StepEnv<"acks">, revokeId: string, a: AckWithBody) =>
  Effect.gen(function*() {
    const checked = yield* checkObject(ackSpec, a.ack)
    yield* checkSignature(ackSpec, checked, checked.value.iss)
    if (checked.value.revoke !== revokeId || checked.value.out !== hashOf(a.res) || !isAckBody(a.res)) return
    yield* env.acks.keep({ revoke: revokeId, ack: checked.id, object: a.ack, res: a.res }).pipe(
      Effect.catchTag("StoreError", (e) => Effect.logWarning(`relayed ack not kept: ${e.message}`))
    )
  }).pipe(Effect.catchTag("WritError", () => Effect.void))

/** Runs `stop` signals of every forward operation the revoke covers (section 9.1). */
const stopCovered = (env: StepEnv<never, "running">, covers: (chain: ReadonlyArray<string>, issuers: ReadonlyArray<string>) => boolean) =>
  Effect.forEach(
    [...env.state.running.values()].filter((run) => run.forward && covers(run.chain, run.issuers)),
    (run) => Deferred.succeed(run.stop, undefined),
    { discard: true }
  )

/** Stops every forward operation under a revoke with these keys, recorded by another process (9.1). */
export const stopUnder = (env: StepEnv<never, "running" | "revocations">, keys: GateKeys) =>
  Effect.zipRight(
    Effect.sync(() => void env.state.revocations++),
    stopCovered(env, (chain, issuers) => keys.writs.some((w) => chain.includes(w)) || keys.issuers.some((i) => issuers.includes(i)))
  )

/**
 * Section 12: whether the signer of a verified revoke is a known principal, a root this executor
 * accepts or an issuer of a chain rooted at one (the revoke's own chain, verified at step 4, or an
 * accepted call's). A fresh key can sign a valid revoke of itself; it cannot become known.
 */
const isKnown = (env: StepEnv<"roots", "knownIssuers">, iss: string, root: string | null) =>
  Effect.gen(function*() {
    if (env.state.knownIssuers.has(iss)) return true
    if (yield* env.roots.accepts(iss)) return true
    return root !== null && (yield* env.roots.accepts(root))
  })

/** What section 9.1 reads and changes. */
export type RevokeEnv = StepEnv<
  "acks" | "atomic" | "auditLog" | "calls" | "delegations" | "did" | "forwarder" | "gate" | "revokes" | "roots" | "signer" | "tallies",
  "knownIssuers" | "refusalAudit" | "revocations" | "running" | "suppressed" | "unsaved"
>

export const revoke = (
  env: RevokeEnv,
  input: ObjectInput,
  peer: Peer = Peer.none,
  intake?: RevokeIntake
): Effect.Effect<RevokeAnswer> => {
  const peerName = peerNameOf(peer)
  return Effect.gen(function*() {
    const { state } = env
    const sign = signWith(env)
    const now = yield* unixSeconds
    // Section 9.1 steps 1 to 4, in order; an invalid revoke is not recorded and changes nothing.
    const verified = yield* verifyRevoke(input).pipe(
      Effect.catchTag("WritError", (e) =>
        Effect.zipRight(auditUnidentified(env, now, "revoke", peerName, e.reason), Effect.fail(new UnsignedError({ reason: e.reason }))))
    )
    const r = verified.revoke
    const { writ, iss } = r.value
    yield* Effect.annotateCurrentSpan({ revoke: r.id, writ })
    const rchain = verified.chain
    const covers = (chain: ReadonlyArray<string>, issuers: ReadonlyArray<string>) =>
      writ === "*" ? issuers.includes(iss) : chain.includes(writ)
    const baseAudit = {
      time: now, kind: "revoke" as const, identity: r.id, unparsed: null, principal: iss, peer: peerName,
      root: rchain.length > 0 ? rchain[0].value.iss : null, leaf: writ, op: null
    }

    // Section 12: the sender's allowance is charged only now, after the revoke verified, on the
    // allowance of its signer's kind, so revokes that do not verify or come from fresh keys
    // cannot starve a known principal's.
    if (intake !== undefined) {
      const allowed = yield* intake({ iss, known: yield* isKnown(env, iss, baseAudit.root) })
      if (!allowed.ok) {
        yield* auditRefusal(env, { ...baseAudit, outcome: "error", reason: RATE_LIMITED, signed: null })
        return { _tag: "limited", code: RATE_LIMITED, retryAfter: allowed.retryAfter } as RevokeAnswer
      }
    }

    // Recording the revoke is atomic with steps 7 to 11 of every forward call (section 7).
    const keys = writ === "*" ? { writs: [], issuers: [iss] } : { writs: [writ], issuers: [] }
    const { open, ack, body } = yield* env.gate.revoke(keys, Effect.gen(function*() {
      const stored = yield* env.atomic.transaction(Effect.gen(function*() {
        yield* env.revokes.record({
          revoke: r.id,
          writ,
          iss,
          exp: rchain.length > 0 ? rchain[rchain.length - 1].value.exp : null,
          rcv: now
        })
        // Replays answered by plain code stop trusting the store's last "not revoked" (replays.ts).
        state.revocations++
        // The ack's body, computed at the moment of recording (section 9.4).
        const held = writ === "*" ? yield* env.tallies.underIssuer(iss) : yield* env.tallies.underWrit(writ)
        const pending = yield* env.calls.pending
        return { held, pending }
      })).pipe(storeStep("writ.revoke"))
      const open = stored.pending
        .filter((p) => !p.standing && covers(p.chain, p.issuers))
        .sort((x, y) => Str.Order(x.call, y.call))
      const held = [...stored.held]
        .sort((x, y) => Str.Order(x.call, y.call) || Str.Order(x.tally, y.tally))
        .map((h) => ({ call: h.call, tally: h.tally }))
      const body: JsonObject = { held, open: open.map((p) => p.call) }
      const ack = yield* sign(signAck(r.id, env.did, now, body))
      // Tell every forward operation under the revoked writ to stop (section 9.1).
      yield* stopCovered(env, covers)
      return { open, ack, body }
    })).pipe(
      // And again once the step is over (committed or not): a replay whose store read began
      // before the commit is not taken as "not revoked" (replays.ts).
      Effect.ensuring(Effect.sync(() => void state.revocations++)),
      // Section 9: not persisted (its own write failed, or the transaction it joined did not
      // commit), so answered as an error, but honored for as long as we run.
      Effect.tapError(() => Effect.zipRight(Effect.sync(() => state.unsaved.push({ writ, iss })), stopCovered(env, covers))),
      Effect.tapError((e) =>
        Effect.zipRight(
          Effect.logWarning(`revoke not persisted (${e.operation}): ${e.message}`),
          audit(env, { ...baseAudit, outcome: "unsaved", reason: STORE_UNAVAILABLE, signed: null })
        )
      )
    )
    // Every call still open is answered with a pending tally; its final tally follows when the
    // operation returns.
    const answered = yield* Effect.forEach(open, (p) => sign(signPending(p.call, p.leaf, p.op, p.acc)))

    // Forward to the holders of the writs this executor issued under the revoked writ, and relay
    // the acks that verify (section 9.1, 9.4).
    const issued = yield* env.delegations.issuedUnder(writ, iss).pipe(Effect.orElseSucceed(() => []))
    const holders = [...new Set(issued.map((w) => w.hld))].filter((h) => h !== "")
    yield* Effect.forEach(holders, (holder) =>
      Effect.gen(function*() {
        const got = yield* env.forwarder.forward(r.json, holder)
        if (Option.isNone(got)) return
        yield* keepAck(env, r.id, { ack: got.value.ack, res: got.value.res })
        for (const f of got.value.fwd) yield* keepAck(env, r.id, f)
      }), { discard: true, concurrency: "unbounded" })
    const kept = yield* env.acks.forRevoke(r.id).pipe(Effect.orElseSucceed(() => []))

    yield* audit(env, { ...baseAudit, outcome: "recorded", reason: null, signed: identity(ack) })
    return {
      _tag: "recorded",
      tallies: answered,
      ack,
      res: body,
      fwd: kept.map((k) => ({ ack: k.object, res: k.res }))
    } as RevokeAnswer
  }).pipe(
    Effect.catchTags({
      UnsignedError: (e) => Effect.succeed<RevokeAnswer>({ _tag: "invalid", reason: e.reason }),
      StoreError: () => Effect.succeed<RevokeAnswer>({ _tag: "unsaved", code: STORE_UNAVAILABLE })
    })
  )
}
