// The request/response correlator (src/kernel/correlator.ts): answers routed by id, strays
// dropped, every pending request failed on close and every later one at once, and an entry removed
// however its wait ends.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Option } from "effect"
import * as Correlator from "../../src/kernel/correlator.js"

describe("Correlator", () => {
  it.effect("routes each answer to its id, whatever the order", () =>
    Effect.gen(function*() {
      const c = Correlator.make<string, number, string>()
      const a = yield* Effect.fork(c.call("a", undefined, Effect.void))
      const b = yield* Effect.fork(c.call("b", undefined, Effect.void))
      yield* Effect.yieldNow()
      expect(yield* c.complete("b", 2)).toBe(true)
      expect(yield* c.complete("a", 1)).toBe(true)
      expect([yield* Fiber.join(a), yield* Fiber.join(b)]).toEqual([1, 2])
      expect(yield* c.entries).toEqual([])
    }))

  it.effect("drops an answer for no pending request (stray or repeated)", () =>
    Effect.gen(function*() {
      const c = Correlator.make<string, number, string>()
      expect(yield* c.complete("nobody", 1)).toBe(false)
      const a = yield* Effect.fork(c.call("a", undefined, Effect.void))
      yield* Effect.yieldNow()
      expect(yield* c.complete("a", 1)).toBe(true)
      expect(yield* c.complete("a", 9)).toBe(false)
      expect(yield* Fiber.join(a)).toBe(1)
    }))

  it.effect("keeps each request's meta for the reader", () =>
    Effect.gen(function*() {
      const c = Correlator.make<number, string, string, string>()
      yield* Effect.fork(c.call(7, "seven", Effect.void))
      yield* Effect.yieldNow()
      expect(yield* c.pending(7)).toEqual(Option.some("seven"))
      expect(yield* c.pending(8)).toEqual(Option.none())
      expect(yield* c.entries).toEqual([[7, "seven"]])
    }))

  it.effect("close fails every pending request, then every later one before it is sent", () =>
    Effect.gen(function*() {
      const c = Correlator.make<string, number, string>()
      const a = yield* Effect.fork(Effect.either(c.call("a", undefined, Effect.void)))
      const b = yield* Effect.fork(Effect.either(c.call("b", undefined, Effect.void)))
      yield* Effect.yieldNow()
      yield* c.close("gone")
      yield* c.close("second close keeps the first error")
      expect(yield* Fiber.join(a)).toEqual(Either.left("gone"))
      expect(yield* Fiber.join(b)).toEqual(Either.left("gone"))
      let sent = false
      const later = yield* Effect.either(c.call("c", undefined, Effect.sync(() => { sent = true })))
      expect(later).toEqual(Either.left("gone"))
      expect(sent).toBe(false)
      expect(yield* c.entries).toEqual([])
    }))

  it.effect("a request that fails to send or is interrupted (timeout) leaves no entry", () =>
    Effect.gen(function*() {
      const c = Correlator.make<string, number, string>()
      const sendFailed = yield* Effect.either(c.call("a", undefined, Effect.fail("write failed")))
      expect(sendFailed).toEqual(Either.left("write failed"))
      const waiting = yield* Effect.fork(c.call("b", undefined, Effect.void))
      yield* Effect.yieldNow()
      expect((yield* c.entries).length).toBe(1)
      yield* Fiber.interrupt(waiting)
      expect(yield* c.entries).toEqual([])
      expect(yield* c.complete("b", 1)).toBe(false)
    }))
})
