// Audit growth is bounded on the call path. What an unauthenticated request can
// make the executor store is bounded: unverified fields are cut to a prefix and a hash, and the
// audit rows for refusals of requests that did not authenticate are limited per peer (section 9.3,
// as revoke intake is), the refusals past the limit counted in one summary row.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Received } from "../../src/writ/verify.js"
import { AUDIT_SUPPRESSED, Peer } from "../../src/writ/executor/services.js"
import { AuditLog } from "../../src/writ/executor/stores.js"
import { act, call, key, ok, revoke, rig, scripted, settable, T0, writ } from "./fixtures.js"
import { kinds, openDurable } from "./stores-support.js"

const A = key(1)
const B = key(2)
const E = key(3)

const chain = () => {
  const w1 = writ(A, B, { act: act("travel") })
  return [w1, writ(B, E, { act: act("travel") }, w1)] as const
}

/** An executor accepting root A whose audit allows 3 unauthenticated refusals per peer, then 1 a
 * second; with a reader of its audit rows. */
const allowanceRig = (kind: (typeof kinds)[number]) =>
  Effect.gen(function*() {
    const d = yield* openDurable(kind)
    const ex = yield* rig(d.context(), {
      executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service,
      refusalAudit: { burst: 3, perSecond: 1 }
    })
    return { ex, read: Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context()) }
  })

for (const kind of kinds) {
  describe(`audit bounds on the ${kind} stores`, () => {
    it.scoped("an unauthenticated call with a 64 KB op is not stored whole", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service })
        const [w1, w2] = chain()
        const big = "travel/" + "x".repeat(60_000)
        // Signed by B, then the op replaced: it fails its signature (section 7 step 2).
        const forged = { ...call(B, [w1, w2], "travel/x"), op: big }
        expect(yield* ex.call(forged)).toEqual({ _tag: "error", reason: "bad_signature" })
        const [entry] = yield* Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context())
        expect(entry.reason).toBe("bad_signature")
        expect(entry.op!.startsWith("travel/xxx")).toBe(true)
        expect(entry.op!.length).toBeLessThan(200)
        expect(JSON.stringify(entry).length).toBeLessThan(1000)
      }).pipe(Effect.withClock(settable().clock)))

    it.scoped("audit rows for unauthenticated refusals are limited per peer, the rest counted in one row", () => {
      const clock = settable()
      return Effect.gen(function*() {
        const { ex, read } = yield* allowanceRig(kind)
        for (let i = 0; i < 10; i++) yield* ex.call(new Received("{"))
        for (let i = 0; i < 5; i++) yield* ex.revoke(new Received("{"))
        expect((yield* read).length).toBe(3)
        // Another peer has its own allowance; authenticated work is always audited.
        yield* ex.call(new Received("{"), Peer.named("spiffe://other"))
        const [w1, w2] = chain()
        yield* ex.call(call(B, [w1, w2], "travel/x"))
        yield* ex.revoke(revoke(A, []))
        expect((yield* read).length).toBe(6)
        // Once the allowance refills, one row stands for the 12 refusals not recorded.
        clock.set(T0 + 60)
        yield* ex.call(new Received("{"))
        const rows = yield* read
        const summary = rows.filter((r) => r.outcome === "suppressed")
        expect(summary.map((r) => [r.reason, r.peer, r.unparsed])).toEqual([
          [AUDIT_SUPPRESSED, null, "12 refusals not recorded one by one"]
        ])
        expect(rows.length).toBe(8)
      }).pipe(Effect.withClock(clock.clock))
    })

    it.scoped("refusals of chains rooted at keys the executor does not accept are on the allowance; a rooted client is served and audited beside them", () => {
      const clock = settable()
      return Effect.gen(function*() {
        const { ex, read } = yield* allowanceRig(kind)
        // The attacker makes its own root key Z, as anyone can: every call is well signed and
        // answered with a signed `root_not_accepted` tally (section 7 step 5), one each.
        const Z = key(9)
        const z1 = writ(Z, B, { act: act("travel") })
        const z2 = writ(B, E, { act: act("travel") }, z1)
        for (let i = 0; i < 20; i++) {
          const answer = yield* ex.call(call(B, [z1, z2], "travel/x"))
          expect(answer._tag).toBe("tally")
          if (answer._tag === "tally") expect(answer.tally.err).toEqual({ code: "root_not_accepted" })
        }
        // Expired under a self-made root (step 4, before step 5 could refuse it): the same allowance.
        const old = writ(Z, B, { act: act("travel") }, null, T0 - 10)
        const expired = yield* ex.call(call(B, [old, writ(B, E, { act: act("travel") }, old, T0 - 10)], "travel/x"))
        expect(expired._tag === "tally" ? expired.tally.err : expired).toEqual({ code: "expired" })
        expect((yield* read).length).toBe(3)
        // The well-formed client beside it: admitted, run, and audited, every time.
        const [w1, w2] = chain()
        for (let i = 0; i < 3; i++) {
          const answer = yield* ex.call(call(B, [w1, w2], "travel/x"))
          expect(answer._tag === "tally" ? answer.tally.st : answer._tag).toBe("ok")
        }
        // A refusal under an accepted root is the executor's business and always audited.
        const wrong = writ(A, B, { act: act("travel") })
        yield* ex.call(call(B, [wrong, writ(B, key(4), { act: act("travel") }, wrong)], "travel/x"))
        const rows = yield* read
        expect(rows.length).toBe(7)
        expect(rows.filter((r) => r.reason === "root_not_accepted").length).toBe(3)
        expect(rows.filter((r) => r.reason === "wrong_executor").length).toBe(1)
        // Once the allowance refills, one row stands for the 18 refusals not recorded.
        clock.set(T0 + 60)
        yield* ex.call(call(B, [z1, z2], "travel/x"))
        expect((yield* read).filter((r) => r.outcome === "suppressed").map((r) => r.unparsed)).toEqual([
          "18 refusals not recorded one by one"
        ])
      }).pipe(Effect.withClock(clock.clock))
    })
  })
}
