// The reconnect backoff (src/bind/writ-mcp/backoff.ts) and the gate's restarts that wait it
// (src/bind/writ-mcp-gate/restart.ts), on the TestClock: each wait is an Effect Schedule step,
// doubling, capped, and jittered from the Random in context, and a server found alive resets it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, Random, Schedule, TestClock } from "effect"
import { backoff, RECONNECT_DELAY, RECONNECT_DELAY_MAX, reconnectSchedule } from "../../src/bind/writ-mcp/backoff.js"
import { restarter } from "../../src/bind/writ-mcp-gate/restart.js"

const base = Duration.toMillis(RECONNECT_DELAY)
const cap = Duration.toMillis(RECONNECT_DELAY_MAX)
/** The un-jittered wait before the `n`th reconnect in a row (n >= 1). */
const ceiling = (n: number) => Math.min(base * 2 ** (n - 1), cap)

const delaysWith = (seed: number, n: number) =>
  Schedule.run(Schedule.delays(reconnectSchedule()), 0, Array.from({ length: n }, (_, i) => i)).pipe(
    Effect.map((c) => Chunk.toReadonlyArray(c).map(Duration.toMillis)),
    Effect.withRandom(Random.make(seed))
  )

/** Lets forked fibers run until one sleeps on the TestClock; the wait it sleeps, from now. */
const pendingWait = Effect.gen(function*() {
  for (let i = 0; i < 10_000; i++) {
    const sleeps = yield* TestClock.sleeps()
    if (Chunk.size(sleeps) > 0) return Chunk.unsafeHead(sleeps) - (yield* TestClock.currentTimeMillis)
    yield* Effect.yieldNow()
  }
  return yield* Effect.dieMessage("no fiber went to sleep")
})

describe("the reconnect backoff", () => {
  it.effect("doubles from the base up to the cap, each wait jittered to between half and all of it", () =>
    Effect.gen(function*() {
      const ds = yield* delaysWith(7, 12)
      ds.forEach((d, i) => {
        expect(d).toBeGreaterThanOrEqual(ceiling(i + 1) / 2)
        expect(d).toBeLessThanOrEqual(ceiling(i + 1))
      })
      // Past the cap the waits stay under it, and the last ones are all at the capped level.
      expect(ceiling(12)).toBe(cap)
      expect(Math.min(...ds.slice(-3))).toBeGreaterThanOrEqual(cap / 2)
    }))

  it.effect("the jitter is drawn from the Random in context: one seed repeats, two seeds differ", () =>
    Effect.gen(function*() {
      const a = yield* delaysWith(1, 8)
      // Whole milliseconds: a fractional wait made the Clock's sums inexact (330.528795 + 0 != itself).
      expect(a.every(Number.isInteger)).toBe(true)
      expect(yield* delaysWith(1, 8)).toEqual(a)
      expect(yield* delaysWith(2, 8)).not.toEqual(a)
    }))

  it.effect("a driver sleeps each wait on the Clock, and a reset starts again from the base", () =>
    Effect.gen(function*() {
      const b = yield* backoff()
      for (const n of [1, 2, 3]) {
        const f = yield* Effect.fork(b.wait)
        const wait = yield* pendingWait
        expect(wait).toBeGreaterThanOrEqual(ceiling(n) / 2)
        expect(wait).toBeLessThanOrEqual(ceiling(n))
        yield* TestClock.adjust(Duration.millis(wait - 1))
        expect(f.unsafePoll()).toBeNull()
        yield* TestClock.adjust(Duration.millis(1))
        expect(Duration.toMillis(yield* Fiber.join(f))).toBe(wait)
      }
      yield* b.reset
      const f = yield* Effect.fork(b.wait)
      expect(yield* pendingWait).toBeLessThanOrEqual(ceiling(1))
      yield* TestClock.adjust(Duration.millis(ceiling(1)))
      yield* Fiber.join(f)
    }))
})

describe("mcp-gate restarts wait the backoff", () => {
  /** A new in-memory server each time; `servers` holds them so a test can stop one. */
  const servers: Array<McpServer> = []
  const fresh = () => {
    const [client, server] = InMemoryTransport.createLinkedPair()
    const mcp = new McpServer({ name: "plain", version: "1" })
    servers.push(mcp)
    void mcp.connect(server)
    return client
  }

  it.effect("the server found dead is reconnected only after the wait; restarts in a row wait longer; alive resets", () =>
    Effect.gen(function*() {
      servers.length = 0
      let made = 0
      const client = new Client({ name: "test", version: "1" })
      yield* Effect.promise(() => client.connect(fresh()))
      const ensure = yield* restarter(client, 5_000, () => {
        made++
        return fresh()
      })
      expect(yield* ensure).toBe(false)
      const dropAndRestart = (n: number) =>
        Effect.gen(function*() {
          yield* Effect.promise(() => servers[servers.length - 1]!.close())
          const before = made
          const f = yield* Effect.fork(ensure)
          const wait = yield* pendingWait
          expect(wait).toBeGreaterThanOrEqual(ceiling(n) / 2)
          expect(wait).toBeLessThanOrEqual(ceiling(n))
          yield* TestClock.adjust(Duration.millis(wait - 1))
          // Still waiting: nothing was started yet.
          expect(made).toBe(before)
          yield* TestClock.adjust(Duration.millis(1))
          expect(yield* Fiber.join(f)).toBe(true)
          expect(made).toBe(before + 1)
        })
      // Found dead by the next call each time: the second restart in a row waits the second step.
      yield* dropAndRestart(1)
      yield* dropAndRestart(2)
      // A call that finds it alive resets the backoff: the next drop waits the first step again.
      expect(yield* ensure).toBe(false)
      yield* dropAndRestart(1)
      yield* Effect.promise(() => client.close())
    }))

  it.effect("with no way to restart, a server found dead is unreachable_server at once", () =>
    Effect.gen(function*() {
      servers.length = 0
      const client = new Client({ name: "test", version: "1" })
      yield* Effect.promise(() => client.connect(fresh()))
      const ensure = yield* restarter(client, 5_000, undefined)
      yield* Effect.promise(() => servers[0]!.close())
      const e = yield* Effect.flip(ensure)
      expect(e.reason).toBe("unreachable_server")
    }))
})
