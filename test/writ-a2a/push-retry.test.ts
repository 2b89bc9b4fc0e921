// Push notification delivery retries (src/bind/writ-a2a/push.ts), on the TestClock: a failed
// attempt is retried on PUSH_RETRY (after 1, 2, 4, 8 seconds; five attempts at most), each attempt
// reads the config again (deleted: no more requests; replaced: the new URL, checked against the
// allow list again), and every delivery's outcome is recorded. A scripted webhook stands in for HTTP.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, TestClock } from "effect"
import { A2aPush, A2aWebhook, parseAllowList, PUSH_ATTEMPTS, WebhookError } from "../../src/bind/writ-a2a/push.js"
import type { Task } from "../../src/bind/writ-a2a/schema.js"

const task: Task = { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_COMPLETED" } }

/** A webhook that fails its first `failures` requests; every request's URL and Clock time, kept. */
const scripted = (failures: number) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<{ readonly url: string; readonly at: number }>>([])
    const layer = Layer.succeed(A2aWebhook, {
      post: (url) =>
        Effect.gen(function*() {
          const at = yield* TestClock.currentTimeMillis
          const n = (yield* Ref.updateAndGet(seen, (s) => [...s, { url, at }])).length
          return n <= failures ? yield* Effect.fail(new WebhookError({ message: `${url}: status 503` })) : 204
        })
    })
    return { seen, layer }
  })

const withPush = <A, E>(failures: number, f: (push: A2aPush["Type"], seen: Ref.Ref<ReadonlyArray<{ readonly url: string; readonly at: number }>>) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const { seen, layer } = yield* scripted(failures)
    const allow = yield* parseAllowList(["hooks.example"])
    return yield* Effect.flatMap(A2aPush, (push) => f(push, seen)).pipe(Effect.provide(A2aPush.layer(allow).pipe(Layer.provide(layer))))
  })

/** Lets the delivery fibers run up to the next sleep. */
const settle = Effect.yieldNow().pipe(Effect.repeatN(20))

describe("push notification delivery retries (TestClock)", () => {
  it.scoped("retries a failed attempt after 1, 2 seconds, and records the delivery", () =>
    withPush(2, (push, seen) =>
      Effect.gen(function*() {
        yield* push.set({ taskId: "t-1", id: "p", url: "https://hooks.example/a2a" })
        yield* push.notify(task)
        yield* settle
        expect((yield* Ref.get(seen)).length).toBe(1)
        expect(yield* push.deliveries).toEqual([])
        yield* TestClock.adjust("999 millis")
        yield* settle
        expect((yield* Ref.get(seen)).length).toBe(1)
        yield* TestClock.adjust("1 millis")
        yield* settle
        expect((yield* Ref.get(seen)).length).toBe(2)
        yield* TestClock.adjust("2 seconds")
        yield* settle
        expect((yield* Ref.get(seen)).map((s) => s.at)).toEqual([0, 1000, 3000])
        expect(yield* push.deliveries).toEqual([
          { taskId: "t-1", configId: "p", url: "https://hooks.example/a2a", state: "TASK_STATE_COMPLETED", outcome: "delivered", attempts: 3, at: 3000 }
        ])
      })))

  it.scoped("gives up after five attempts in all, and records the failure with its last error", () =>
    withPush(100, (push, seen) =>
      Effect.gen(function*() {
        yield* push.set({ taskId: "t-1", id: "p", url: "https://hooks.example/a2a" })
        yield* push.notify(task)
        for (let i = 0; i < 10; i++) {
          yield* settle
          yield* TestClock.adjust("10 seconds")
        }
        yield* settle
        expect((yield* Ref.get(seen)).map((s) => s.at)).toEqual([0, 1000, 3000, 7000, 15000])
        expect((yield* Ref.get(seen)).length).toBe(PUSH_ATTEMPTS)
        const [record] = yield* push.deliveries
        expect(record).toMatchObject({ outcome: "failed", attempts: PUSH_ATTEMPTS, error: "https://hooks.example/a2a: status 503" })
      })))

  it.scoped("reads the config again before each attempt: deleted, no more requests (dropped); replaced, the new URL", () =>
    withPush(100, (push, seen) =>
      Effect.gen(function*() {
        yield* push.set({ taskId: "t-1", id: "gone", url: "https://hooks.example/gone" })
        yield* push.set({ taskId: "t-1", id: "moved", url: "https://hooks.example/old" })
        yield* push.notify(task)
        yield* settle
        yield* push.remove("t-1", "gone")
        yield* push.set({ taskId: "t-1", id: "moved", url: "https://hooks.example/new" })
        // A URL off the allow list is refused when set: the config keeps its checked URL.
        const off = yield* Effect.either(push.set({ taskId: "t-1", id: "moved", url: "https://elsewhere.example/x" }))
        expect(off._tag === "Left" && off.left.reason).toBe("mandate/a2a_push_url_refused")
        yield* TestClock.adjust("1 second")
        yield* settle
        const urls = (yield* Ref.get(seen)).map((s) => s.url)
        expect(urls.slice(0, 2).sort()).toEqual(["https://hooks.example/gone", "https://hooks.example/old"])
        expect(urls.slice(2)).toEqual(["https://hooks.example/new"])
        expect((yield* push.deliveries).map((d) => [d.configId, d.outcome, d.attempts])).toEqual([["gone", "dropped", 1]])
      })))

  it.scoped("an interrupted service sends nothing more (its scope owns the deliveries)", () =>
    Effect.gen(function*() {
      const { seen, layer } = yield* scripted(100)
      const allow = yield* parseAllowList(["hooks.example"])
      const fiber = yield* Effect.fork(Effect.scoped(Effect.flatMap(A2aPush, (push) =>
        Effect.zipRight(push.set({ taskId: "t-1", id: "p", url: "https://hooks.example/a2a" }), Effect.zipRight(push.notify(task), Effect.never))
      ).pipe(Effect.provide(A2aPush.layer(allow).pipe(Layer.provide(layer))))))
      yield* settle
      expect((yield* Ref.get(seen)).length).toBe(1)
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("1 minute")
      yield* settle
      expect((yield* Ref.get(seen)).length).toBe(1)
    }))
})
