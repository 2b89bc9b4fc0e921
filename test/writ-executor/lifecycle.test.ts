// Accepted work has an owner, the executor's scope. A caller that goes away (a
// dropped connection) does not end accepted work; closing the executor awaits it, and work still
// running when the grace period ends is interrupted and resolved by recovery (section 9).
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option, Scope } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import type { CallAnswer } from "../../src/writ/executor/executor.js"
import { CallStore } from "../../src/writ/executor/stores.js"
import { act, call, gate, identity, key, ok, rig, scripted, settable, writ } from "./fixtures.js"
import { kinds, openDurable } from "./stores-support.js"

const A = key(1)
const B = key(2)
const E = key(3)

const tallyOf = (a: CallAnswer): JsonObject => {
  if (a._tag !== "tally") throw new Error(`expected a tally, got error ${a.reason}`)
  return a.tally
}

const chain = () => {
  const w1 = writ(A, B, { act: act("travel") })
  return [w1, writ(B, E, { act: act("travel") }, w1)] as const
}

for (const kind of kinds) {
  describe(`the executor's scope owns accepted work (${kind} stores)`, () => {
    it.scoped("accepted work survives a dropped connection and reaches its final tally", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const g = yield* gate()
        const entered = yield* Deferred.make<void>()
        const app = scripted(() => Effect.zipRight(Deferred.succeed(entered, undefined), g.run))
        const scope = yield* Scope.make()
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service, shutdownGrace: "10 seconds" }).pipe(Scope.extend(scope))
        const [w1, w2] = chain()
        const c = call(B, [w1, w2], "travel/x")
        const caller = yield* Effect.fork(ex.call(c))
        yield* Deferred.await(entered)
        // The connection drops: the caller's fiber is interrupted.
        yield* Fiber.interrupt(caller)
        yield* g.release(ok({ booked: true }))
        // The work finished on its own fiber (closing the executor waits for it): the call store
        // holds its final tally, which a retry is answered with (section 7 step 9).
        yield* Scope.close(scope, Exit.void)
        const entry = yield* Effect.provide(Effect.flatMap(CallStore, (s) => s.get(identity(w2), c.id as string)), d.context())
        expect(Option.isSome(entry) && entry.value.state === "final" && entry.value.tally.st).toBe("ok")
        const ex2 = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
        expect(tallyOf(yield* ex2.call(c)).st).toBe("ok")
        expect(app.log.length).toBe(1)
      }).pipe(Effect.withClock(settable().clock)))

    it.scoped("closing the executor awaits accepted work before the store closes", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const g = yield* gate()
        const entered = yield* Deferred.make<void>()
        const app = scripted(() => Effect.zipRight(Deferred.succeed(entered, undefined), g.run))
        const scope = yield* Scope.make()
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service, shutdownGrace: "10 seconds" }).pipe(Scope.extend(scope))
        const [w1, w2] = chain()
        const c = call(B, [w1, w2], "travel/x")
        const caller = yield* Effect.fork(ex.call(c))
        yield* Deferred.await(entered)
        const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
        // Closing waits for the work: still open until the operation returns (given time to finish
        // if it did not wait).
        yield* Effect.sleep("30 millis")
        expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)
        yield* g.release(ok())
        yield* Fiber.join(closing)
        expect(tallyOf(yield* Fiber.join(caller)).st).toBe("ok")
        const entry = yield* Effect.provide(Effect.flatMap(CallStore, (s) => s.get(identity(w2), c.id as string)), d.context())
        expect(Option.isSome(entry) && entry.value.state).toBe("final")
      }).pipe(Effect.withClock(settable().clock)))

    it.scoped("work still running after the grace period is interrupted and resolved by recovery", () =>
      Effect.gen(function*() {
        const d = yield* openDurable(kind)
        const entered = yield* Deferred.make<void>()
        let interrupted = false
        const app = scripted(() =>
          Effect.zipRight(
            Deferred.succeed(entered, undefined),
            Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true))))
          )
        )
        const scope = yield* Scope.make()
        const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service, shutdownGrace: "20 millis" })
          .pipe(Scope.extend(scope))
        const [w1, w2] = chain()
        const c = call(B, [w1, w2], "travel/x")
        yield* Effect.fork(ex.call(c))
        yield* Deferred.await(entered)
        yield* Scope.close(scope, Exit.void)
        expect(interrupted).toBe(true)
        // The record stayed pending; the next executor resolves it (section 9).
        const reopened = yield* d.reopen
        const ex2 = yield* rig(reopened, { executorKey: E, accept: [A], app: app.service })
        expect(yield* ex2.recover).toBe(1)
        expect(tallyOf(yield* ex2.call(c)).err).toEqual({ code: "unknown_outcome" })
      }).pipe(Effect.withClock(settable().clock)))
  })
}
