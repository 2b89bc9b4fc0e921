// Owners of pending records on one SQLite file that two executor processes share (spec section 9,
// recovery with several processes; src/store/sqlite/writ-owner.ts, src/writ/executor/ownership.ts).
// In-process: two executors, each on its own connection to the file and its own owner lease.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer } from "effect"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { LocalProcesses, live } from "../../src/store/sqlite/local-processes.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import type { CallAnswer } from "../../src/writ/executor/executor.js"
import { makeExecutorWith } from "../../src/writ/executor/executor.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import { CallStore } from "../../src/writ/executor/stores.js"
import { act, call, executorContext, key, ok, scripted, settable, T0, writ } from "./fixtures.js"

const A = key(1)
const B = key(2)
const E = key(3)
const LEASE = 600_000

const fileName = () => join(mkdtempSync(join(tmpdir(), "mandate-writ-owner-")), "executor.sqlite")
const bytes = (a: CallAnswer) => (a._tag === "tally" ? encodeCanonical(a.tally, "utf16") : a.reason)
const st = (a: CallAnswer) => (a._tag === "tally" ? [a.tally.st, (a.tally.err as { code?: string } | null)?.code ?? null] : ["error", a.reason])

/** One "process": its connection and lease on `file`, an executor whose operations wait on `hold`. */
const process_ = (file: string, hold: Deferred.Deferred<void>, alive: (pid: number) => boolean = live.alive) =>
  Effect.gen(function*() {
    const built = yield* Layer.build(
      SqliteWrit.layer(file, { leaseMs: LEASE }).pipe(Layer.provide(Layer.succeed(LocalProcesses, { ...live, alive })))
    ).pipe(Effect.orDie)
    const app = scripted(() => Effect.as(Deferred.await(hold), ok({ charge: "ch_1" }) as Outcome))
    const ex = yield* makeExecutorWith({ shutdownGrace: 0 }).pipe(
      Effect.provide(executorContext(built as Context.Context<StoreContext>, { executorKey: E, accept: [A], app: app.service }))
    )
    return { ex, app, calls: Context.get(built as Context.Context<StoreContext>, CallStore) }
  })

const w1 = writ(A, B, { act: act("travel") })
const w2 = writ(B, E, { act: act("travel") }, w1)

/** Process X holds a call in its handler (it has performed it, not answered). */
const ownerStarted = () =>
  Effect.gen(function*() {
    const file = fileName()
    const hold = yield* Deferred.make<void>()
    const x = yield* process_(file, hold)
    const c = call(B, [w1, w2], "travel/x")
    const running = yield* Effect.fork(x.ex.call(c))
    while (x.app.log.length === 0) yield* Effect.sleep("10 millis")
    return { file, hold, x, c, running }
  })

/** ... and process Y starts on the same file while X is alive: its recovery leaves the call alone. */
const ownerRunning = () =>
  Effect.gen(function*() {
    const started = yield* ownerStarted()
    const y = yield* process_(started.file, started.hold)
    expect(yield* y.ex.recover).toBe(0)
    return { ...started, y }
  })

describe("pending records name their owner (one SQLite file, two processes)", () => {

  it.scoped("recovery leaves a live owner's call alone; both answer its one final tally", () =>
    Effect.gen(function*() {
      const { hold, x, c, running, y } = yield* ownerRunning()
      expect(st(yield* y.ex.call(c))[0]).toBe("pending")
      yield* Deferred.succeed(hold, undefined)
      const answer = yield* running
      expect(st(answer)).toEqual(["ok", null])
      expect(bytes(yield* y.ex.call(c))).toBe(bytes(answer))
      expect([x.app.log.length, y.app.log.length]).toEqual([1, 0])
    }).pipe(Effect.withClock(settable().clock)))

  it.scoped("an owner whose lease lapsed while it ran answers the resolution another process gave, not a second tally", () => {
    const clock = settable()
    return Effect.gen(function*() {
      const { hold, x, c, running, y } = yield* ownerRunning()
      // X is alive (same pid) but its lease has lapsed: Y takes the call over.
      clock.set(T0 + LEASE / 1000 + 1)
      expect(yield* y.ex.recover).toBe(1)
      const resolved = yield* y.ex.call(c)
      expect(st(resolved)).toEqual(["failed", "unknown_outcome"])
      // X finishes: its final tally is not written; it answers Y's resolution, byte for byte.
      yield* Deferred.succeed(hold, undefined)
      const answer = yield* running
      expect(bytes(answer)).toBe(bytes(resolved))
      expect(bytes(yield* x.ex.call(c))).toBe(bytes(resolved))
      expect([x.app.log.length, y.app.log.length]).toEqual([1, 0])
    }).pipe(Effect.withClock(clock.clock))
  })

  it.scoped("an owner whose process is gone from this host is taken over at once, its lease still running", () =>
    Effect.gen(function*() {
      const { file, hold, x, c } = yield* ownerStarted()
      // Y sees X's pid as gone (what a SIGKILL leaves): X's lease has not lapsed, yet Y recovers.
      const y = yield* process_(file, hold, () => false)
      expect(yield* y.ex.recover).toBe(1)
      expect(st(yield* y.ex.call(c))).toEqual(["failed", "unknown_outcome"])
      // Taken once: a second sweep finds nothing.
      expect(yield* y.ex.recover).toBe(0)
    }).pipe(Effect.withClock(settable().clock)))
})
