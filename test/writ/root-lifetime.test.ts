// Section 12 ("Time"): a root whose `exp` is more than 24 hours ahead is refused
// with reason `expired` by default, by the verifier (section 7 step 4 as `verify_call` runs it) and
// by the executor; the limit is configurable (RootLifetime) and can be lifted.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DEFAULT_ROOT_LIFETIME_SECONDS, RootLifetime } from "../../src/writ/chain.js"
import { verifyCall } from "../../src/writ/call.js"
import { callAnswerJson } from "../../src/writ/executor/executor.js"
import { act, call, key, ok, rig, scripted, settable, T0, writ } from "../writ-executor/fixtures.js"
import { openDurable } from "../writ-executor/stores-support.js"
import { EXP, world } from "./fixtures.js"

const DAY = 86_400
const w = world()
const verifyAt = (now: number) => Effect.map(verifyCall(w.call.call.json, { now }), () => "accepted")
const reason = <A>(e: Effect.Effect<A, { reason: string; path?: string }>) =>
  Effect.match(e, { onFailure: (f) => `${f.reason} at ${f.path}`, onSuccess: () => "accepted" })

describe("section 12: a root more than 24 hours ahead", () => {
  it("is 24 hours by default", () => expect(DEFAULT_ROOT_LIFETIME_SECONDS).toBe(DAY))

  it.effect("the verifier refuses it with expired at the root's exp, and accepts a root exactly 24 hours ahead", () =>
    Effect.gen(function* () {
      expect(yield* reason(verifyAt(EXP - DAY - 1))).toBe("expired at chain[0].exp")
      expect(yield* reason(verifyAt(EXP - DAY))).toBe("accepted")
      // Without a time there is no expiry check, so no lifetime check either (section 14's vectors).
      expect(yield* reason(Effect.map(verifyCall(w.call.call.json), () => "accepted"))).toBe("accepted")
    }))

  it.effect("is configurable, and null lifts it", () =>
    Effect.gen(function* () {
      expect(yield* reason(verifyAt(EXP - 30 * DAY).pipe(Effect.provide(RootLifetime.layer(null))))).toBe("accepted")
      expect(yield* reason(verifyAt(EXP - 3601).pipe(Effect.provide(RootLifetime.layer(3600))))).toBe("expired at chain[0].exp")
      expect(yield* reason(verifyAt(EXP - 3600).pipe(Effect.provide(RootLifetime.layer(3600))))).toBe("accepted")
    }))

  it("the executor signs a refusal with code expired for a forward call under such a root, unless built to accept it", () =>
    Effect.runPromise(Effect.gen(function* () {
      const [A, B, E] = [key(1), key(2), key(3)]
      const w1 = writ(A, B, { act: act("travel") }, null, T0 + 2 * DAY)
      const w2 = writ(B, E, { act: act("travel") }, w1, T0 + 2 * DAY - 10)
      const answer = (lifetime: Layer.Layer<never>) =>
        Effect.gen(function* () {
          const d = yield* openDurable("memory")
          const app = scripted(() => Effect.succeed(ok()))
          const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service }).pipe(Effect.provide(lifetime))
          return { json: callAnswerJson(yield* ex.call(call(B, [w1, w2], "travel/go"))), performed: app.log.length }
        })
      const refused = yield* answer(Layer.empty)
      expect((refused.json as { tally: { st: string; err: { code: string } } }).tally.err.code).toBe("expired")
      expect(refused.performed).toBe(0)
      const accepted = yield* answer(RootLifetime.layer(3 * DAY))
      expect((accepted.json as { tally: { st: string } }).tally.st).toBe("ok")
      expect(accepted.performed).toBe(1)
    }).pipe(Effect.scoped, Effect.withClock(settable().clock))))
})
