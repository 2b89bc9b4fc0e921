// Replays answered from the lookup (src/writ/executor/replays.ts): the exact bytes
// of a call already verified and answered final are answered from the table, with no cryptography,
// but only as full processing would answer them. Section 7 checks expiry (step 4), root acceptance
// (5), revocation (7) and the peer binding (8, section 7.6) before replay (9), so each of those,
// changed after the first answer, refuses the replay with its own reason, through the lookup; a
// standing call skips steps 4 and 7 and is still answered. Replays are audited on a bounded path
// (section 9.3): the rows past the allowance are counted in one summary row.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { verifyTallyObject } from "../../src/writ/tally.js"
import { Received } from "../../src/writ/verify.js"
import { type CallAnswer, callAnswerJson } from "../../src/writ/executor/executor.js"
import { replayLookups } from "../../src/writ/executor/replays.js"
import { AUDIT_SUPPRESSED, Peer } from "../../src/writ/executor/services.js"
import { AuditLog } from "../../src/writ/executor/stores.js"
import { act, call, EXP, identity, key, ok, revoke, rig, scripted, settable, T0, writ } from "./fixtures.js"
import { kinds, openDurable } from "./stores-support.js"

const A = key(1)
const B = key(2)
const E = key(3)

const bytesOf = (o: JsonObject) => new Received(new TextEncoder().encode(encodeCanonical(o, "utf16")))
const text = (a: CallAnswer) => encodeCanonical(callAnswerJson(a), "utf16")
const lookups = (outcome: "answered" | "refused" | "missed") =>
  Effect.map(Metric.value(Metric.tagged(replayLookups, "outcome", outcome)), (s) => s.count)
/** Runs `self` and returns how many lookups of each outcome it made. */
const counting = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = [yield* lookups("answered"), yield* lookups("refused"), yield* lookups("missed")]
    const a = yield* self
    const after = [yield* lookups("answered"), yield* lookups("refused"), yield* lookups("missed")]
    return { a, answered: after[0] - before[0], refused: after[1] - before[1], missed: after[2] - before[2] }
  })

/** A refusal through the lookup: signed by the executor, `failed` with `code`, for the call. */
const refusedThroughLookup = (c: JsonObject, code: string, answer: { a: CallAnswer; refused: number }) =>
  Effect.gen(function*() {
    expect(answer.refused).toBe(1)
    if (answer.a._tag !== "tally") throw new Error("expected a tally")
    const t = answer.a.tally
    expect([t.st, t.err, t.call]).toEqual(["failed", { code }, identity(c)])
    yield* verifyTallyObject(t, E.did)
  })

const chainTo = (bnd: JsonObject) => {
  const w1 = writ(A, B, bnd)
  return [w1, writ(B, E, bnd, w1)] as const
}

for (const kind of kinds) {
  describe(`replays answered from the lookup, ${kind} stores`, () => {
    it.scoped("the same bytes again: the stored answer byte for byte, the operation run once, audit rows bounded", () => {
      const clock = settable()
      return Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok({ charge: "ch_1" })))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service, replayAudit: { burst: 2, perSecond: 1 } })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = bytesOf(call(B, [w1, w2], "travel/x"))
        const first = yield* counting(ex.call(c))
        expect(first.missed).toBe(1)
        for (let i = 0; i < 5; i++) {
          const again = yield* counting(ex.call(c))
          expect([again.answered, again.refused, again.missed]).toEqual([1, 0, 0])
          expect(text(again.a)).toBe(text(first.a))
        }
        expect(app.log.length).toBe(1)
        const read = Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context())
        expect((yield* read).map((e) => e.outcome)).toEqual(["ok", "replay", "replay"])
        // Once the allowance refills, one row stands for the replays not recorded one by one.
        clock.set(T0 + 60)
        yield* ex.call(c)
        const rows = yield* read
        expect(rows.filter((r) => r.outcome === "suppressed").map((r) => [r.reason, r.unparsed]))
          .toEqual([[AUDIT_SUPPRESSED, "3 replays not recorded one by one"]])
        expect(rows[rows.length - 1].outcome).toBe("replay")
      }).pipe(Effect.withClock(clock.clock))
    })

    it.scoped("a replay under a chain revoked since is refused `revoked`; a standing call's replay is still answered", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const forward = call(B, [w1, w2], "travel/x")
        const standing = call(A, [w1, w2], "sys/tallies", { writ: identity(w1) })
        yield* ex.call(bytesOf(forward))
        const listed = yield* ex.call(bytesOf(standing))
        expect(yield* ex.revoke(revoke(A, [w1]))).toMatchObject({ _tag: "recorded" })
        yield* refusedThroughLookup(forward, "revoked", yield* counting(ex.call(bytesOf(forward))))
        // Section 8: a standing call skips step 7; its replay is its stored answer.
        const again = yield* counting(ex.call(bytesOf(standing)))
        expect(again.answered).toBe(1)
        expect(text(again.a)).toBe(text(listed))
        expect(app.log.length).toBe(1)
      }).pipe(Effect.withClock(settable().clock)))

    it.scoped("a key-wide revoke of an issuer on the chain refuses the replay `revoked`", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = call(B, [w1, w2], "travel/x")
        yield* ex.call(bytesOf(c))
        expect(yield* ex.revoke(revoke(B, []))).toMatchObject({ _tag: "recorded" })
        yield* refusedThroughLookup(c, "revoked", yield* counting(ex.call(bytesOf(c))))
      }).pipe(Effect.withClock(settable().clock)))

    it.scoped("a replay at or after the chain's `exp` is refused `expired` (forward), answered (standing)", () => {
      const clock = settable()
      return Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = call(B, [w1, w2], "travel/x")
        const standing = call(B, [w1, w2], "sys/tallies", { writ: identity(w2) })
        yield* ex.call(bytesOf(c))
        const listed = yield* ex.call(bytesOf(standing))
        clock.set(EXP)
        yield* refusedThroughLookup(c, "expired", yield* counting(ex.call(bytesOf(c))))
        const again = yield* counting(ex.call(bytesOf(standing)))
        expect([again.answered, text(again.a)]).toEqual([1, text(listed)])
        // Expiry is checked before revocation (section 7 step 4 before step 7).
        yield* ex.revoke(revoke(A, [w1]))
        yield* refusedThroughLookup(c, "expired", yield* counting(ex.call(bytesOf(c))))
      }).pipe(Effect.withClock(clock.clock))
    })

    it.scoped("a replay under a root no longer accepted is refused `root_not_accepted`", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const accepted = [A]
        const ex = yield* rig(d.context(), { executorKey: E, accept: accepted, app: scripted(() => Effect.succeed(ok())).service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = call(B, [w1, w2], "travel/x")
        const first = yield* ex.call(bytesOf(c))
        accepted.pop()
        yield* refusedThroughLookup(c, "root_not_accepted", yield* counting(ex.call(bytesOf(c))))
        accepted.push(A)
        expect(text((yield* counting(ex.call(bytesOf(c)))).a)).toBe(text(first))
      }).pipe(Effect.withClock(settable().clock)))

    it.scoped("a replay delivered by a peer that does not speak for `from` is refused `peer_mismatch`", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const ex = yield* rig(d.context(), {
          executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service,
          peers: { "spiffe://b": [B.did], "spiffe://other": [A.did] }
        })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = call(B, [w1, w2], "travel/x")
        const first = yield* ex.call(bytesOf(c), Peer.named("spiffe://b"))
        // Captured bytes presented over another connection (section 7.6), or one that names no peer.
        yield* refusedThroughLookup(c, "peer_mismatch", yield* counting(ex.call(bytesOf(c), Peer.named("spiffe://other"))))
        yield* refusedThroughLookup(c, "peer_mismatch", yield* counting(ex.call(bytesOf(c), Peer.unnamed)))
        const bound = yield* counting(ex.call(bytesOf(c), Peer.named("spiffe://b")))
        expect([bound.answered, text(bound.a)]).toEqual([1, text(first)])
      }).pipe(Effect.withClock(settable().clock)))

    it.scoped("only exact bytes are looked up: the same call as a value, or refused first, goes through full processing", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service })
        const [w1, w2] = chainTo({ act: act("travel"), uses: { t: "count", v: 1 } })
        const c = call(B, [w1, w2], "travel/x")
        const first = yield* ex.call(c)
        const asValue = yield* counting(ex.call(c))
        expect([asValue.answered, asValue.refused, asValue.missed, text(asValue.a)]).toEqual([0, 0, 0, text(first)])
        // A refused call is not remembered: its retry is checked afresh (section 9).
        const other = call(B, [w1, w2], "travel/y")
        yield* ex.call(bytesOf(other))
        const retried = yield* counting(ex.call(bytesOf(other)))
        expect([retried.answered, retried.missed]).toEqual([0, 1])
        // The full path's replay of the bytes remembers them: the next copy is a lookup.
        yield* ex.call(bytesOf(c))
        expect((yield* counting(ex.call(bytesOf(c)))).answered).toBe(1)
      }).pipe(Effect.withClock(settable().clock)))
  })
}
