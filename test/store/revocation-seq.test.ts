// freshRead (src/store/postgres/revocation-seq.ts): requests waiting at once share one read, and
// every request's answer comes from a read that began after the request was made (so a replay
// after a revoke's ack reads the number after the ack's commit). Random interleavings of requests
// and reads returning, against a read whose value is the order in which it began.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FiberId } from "effect"
import fc from "fast-check"
import { freshRead } from "../../src/store/postgres/revocation-seq.js"

type Step = "request" | "return"

const run = (steps: ReadonlyArray<Step>) =>
  Effect.gen(function*() {
    // The reads begun, in order; each returns its own index when the test lets it.
    const begun: Array<Deferred.Deferred<void>> = []
    const read = Effect.suspend(() => {
      const index = begun.length
      const gate = Deferred.unsafeMake<void>(FiberId.none)
      begun.push(gate)
      return Effect.as(Deferred.await(gate), index)
    })
    const shared = freshRead(read)
    const requests: Array<{ readonly readsBegunBefore: number; readonly fiber: Fiber.RuntimeFiber<number> }> = []
    let returned = 0
    const settle = Effect.yieldNow().pipe(Effect.repeatN(20))
    for (const step of steps) {
      if (step === "request") {
        requests.push({ readsBegunBefore: begun.length, fiber: yield* Effect.fork(shared) })
      } else if (returned < begun.length) {
        yield* Deferred.succeed(begun[returned++], undefined)
      }
      yield* settle
    }
    // Let every read still to come return.
    while (requests.some((r) => r.fiber.unsafePoll() === null)) {
      if (returned < begun.length) yield* Deferred.succeed(begun[returned++], undefined)
      yield* settle
    }
    const answers = yield* Effect.forEach(requests, (r) => Fiber.join(r.fiber))
    return { answers, requests, reads: begun.length }
  })

describe("freshRead", () => {
  it.effect("every answer comes from a read begun after its request; waiting requests share one read", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom<Step>("request", "request", "return"), { maxLength: 40 }), async (steps) => {
          const { answers, requests, reads } = await Effect.runPromise(run(steps))
          for (const [i, a] of answers.entries()) expect(a).toBeGreaterThanOrEqual(requests[i].readsBegunBefore)
          // At most one read in flight and one waiting: never more reads than requests, and
          // requests made while one read is in flight are answered by one read between them.
          expect(reads).toBeLessThanOrEqual(requests.length)
          const between = steps.indexOf("return")
          if (between < 0 && requests.length > 0) expect(reads).toBeLessThanOrEqual(2)
        }),
        { numRuns: 200, seed: 32 }
      )
    ))

  it.effect("a failed read fails the requests that shared it; the next request reads again", () =>
    Effect.gen(function*() {
      let calls = 0
      const shared = freshRead(Effect.suspend(() => (++calls === 1 ? Effect.fail("down" as const) : Effect.succeed(calls))))
      expect(yield* Effect.flip(shared)).toBe("down")
      expect(yield* shared).toBe(2)
    }))
})
