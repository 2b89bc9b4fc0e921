// The executor beyond what scenarios can express (section 14.1 runs one call at a time): unsigned
// errors, races on replay, count and total, revoke atomicity, reversal serialization, write
// failures (section 9), peers that cannot be named (7.6), forwarding and relayed acks (9.1, 9.4),
// sub-tallies and `used` (7.5), the audit record (9.3). Every test runs on both store Layers.
import { Deferred, Effect, Fiber, Option } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { Received } from "../../src/writ/verify.js"
import { canonicalText } from "../../src/writ/sign.js"
import { callAnswerJson, type CallAnswer, type RevokeAnswer } from "../../src/writ/executor/executor.js"
import { APPLICATION_ERROR, cancelOnStop, Peer, STORE_UNAVAILABLE, type Outcome } from "../../src/writ/executor/services.js"
import { AuditLog, CallStore, RevokeStore, TallyStore } from "../../src/writ/executor/stores.js"
import { hashOf, signOutcome } from "../../src/writ/executor/tally-sign.js"
import { Signer } from "../../src/kernel/services.js"
import { act, call, EXP, gate, identity, key, ok, revoke, rig, scripted, settable, T0, writ } from "./fixtures.js"
import { injected, kinds, openDurable, patch } from "./stores-support.js"

const A = key(1)
const B = key(2)
const E = key(3) // the executor
const C = key(4) // a sub-executor E delegates to
const S = key(5) // a stranger

/**
 * The executor's clock at T0 (the writs expire at EXP). These tests race real fibers against each
 * other, so sleeping is on the real clock, not the TestClock.
 */
const atT0 = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.withClock(self, settable().clock)
const tallyOf = (a: CallAnswer): JsonObject => {
  if (a._tag !== "tally") throw new Error(`expected a tally, got error ${a.reason}`)
  return a.tally
}
const codeOf = (a: CallAnswer): string | null => {
  const t = tallyOf(a)
  return t.err === null ? null : ((t.err as JsonObject).code as string)
}
const recorded = (a: RevokeAnswer) => {
  if (a._tag !== "recorded") throw new Error(`expected a recorded revoke, got ${a._tag}`)
  return a
}

/** Root A -> B -> leaf held by the executor E. */
const chainTo = (bnd: JsonObject, leafBnd: JsonObject = bnd) => {
  const w1 = writ(A, B, bnd)
  const w2 = writ(B, E, leafBnd, w1)
  return [w1, w2] as const
}

for (const kind of kinds) {
  describe(`executor on the ${kind} stores`, () => {
    it.scoped("answers section 7 steps 1 and 2 with unsigned errors and records nothing", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const good = call(B, [w1, w2], "travel/x")
        // Step 1: not JSON, duplicate member, wrong type.
        expect(callAnswerJson(yield* ex.call(new Received("{")))).toEqual({ error: "noncanonical" })
        expect(callAnswerJson(yield* ex.call(new Received('{"v":1,"v":1}')))).toEqual({ error: "noncanonical" })
        expect(callAnswerJson(yield* ex.call({ ...good, typ: "writ" }))).toEqual({ error: "wrong_type" })
        // Step 2: a tampered call fails its signature.
        expect(callAnswerJson(yield* ex.call({ ...good, op: "travel/y" }))).toEqual({ error: "bad_signature" })
        expect(app.log.length).toBe(0)
        const calls = Effect.provide(Effect.flatMap(CallStore, (s) => s.pending), d.context())
        expect(yield* calls).toEqual([])
        // One audit entry per call received, whatever the outcome (section 9.3).
        const audit = yield* Effect.provide(Effect.flatMap(AuditLog, (a) => a.read), d.context())
        expect(audit.map((e) => [e.outcome, e.reason])).toEqual([
          ["error", "noncanonical"],
          ["error", "noncanonical"],
          ["error", "wrong_type"],
          ["error", "bad_signature"]
        ])
        yield* d.close
      })))

    it.scoped("lets exactly one of many distinct calls take a count of 1 (steps 9 and 10 atomic)", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok({ n: 1 })))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel"), uses: { t: "count", v: 1 } })
        const answers = yield* Effect.forEach(
          Array.from({ length: 24 }, () => call(B, [w1, w2], "travel/x")),
          (c) => ex.call(c),
          { concurrency: "unbounded" }
        )
        const codes = answers.map(codeOf)
        expect(codes.filter((c) => c === null).length).toBe(1)
        expect(codes.filter((c) => c === "count_exhausted").length).toBe(23)
        expect(app.log.length).toBe(1)
        // One audit entry per call, naming the tally signed for it, accepted or refused (9.3).
        const audit = yield* Effect.provide(Effect.flatMap(AuditLog, (a) => a.read), d.context())
        expect(audit.length).toBe(24)
        expect(audit.map((e) => e.signed).sort()).toEqual(answers.map((a) => identity(tallyOf(a))).sort())
        expect(audit.filter((e) => e.outcome === "ok").map((e) => [e.root, e.leaf, e.principal, e.peer]))
          .toEqual([[A.did, identity(w2), B.did, null]])
        const used = yield* Effect.provide(Effect.flatMap(Reservations, (r) => r.used(`writ/count/${identity(w1)}`)), d.context())
        expect(used).toBe(1n)
        yield* d.close
      })))

    it.scoped("runs the operation once for many copies of one signed call, every final answer byte-identical", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok({ charge: "ch_1" })))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = call(B, [w1, w2], "travel/charge")
        const answers = yield* Effect.forEach(Array.from({ length: 24 }), () => ex.call(c), { concurrency: "unbounded" })
        expect(app.log.length).toBe(1)
        const finals = answers.map(tallyOf).filter((t) => t.st !== "pending")
        expect(finals.length).toBeGreaterThan(0)
        const first = canonicalText(callAnswerJson(answers.find((a) => tallyOf(a).st !== "pending")!))
        for (const a of answers) {
          if (tallyOf(a).st === "pending") expect(tallyOf(a).acc).toBe(T0)
          else expect(canonicalText(callAnswerJson(a))).toBe(first)
        }
        // A later replay is the stored answer, byte for byte.
        expect(canonicalText(callAnswerJson(yield* ex.call(c)))).toBe(first)
        yield* d.close
      })))

    it.scoped("never lets racing calls take a total past its value", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("pay"), amount: { t: "total", v: 1000 } })
        const answers = yield* Effect.forEach(
          Array.from({ length: 12 }, () => call(B, [w1, w2], "pay/x", { amount: 300 })),
          (c) => ex.call(c),
          { concurrency: "unbounded" }
        )
        expect(answers.map(codeOf).filter((c) => c === null).length).toBe(3)
        expect(answers.map(codeOf).filter((c) => c === "total_exhausted").length).toBe(9)
        const used = yield* Effect.provide(
          Effect.flatMap(Reservations, (r) => r.used(`writ/total/${identity(w2)}/amount`)),
          d.context()
        )
        expect(used).toBe(900n)
        yield* d.close
      })))

    it.scoped("refuses with a signed implementation code when steps 9 and 10 cannot be written, consuming nothing", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        let failing = true
        const stores = patch(d.context(), CallStore, (s) => ({
          ...s,
          insertPending: (a) => (failing ? injected("writ.callStore.insertPending") : s.insertPending(a))
        }))
        const ex = yield* rig(stores, { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel"), uses: { t: "count", v: 1 } })
        const c = call(B, [w1, w2], "travel/x")
        const refused = tallyOf(yield* ex.call(c))
        expect(refused.st).toBe("failed")
        expect(refused.err).toEqual({ code: STORE_UNAVAILABLE })
        expect(app.log.length).toBe(0)
        // The count reserved in the same step was rolled back: no half-state.
        const used = yield* Effect.provide(Effect.flatMap(Reservations, (r) => r.used(`writ/count/${identity(w1)}`)), d.context())
        expect(used).toBe(0n)
        // Nothing was recorded, so the retry is checked afresh and runs.
        failing = false
        expect(codeOf(yield* ex.call(c))).toBe(null)
        expect(app.log.length).toBe(1)
        yield* d.close
      })))

    it.scoped("answers a pending tally when the final tally cannot be persisted, and resolves it after a restart", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok({ done: true })))
        const stores = patch(d.context(), TallyStore, (s) => ({ ...s, put: () => injected("writ.tallyStore.put") }))
        const ex = yield* rig(stores, { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel"), uses: { t: "count", v: 2 } })
        const c = call(B, [w1, w2], "travel/x")
        const first = tallyOf(yield* ex.call(c))
        expect(first.st).toBe("pending")
        expect(first.err).toEqual({ code: "pending" })
        // The call store's finalize rolled back with the tally store: still pending.
        expect((yield* ex.call(c))._tag).toBe("tally")
        expect(tallyOf(yield* ex.call(c)).st).toBe("pending")
        // Restart on the same durable store with working writes: the record resolves.
        const reopened = yield* d.reopen
        const ex2 = yield* rig(reopened, { executorKey: E, accept: [A], app: app.service })
        expect(yield* ex2.recover).toBe(1)
        const resolved = tallyOf(yield* ex2.call(c))
        expect(resolved.st).toBe("failed")
        expect(resolved.err).toEqual({ code: "unknown_outcome" })
        expect(resolved.acc).toBe(T0)
        // The use stays consumed.
        const used = yield* Effect.provide(Effect.flatMap(Reservations, (r) => r.used(`writ/count/${identity(w1)}`)), reopened)
        expect(used).toBe(1n)
        expect(app.log.length).toBe(1)
        yield* d.close
      })))

    it.scoped("answers an unsaved revoke with an error, honors it while running, and records it on retry", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        let failing = true
        const stores = patch(d.context(), RevokeStore, (s) => ({
          ...s,
          record: (r) => (failing ? injected("writ.revokeStore.record") : s.record(r))
        }))
        const ex = yield* rig(stores, { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const rv = revoke(A, [])
        const answer = yield* ex.revoke(rv)
        expect(answer).toEqual({ _tag: "unsaved", code: STORE_UNAVAILABLE })
        // Honored for as long as the process runs.
        expect(codeOf(yield* ex.call(call(B, [w1, w2], "travel/x")))).toBe("revoked")
        expect(app.log.length).toBe(0)
        // A restart loses it (it was never written), which is why it was answered as an error.
        const ex2 = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        expect(codeOf(yield* ex2.call(call(B, [w1, w2], "travel/x")))).toBe(null)
        // The sender retries; now it is recorded, with an ack, and survives restart.
        failing = false
        const again = recorded(yield* ex.revoke(rv))
        expect(again.ack.revoke).toBe(identity(rv))
        const reopened = yield* d.reopen
        const ex3 = yield* rig(reopened, { executorKey: E, accept: [A], app: app.service })
        expect(codeOf(yield* ex3.call(call(B, [w1, w2], "travel/x")))).toBe("revoked")
        yield* d.close
      })))

    it.scoped("makes recording a revoke atomic with accepting forward calls: every accepted call is held or open", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.as(Effect.sleep("2 millis"), ok()))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const calls = Array.from({ length: 30 }, () => call(B, [w1, w2], "travel/x"))
        const fiber = yield* Effect.fork(Effect.forEach(calls, (c) => ex.call(c), { concurrency: 6 }))
        yield* Effect.sleep("10 millis")
        const rv = recorded(yield* ex.revoke(revoke(A, [w1])))
        const answers = yield* Fiber.join(fiber)
        const body = rv.res as { held: Array<{ call: string; tally: string }>; open: Array<string> }
        const accounted = new Set([...body.held.map((h) => h.call), ...body.open])
        for (let i = 0; i < calls.length; i++) {
          const t = tallyOf(answers[i])
          if (codeOf(answers[i]) === "revoked" && t.acc === T0 && !accounted.has(identity(calls[i]))) continue
          // Accepted: the ack accounts for it.
          expect(accounted.has(identity(calls[i]))).toBe(true)
        }
        // The open ones were answered pending, in call-identity order.
        expect(rv.tallies.map((t) => t.call)).toEqual(body.open)
        expect([...body.open]).toEqual([...body.open].sort())
        yield* d.close
      })))

    it.scoped("tells in-flight forward work under the revoked writ to stop, and leaves other work alone", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const seen = new Map<string, boolean>()
        const release = yield* Deferred.make<void>()
        const app = scripted((op) =>
          Effect.gen(function*() {
            yield* Effect.raceFirst(op.stopSignal, Deferred.await(release))
            const stopped = yield* op.stopRequested
            seen.set(op.callId, stopped)
            return stopped ? ({ st: "canceled", code: "revoked" } as Outcome) : ok()
          }))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [x1, x2] = chainTo({ act: act("travel") })
        const [y1, y2] = chainTo({ act: act("travel") })
        const cx = call(B, [x1, x2], "travel/x")
        const cy = call(B, [y1, y2], "travel/y")
        const fx = yield* Effect.fork(ex.call(cx))
        const fy = yield* Effect.fork(ex.call(cy))
        while (app.log.length < 2) yield* Effect.sleep("1 millis")
        const rv = recorded(yield* ex.revoke(revoke(A, [y1])))
        expect(rv.tallies.map((t) => [t.call, t.st])).toEqual([[identity(cy), "pending"]])
        const ty = tallyOf(yield* Fiber.join(fy))
        expect([ty.st, ty.err]).toEqual(["canceled", { code: "revoked" }])
        yield* Deferred.succeed(release, undefined)
        expect(tallyOf(yield* Fiber.join(fx)).st).toBe("ok")
        expect(seen.get(identity(cx))).toBe(false)
        yield* d.close
      })))

    it.scoped("interrupts work written with cancelOnStop when a revoke tells it to stop", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        let interrupted = false
        const app = scripted((op) =>
          cancelOnStop(op, Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true))))))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const f = yield* Effect.fork(ex.call(call(B, [w1, w2], "travel/x")))
        while (app.log.length < 1) yield* Effect.sleep("1 millis")
        recorded(yield* ex.revoke(revoke(B, [w1, w2])))
        const t = tallyOf(yield* Fiber.join(f))
        expect([t.st, t.err, interrupted]).toEqual(["canceled", { code: "revoked" }, true])
        yield* d.close
      })))

    it.scoped("stops work that races its stop signal even when the caller runs the call uninterruptibly", () =>
      atT0(Effect.gen(function*() {
        // A transport may run its handler uninterruptibly (as @effect/platform's HTTP server does);
        // the accepted work's own fiber must still be able to interrupt the loser of its race.
        const d = yield* openDurable(kind)
        const app = scripted((op) =>
          Effect.gen(function*() {
            yield* Effect.raceFirst(op.stopSignal, Effect.never)
            return { st: "canceled", code: "revoked" } as Outcome
          }))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const f = yield* Effect.fork(Effect.uninterruptible(ex.call(call(B, [w1, w2], "travel/x"))))
        while (app.log.length < 1) yield* Effect.sleep("1 millis")
        recorded(yield* ex.revoke(revoke(B, [w1, w2])))
        const answer = yield* Fiber.join(f).pipe(Effect.timeout("20 seconds"))
        expect(tallyOf(answer).st).toBe("canceled")
        yield* d.close
      })))

    it.scoped("runs one reversal at a time per tally; a second undo waits and performs nothing", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const g = yield* gate()
        let reversals = 0
        const app = scripted((op) =>
          op.kind === "forward"
            ? Effect.succeed({ st: "ok", res: { charge: "ch_1" }, rev: T0 + 3600 } as Outcome)
            : Effect.tap(Effect.sync(() => reversals++), () => Effect.void).pipe(Effect.zipRight(g.run)))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const charge = tallyOf(yield* ex.call(call(B, [w1, w2], "travel/charge")))
        const u1 = yield* Effect.fork(ex.call(call(A, [w1, w2], "sys/undo", { tally: charge })))
        while (reversals < 1) yield* Effect.sleep("1 millis")
        const u2 = yield* Effect.fork(ex.call(call(B, [w1, w2], "sys/undo", { tally: charge })))
        yield* Effect.sleep("20 millis")
        expect(reversals).toBe(1)
        yield* g.release({ st: "ok", res: { refund: "rf_1" } })
        const a1 = yield* Fiber.join(u1)
        const a2 = yield* Fiber.join(u2)
        expect(reversals).toBe(1)
        expect(tallyOf(a1).st).toBe("ok")
        expect(tallyOf(a2).st).toBe("ok")
        expect(a1._tag === "tally" && a1.res).toEqual(Option.some({ refund: "rf_1" }))
        expect(a2._tag === "tally" && a2.res).toEqual(Option.some({ refund: "rf_1" }))
        yield* d.close
      })))

    it.scoped("limits a writ with several count bounds by the smallest, incrementing its entry once per call", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo(
          { act: act("travel") },
          { act: act("travel"), a: { t: "count", v: 3 }, b: { t: "count", v: 2 } }
        )
        const codes = []
        for (let i = 0; i < 3; i++) codes.push(codeOf(yield* ex.call(call(B, [w1, w2], "travel/x"))))
        expect(codes).toEqual([null, null, "count_exhausted"])
        const used = yield* Effect.provide(Effect.flatMap(Reservations, (r) => r.used(`writ/count/${identity(w2)}`)), d.context())
        expect(used).toBe(2n)
        yield* d.close
      })))

    it.scoped("answers count_exhausted before total_exhausted when a call exhausts both (section 7 step 10)", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        // The root's total comes first in chain order; the leaf's count must still be named first.
        const [w1, w2] = chainTo(
          { act: act("pay"), amount: { t: "total", v: 100 } },
          { act: act("pay"), amount: { t: "total", v: 100 }, uses: { t: "count", v: 1 } }
        )
        expect(codeOf(yield* ex.call(call(B, [w1, w2], "pay/x", { amount: 100 })))).toBe(null)
        expect(codeOf(yield* ex.call(call(B, [w1, w2], "pay/x", { amount: 1 })))).toBe("count_exhausted")
        // The refusal consumed nothing.
        const used = (k: string) => Effect.provide(Effect.flatMap(Reservations, (r) => r.used(k)), d.context())
        expect(yield* used(`writ/count/${identity(w2)}`)).toBe(1n)
        expect(yield* used(`writ/total/${identity(w1)}/amount`)).toBe(100n)
        expect(app.log.length).toBe(1)
      })))

    it.scoped("answers a revoke received again with a new ack that is true of its own rcv", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const release = yield* Deferred.make<void>()
        const app = scripted(() => Effect.as(Deferred.await(release), ok()))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = call(B, [w1, w2], "travel/x")
        const running = yield* Effect.fork(ex.call(c))
        while (app.log.length < 1) yield* Effect.sleep("1 millis")
        // A key-wide revoke of the root issuer covers the running call: open, answered pending.
        const rv = revoke(A, [])
        const first = recorded(yield* ex.revoke(rv))
        expect(first.res).toEqual({ held: [], open: [identity(c)] })
        expect(first.tallies.map((t) => t.st)).toEqual(["pending"])
        yield* Deferred.succeed(release, undefined)
        const done = tallyOf(yield* Fiber.join(running))
        // The operation did not stop (it ignored the signal), so it reports what it did.
        expect(done.st).toBe("ok")
        const second = recorded(yield* ex.revoke(rv))
        expect(second.res).toEqual({ held: [{ call: identity(c), tally: identity(done) }], open: [] })
        expect(second.tallies).toEqual([])
        expect(second.ack.revoke).toBe(identity(rv))
        expect(identity(second.ack)).not.toBe(identity(first.ack))
        yield* d.close
      })))

    it.scoped("resolves a pending record to the outcome the application determines after a restart", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const never = scripted(() => Effect.never)
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: never.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const c = call(B, [w1, w2], "travel/x")
        const lost = yield* Effect.fork(ex.call(c))
        while (never.log.length < 1) yield* Effect.sleep("1 millis")
        yield* Fiber.interrupt(lost)
        const reopened = yield* d.reopen
        const ex2 = yield* rig(reopened, {
          executorKey: E, accept: [A],
          app: { perform: () => Effect.succeed(ok()), recover: () => Effect.succeed(Option.some(ok({ found: true }))) }
        })
        expect(yield* ex2.recover).toBe(1)
        const t = tallyOf(yield* ex2.call(c))
        expect([t.st, t.acc, t.out]).toEqual(["ok", T0, hashOf({ found: true })])
        expect(yield* ex2.recover).toBe(0)
        yield* d.close
      })))

    it.scoped("signs a failed tally with an implementation code when the application dies or returns garbage", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted((op) =>
          op.op === "travel/die"
            ? Effect.die(new Error("boom"))
            : Effect.succeed({ st: "ok", res: { n: Number.NaN } } as Outcome))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        for (const op of ["travel/die", "travel/garbage"]) {
          const t = tallyOf(yield* ex.call(call(B, [w1, w2], op)))
          expect([t.st, t.err]).toEqual(["failed", { code: APPLICATION_ERROR }])
        }
        yield* d.close
      })))

    it.scoped("keeps issued writs and sub-tallies of a call lost in a crash, in its resolved tally", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const [w1, w2] = chainTo({ act: act("travel"), amount: { t: "max", v: 60000 } })
        let child: JsonObject | null = null
        let sub: JsonObject | null = null
        const app = scripted((op) =>
          Effect.gen(function*() {
            child = writ(E, C, { act: act("travel"), amount: { t: "max", v: 60000 } }, w2)
            yield* op.recordIssued(child).pipe(Effect.orDie)
            sub = yield* signOutcome({
              call: identity(call(E, [w1, w2, child], "travel/x", {})), writ: identity(child), op: "travel/x", acc: T0,
              st: "ok", code: null, res: Option.none(), used: { amount: 700 }, rev: null, sub: [], wrt: []
            }).pipe(Effect.provideService(Signer, Signer.make(C.seed)))
            yield* op.recordSub(sub).pipe(Effect.orDie)
            return yield* Effect.never
          }))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const c = call(B, [w1, w2], "travel/book", { amount: 100 })
        const lost = yield* Effect.fork(ex.call(c))
        while (sub === null) yield* Effect.sleep("1 millis")
        yield* Fiber.interrupt(lost)
        const reopened = yield* d.reopen
        const ex2 = yield* rig(reopened, { executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service })
        expect(yield* ex2.recover).toBe(1)
        const t = tallyOf(yield* ex2.call(c))
        expect([t.st, t.err, t.wrt, t.sub, t.used]).toEqual(["failed", { code: "unknown_outcome" }, [child], [sub], { amount: 700 }])
        // A revoke of the root is forwarded to the holder of the writ issued before the crash.
        const forwardedTo: Array<string> = []
        const ex3 = yield* rig(reopened, {
          executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service,
          forwarder: { forward: (_r, holder) => Effect.as(Effect.sync(() => forwardedTo.push(holder)), Option.none()) }
        })
        const answer = recorded(yield* ex3.revoke(revoke(A, [w1])))
        expect(forwardedTo).toEqual([C.did])
        expect(answer.res).toEqual({ held: [{ call: identity(c), tally: identity(t) }], open: [] })
        // One audit entry for the revoke, naming the ack.
        const audit = yield* Effect.provide(Effect.flatMap(AuditLog, (a) => a.read), reopened)
        expect(audit.filter((e) => e.kind === "revoke").map((e) => [e.outcome, e.signed])).toEqual([["recorded", identity(answer.ack)]])
        yield* d.close
      })))

    it.scoped("reverses a tally once when many undos for it race", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        let reversals = 0
        const app = scripted((op) =>
          op.kind === "forward"
            ? Effect.succeed({ st: "ok", res: { charge: "ch_1" }, rev: T0 + 3600 } as Outcome)
            : Effect.as(Effect.zipRight(Effect.sync(() => reversals++), Effect.sleep("1 millis")), ok({ refund: "rf" })))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const charge = tallyOf(yield* ex.call(call(B, [w1, w2], "travel/charge")))
        const answers = yield* Effect.forEach(
          Array.from({ length: 16 }, (_, i) => call(i % 2 === 0 ? A : B, [w1, w2], "sys/undo", { tally: charge })),
          (c) => ex.call(c),
          { concurrency: "unbounded" }
        )
        expect(reversals).toBe(1)
        for (const a of answers) {
          expect(tallyOf(a).st).toBe("ok")
          expect(a._tag === "tally" && a.res).toEqual(Option.some({ refund: "rf" }))
        }
        yield* d.close
      })))

    it.scoped("keeps standing calls after expiry fail-closed on everything but expiry and revocation", () => {
      const clock = settable()
      return Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted((op) =>
          Effect.succeed(op.kind === "forward" ? ({ st: "ok", res: { c: 1 }, rev: EXP + 7200 } as Outcome) : ok({ r: 1 })))
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        const [w1, w2] = chainTo({ act: act("travel") })
        const charge = tallyOf(yield* ex.call(call(B, [w1, w2], "travel/charge")))
        // After every writ has expired.
        clock.set(EXP + 60)
        const undo = (from: typeof A, chain: ReadonlyArray<JsonObject>, args: JsonObject, op = "sys/undo") =>
          ex.call(call(from, chain, op, args))
        // Tampered: unsigned (section 7 step 2).
        const tampered = { ...call(A, [w1, w2], "sys/undo", { tally: charge }), op: "sys/tallies" }
        expect(callAnswerJson(yield* ex.call(tampered))).toEqual({ error: "bad_signature" })
        // Chain broken (step 3), rooted elsewhere (step 5), misaddressed (step 6).
        const stray = writ(B, E, { act: act("travel") }, writ(A, S, { act: act("travel") }))
        expect(codeOf(yield* undo(A, [w1, stray], { tally: charge }))).toBe("chain_broken")
        const s1 = writ(S, B, { act: act("travel") })
        expect(codeOf(yield* undo(S, [s1, writ(B, E, { act: act("travel") }, s1)], { tally: charge }))).toBe("root_not_accepted")
        expect(codeOf(yield* undo(A, [w1, writ(B, C, { act: act("travel") }, w1)], { tally: charge }))).toBe("wrong_executor")
        // No standing (step 8), undefined operation (step 8).
        expect(codeOf(yield* undo(S, [w1, w2], { tally: charge }))).toBe("no_standing")
        expect(codeOf(yield* undo(A, [w1, w2], {}, "sys/other"))).toBe("forbidden_op")
        // The operation's own checks (8.1): another writ's tally, and past rev.until.
        const other = writ(B, E, { act: act("travel") }, w1)
        expect(codeOf(yield* undo(A, [w1, other], { tally: charge }))).toBe("tally_mismatch")
        clock.set(EXP + 7200)
        expect(codeOf(yield* undo(A, [w1, w2], { tally: charge }))).toBe("not_reversible")
        // Before rev.until it is honored, and a forward call stays refused.
        clock.set(EXP + 100)
        const done = yield* undo(A, [w1, w2], { tally: charge })
        expect([tallyOf(done).st, tallyOf(done).rev, tallyOf(done).acc]).toEqual(["ok", null, EXP + 100])
        expect(codeOf(yield* ex.call(call(B, [w1, w2], "travel/charge")))).toBe("expired")
        yield* d.close
      }).pipe(Effect.withClock(clock.clock))
    })

    it.scoped("fails a peer the transport authenticated but cannot name, closed (section 7.6)", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const app = scripted(() => Effect.succeed(ok()))
        const ex = yield* rig(d.context(), {
          executorKey: E, accept: [A], app: app.service, peers: { "spiffe://b": [B.did] }
        })
        const [w1, w2] = chainTo({ act: act("travel") })
        expect(codeOf(yield* ex.call(call(B, [w1, w2], "travel/x"), Peer.unnamed))).toBe("peer_mismatch")
        expect(codeOf(yield* ex.call(call(B, [w1, w2], "travel/x"), Peer.named("spiffe://s")))).toBe("peer_mismatch")
        expect(codeOf(yield* ex.call(call(B, [w1, w2], "travel/x"), Peer.named("spiffe://b")))).toBe(null)
        expect(app.log.length).toBe(1)
        yield* d.close
      })))

    it.scoped("records issued writs and verified sub-tallies, covers their used, forwards revokes and relays acks", () =>
      atT0(Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const [w1, w2] = chainTo({ act: act("travel"), amount: { t: "max", v: 60000 } })
        let child: JsonObject | null = null
        const app = scripted((op) =>
          Effect.gen(function*() {
            // E delegates the charge to C (section 7.5), persisting the writ before sending it.
            child = writ(E, C, { act: act("travel/charge"), amount: { t: "max", v: 50000 } }, w2)
            yield* op.recordIssued(child).pipe(Effect.orDie)
            const subCall = call(E, [w1, w2, child], "travel/charge", { amount: 50000 })
            const sub = yield* signOutcome({
              call: identity(subCall), writ: identity(child), op: "travel/charge", acc: T0, st: "ok", code: null,
              res: Option.some({ charge: "c" }), used: { amount: 50000 }, rev: null, sub: [], wrt: []
            }).pipe(Effect.provideService(Signer, Signer.make(C.seed)))
            expect(yield* op.recordSub(sub).pipe(Effect.orDie)).toBe(true)
            // A tally signed by someone other than the child's holder proves nothing and is left out.
            const forged = yield* signOutcome({
              call: identity(subCall), writ: identity(child), op: "travel/charge", acc: T0, st: "ok", code: null,
              res: Option.none(), used: { amount: 1 }, rev: null, sub: [], wrt: []
            }).pipe(Effect.provideService(Signer, Signer.make(S.seed)))
            expect(yield* op.recordSub(forged).pipe(Effect.orDie)).toBe(false)
            return { st: "ok", res: { booked: true }, used: { amount: 10 } } as Outcome
          }))
        const forwarded: Array<[JsonObject, string]> = []
        const body = { held: [], open: [] }
        const ackC = C.sign("ack", { v: 1, typ: "ack", revoke: "", iss: C.did, rcv: T0, out: hashOf(body) })
        const ex = yield* rig(d.context(), {
          executorKey: E, accept: [A], app: app.service,
          forwarder: {
            forward: (rv, holder) => {
              forwarded.push([rv, holder])
              const ack = C.sign("ack", { v: 1, typ: "ack", revoke: identity(rv), iss: C.did, rcv: T0 + 1, out: hashOf(body) })
              // A relayed ack that does not verify for this revoke is not kept.
              return Effect.succeed(Option.some({ ack, res: body as Json, fwd: [{ ack: ackC, res: body as Json }] }))
            }
          }
        })
        const t = tallyOf(yield* ex.call(call(B, [w1, w2], "travel/book", { amount: 60000 })))
        expect(t.wrt).toEqual([child])
        expect((t.sub as Array<JsonObject>).length).toBe(1)
        // used covers the sub-tally's 50000 even though the application reported 10 (section 6).
        expect(t.used).toEqual({ amount: 50000 })
        const rv = revoke(A, [w1])
        const answer = recorded(yield* ex.revoke(rv))
        expect(forwarded.map(([r, h]) => [identity(r), h])).toEqual([[identity(rv), C.did]])
        expect(answer.fwd.length).toBe(1)
        expect(answer.fwd[0].ack.iss).toBe(C.did)
        // Kept: a later answer to the same revoke relays it again.
        expect(recorded(yield* ex.revoke(rv)).fwd.length).toBe(1)
        yield* d.close
      })))
  })
}

describe("executor identity", () => {
  it.scoped("signs as the did:key of its Signer", () =>
    atT0(Effect.gen(function*() {
      const d = yield* openDurable("memory")
      const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service })
      expect(ex.did).toBe(E.did)
    })))
})

void S
