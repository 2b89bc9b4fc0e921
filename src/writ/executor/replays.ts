// Replays answered from a lookup: a call whose exact bytes were fully verified
// and answered with a final tally is answered again from the table of replay-table.ts, with no
// cryptography and no write beyond the bounded audit (section 9.3), but only when full processing
// would give the same answer. Section 7 puts steps 4 (expiry), 5 (root acceptance), 7 (revocation)
// and the peer binding of step 8 (section 7.6) before step 9 (replay), and those can change for the
// same bytes; so they run again here, in that order, through the functions admission runs
// (live-checks.ts). The first that fails is answered as admission answers it: a signed `failed`
// tally with its reason, published and audited. Everything else about the bytes (steps 1 to 3, 6
// and the rest of 8) is what it was when they were verified; step 9's final entry never changes.
// A store that cannot be read is left to full processing, which answers it (section 9).
import { Effect, Metric, Option } from "effect"
import { isStandingOp } from "../call.js"
import type { CheckedCall } from "../call.js"
import type { CheckedWrit } from "../writ.js"
import type { CallAnswer } from "./answers.js"
import { auditAnswer, auditReplay, countSuppressedReplay, peerNameOf } from "./audit.js"
import { publishRefused } from "./decisions.js"
import { checkExpiry, checkPeer, checkRevoked, checkRoot } from "./live-checks.js"
import { refusalOf } from "./failures.js"
import { entryBytes, type ReplayEntry } from "./replay-table.js"
import type { Peer } from "./services.js"
import { unixSeconds } from "../../kernel/clock.js"
import { type AuditBase, signWith, type StepEnv, unsavedCovers } from "./state.js"
import { expiryFailure } from "../chain.js"
import { identity, signRefusal } from "./tally-sign.js"

/** Lookups of received bytes, by outcome: `answered` (the stored answer), `refused` (a check of
 * live-checks.ts failed), `missed` (not in the table, or a store that could not be read). */
export const replayLookups = Metric.counter("mandate_writ_replay_lookups", {
  description: "replays looked up by their received bytes (section 7 step 9 without cryptography)",
  incremental: true
})
const byOutcome = {
  answered: Metric.increment(Metric.tagged(replayLookups, "outcome", "answered")),
  refused: Metric.increment(Metric.tagged(replayLookups, "outcome", "refused")),
  missed: Metric.increment(Metric.tagged(replayLookups, "outcome", "missed"))
}
const counted = (outcome: keyof typeof byOutcome) => byOutcome[outcome]
const answeredNow = Metric.tagged(replayLookups, "outcome", "answered")

/** Remembers the final answer of a verified call under the key of its received bytes. */
export const rememberReplay = (
  env: StepEnv<never, "replays">,
  key: string,
  checked: CheckedCall,
  chain: ReadonlyArray<CheckedWrit>,
  answer: CallAnswer
): void => {
  if (answer._tag !== "tally" || answer.tally.st === "pending") return
  const entry: ReplayEntry = { checked, chain, answer, signed: identity(answer.tally), bytes: entryBytes(checked, answer), clearAt: -1 }
  env.state.replays.set(key, entry)
}

/** The answer to the bytes under `key` from the table, or None for full processing. */
/** What answering a replay reads: the live checks of section 7 and the replay audit (9.3). */
export type ReplayEnv = StepEnv<
  "auditLog" | "decisions" | "gate" | "peers" | "revokes" | "roots" | "rootLifetime" | "signer",
  "replayAudit" | "replays" | "revocations" | "suppressedReplays" | "unsaved"
>

export const answerReplay = (env: ReplayEnv, key: string, peer: Peer): Effect.Effect<Option.Option<CallAnswer>> =>
  Effect.suspend(() => {
    const entry = env.state.replays.get(key)
    if (entry === undefined) return Effect.as(counted("missed"), Option.none())
    const { checked, chain } = entry
    const K = checked.value
    const leaf = chain[chain.length - 1]
    const standing = isStandingOp(K.op)
    return Effect.gen(function*() {
      const now = yield* unixSeconds
      const base: AuditBase = {
        time: now, kind: "call", identity: checked.id, unparsed: null, principal: K.from, peer: peerNameOf(peer),
        op: K.op, root: chain[0].value.iss, leaf: leaf.id
      }
      return yield* Effect.gen(function*() {
        // Section 7 steps 4, 5, 7 and 8's peer binding, in that order (step 6 holds: same bytes).
        yield* checkExpiry(chain, now, standing).pipe(Effect.mapError(refusalOf))
        yield* checkRoot(env, chain)
        // The count before the store is read: a revoke recorded meanwhile moves it past this.
        const revocations = env.state.revocations
        // Likewise the store's own mark, which any process sharing it moves (admission-gate.ts):
        // read synchronously (SQLite), or by one shared read begun after this request (PostgreSQL).
        const mark = env.gate.revocationSeq !== undefined ? yield* env.gate.revocationSeq : env.gate.revocationMark?.()
        const ids = chain.map((w) => w.id)
        const issuers = chain.map((w) => w.value.iss)
        // Step 7 from the cached view while nothing was revoked since the store last said "not
        // revoked" for this chain (neither here nor by any process sharing the store), and none of
        // this process's unsaved revokes covers it; otherwise from the store.
        const clear = env.gate.revocationSeq !== undefined && mark !== undefined && entry.clearMark === mark &&
          entry.clearAt === revocations && entry.clearAt >= 0 && (standing || !unsavedCovers(env, ids, issuers))
        if (!clear) yield* checkRevoked(env, ids, issuers, standing)
        entry.clearAt = revocations
        entry.clearMark = mark
        yield* checkPeer(env, peer, K.from)
        // Step 9: the final entry, byte for byte.
        yield* auditReplay(env, base, entry.answer, entry.signed)
        yield* counted("answered")
        return Option.some<CallAnswer>(entry.answer)
      }).pipe(
        Effect.catchTags({
          SignedRefusal: (e) =>
            Effect.gen(function*() {
              yield* publishRefused(env, { principal: K.from, subject: checked.id, op: K.op }, e.reason)
              const tally = yield* signWith(env)(signRefusal(checked.id, leaf.id, K.op, now, e.reason))
              const answer: CallAnswer = { _tag: "tally", tally, res: Option.none() }
              yield* counted("refused")
              return Option.some(yield* auditAnswer(env, base, answer))
            }),
          StoreError: () => Effect.as(counted("missed"), Option.none())
        })
      )
    })
  })

/**
 * The same answer as `answerReplay`, as a plain function with no Effect, for the common case only:
 * the bytes are in the table, section 7 steps 4, 5, 7 and 8's peer binding all pass, and the
 * replay's audit row is one the peer's allowance suppresses (so nothing is written: it is counted,
 * as auditReplay counts it). Anything else returns undefined and the caller takes `answerReplay`
 * (through the executor's `call`), which checks again in section 7's order and answers, refuses or
 * writes the row. Step 7 is the store's answer: it is taken as still "not revoked" only while no
 * revoke was recorded by this process since the store last said so (ExecutorState.revocations)
 * nor by another process sharing the store (the gate's `revocationMark`, one synchronous read);
 * a gate that learns of other processes' revokes only late (`revokedElsewhere`) has no plain path. `nowMillis` is the Clock's time.
 */
export const replayNow = (env: ReplayEnv, key: string, peer: Peer, nowMillis: number): CallAnswer | undefined => {
  const entry = env.state.replays.get(key)
  if (entry === undefined || env.gate.revokedElsewhere !== undefined) return undefined
  const { checked, chain } = entry
  const now = Math.floor(nowMillis / 1000)
  // Step 4 (forward calls), by the executor's clock and section 12's root lifetime.
  if (!isStandingOp(checked.value.op) && expiryFailure(chain, now, env.rootLifetime.maxSeconds) !== undefined) return undefined
  // Step 5.
  if (env.roots.acceptsNow === undefined || !env.roots.acceptsNow(chain[0].value.iss)) return undefined
  // Step 7: no revoke recorded since the store said none covers the chain, and none unsaved.
  if (entry.clearAt !== env.state.revocations || entry.clearAt < 0) return undefined
  // ...nor by another process sharing the store, as its revocation mark tells (admission-gate.ts).
  const mark = env.gate.revocationMark
  if (mark !== undefined && (entry.clearMark === undefined || mark() !== entry.clearMark)) return undefined
  if (!isStandingOp(checked.value.op) && unsavedCovers(env, chain.map((w) => w.id), chain.map((w) => w.value.iss))) return undefined
  // Step 8's peer binding: no peer speaks for anyone but itself; a peer is checked by the Effect path.
  if (peer._tag !== "none") return undefined
  // Step 9's audit row (section 9.3): written by the Effect path when the allowance has one left.
  const peerName = peerNameOf(peer)
  if (env.state.replayAudit.wouldTake(peerName === null ? "(none)" : `peer:${peerName}`)) return undefined
  countSuppressedReplay(env, peerName)
  answeredNow.unsafeUpdate(1, [])
  return entry.answer
}
