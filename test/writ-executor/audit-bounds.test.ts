// Issue 11 item 5: audit growth is bounded on the call path. What an unauthenticated request can
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
        const d = yield* openDurable(kind)
        const ex = yield* rig(d.context(), {
          executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service,
          refusalAudit: { burst: 3, perSecond: 1 }
        })
        const read = Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context())
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
  })
}
