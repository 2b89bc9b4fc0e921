// An approval form open while a call waits (src/bind/mcp/keep-alive.ts): the call gets progress
// under the client's token every KEEP_ALIVE until the form ends, none without a token, and none
// after. On the test clock: no real time passes.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { KEEP_ALIVE, WAITING_MESSAGE, whileAsking } from "../../src/bind/mcp/keep-alive.js"

const recorder = (token: string | undefined) => {
  const sent: Array<{ method: string; params: Record<string, unknown> }> = []
  return {
    sent,
    extra: {
      _meta: token === undefined ? {} : { progressToken: token },
      sendNotification: async (n: unknown) => {
        sent.push(n as { method: string; params: Record<string, unknown> })
      }
    }
  }
}

describe("approval forms: progress while a person types", () => {
  it.effect("one progress notification per KEEP_ALIVE under the client's token, until the form ends", () =>
    Effect.gen(function*() {
      const r = recorder("tok")
      const form = yield* Deferred.make<string>()
      const fiber = yield* Effect.fork(whileAsking(r.extra as never, Deferred.await(form)))
      yield* TestClock.adjust(KEEP_ALIVE)
      yield* TestClock.adjust(KEEP_ALIVE)
      yield* TestClock.adjust(KEEP_ALIVE)
      expect(r.sent.map((n) => [n.method, n.params.progressToken, n.params.progress, n.params.message])).toEqual([
        ["notifications/progress", "tok", 1, WAITING_MESSAGE],
        ["notifications/progress", "tok", 2, WAITING_MESSAGE],
        ["notifications/progress", "tok", 3, WAITING_MESSAGE]
      ])
      yield* Deferred.succeed(form, "accepted")
      expect(yield* Fiber.join(fiber)).toBe("accepted")
      yield* TestClock.adjust(KEEP_ALIVE)
      expect(r.sent).toHaveLength(3)
    }))

  it.effect("no progress token: no notification", () =>
    Effect.gen(function*() {
      const r = recorder(undefined)
      const form = yield* Deferred.make<string>()
      const fiber = yield* Effect.fork(whileAsking(r.extra as never, Deferred.await(form)))
      yield* TestClock.adjust(KEEP_ALIVE)
      yield* Deferred.succeed(form, "x")
      yield* Fiber.join(fiber)
      expect(r.sent).toHaveLength(0)
    }))
})
