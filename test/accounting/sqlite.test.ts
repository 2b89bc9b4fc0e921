// The Reservations suite on SQLite (one file, WAL), plus what only a durable, shared file can show:
// several processes racing on one key, restart, a crash mid-transaction, and a write refused by the
// database itself (a trigger).
import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Atomic, Reservations } from "../../src/accounting/reservations.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as SqliteReservations from "../../src/store/sqlite/reservations.js"
import { killMidTransaction, raceProcess } from "./processes.js"
import { sqlHarness, withCallerTable } from "./sql-harness.js"
import { fresh, reservationSuite } from "./suite.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-accounting-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const open = (file: string) => withCallerTable(SqliteReservations.layer, SqliteStore.migrate, SqliteStore.layer(file))

const harness = sqlHarness({ name: "sqlite", layer: open(join(dir, "suite.db")), propertyRuns: 60 })

reservationSuite(harness)

const failure = <A, E>(exit: Exit.Exit<A, E>) => (Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined)

describe("Reservations (sqlite, durable)", () => {
  /** One opening of the file: built, used, closed. */
  const withStore = <A, E>(file: string, eff: Effect.Effect<A, E, Reservations | Atomic | SqlClient.SqlClient>) =>
    Effect.provide(eff, open(file))
  const used = (file: string, key: string) => withStore(file, Effect.flatMap(Reservations, (r) => r.used(key)))

  it.effect("keeps consumption and reservations across close and reopen", () =>
    Effect.gen(function*() {
      const file = join(dir, "restart.db")
      yield* withStore(file, Effect.flatMap(Reservations, (r) =>
        Effect.all([
          r.reserve({ id: "held", limits: [{ key: "k", limit: 10n, amount: 4n }], onFailure: "consume" }),
          r.reserve({ id: "done", limits: [{ key: "k", limit: 10n, amount: 5n }], onFailure: "consume" }),
          r.commit("done", { k: 3n })
        ])))
      // Reopened: the same state, and the same idempotency answers.
      const after = yield* withStore(file, Effect.flatMap(Reservations, (r) =>
        Effect.all({
          used: r.used("k"),
          replay: r.reserve({ id: "held", limits: [{ key: "k", limit: 10n, amount: 4n }], onFailure: "consume" }),
          over: Effect.either(r.reserve({ id: "new", limits: [{ key: "k", limit: 10n, amount: 4n }], onFailure: "consume" })),
          release: r.release("held"),
          usedAfter: r.used("k")
        })))
      expect(after.used).toBe(7n)
      expect(after.replay).toMatchObject({ replayed: true, state: "held", consumed: [4n] })
      expect(after.over).toMatchObject({ _tag: "Left", left: { _tag: "LimitExhausted", used: 7n } })
      expect(after.release.state).toBe("released")
      expect(after.usedAfter).toBe(3n)
      expect(yield* used(file, "k")).toBe(3n)
    }))

  it.live("lets exactly floor(limit/amount) reserves through across several processes", () =>
    Effect.gen(function*() {
      const file = join(dir, "procs.db")
      yield* used(file, "warm") // creates the schema before the processes start
      // Processes take about a second to start; all of them begin reserving at one instant.
      const startAt = Date.now() + 2500
      const tallies = yield* Effect.promise(() =>
        Promise.all([0, 1, 2].map((p) =>
          raceProcess({ store: "sqlite", target: file, key: "shared", idPrefix: `p${p}`, n: 60, limit: "300", amount: "3", slowMs: 2, startAt })
        ))
      )
      expect(tallies.flatMap((t) => t.other)).toEqual([])
      expect(tallies.reduce((s, t) => s + t.ok, 0)).toBe(100)
      expect(tallies.reduce((s, t) => s + t.exhausted, 0)).toBe(180 - 100)
      expect(yield* used(file, "shared")).toBe(300n)
    }))

  it.live("leaves nothing behind when the process is killed mid-transaction", () =>
    Effect.gen(function*() {
      const file = join(dir, "crash.db")
      yield* withStore(file, Effect.flatMap(Reservations, (r) =>
        r.reserve({ id: "before", limits: [{ key: "k", limit: 10n, amount: 2n }], onFailure: "consume" })))
      yield* Effect.promise(() =>
        killMidTransaction({ store: "sqlite", target: file, key: "k", idPrefix: "crash", limit: "10", amount: "5" })
      )
      const state = yield* withStore(file, Effect.flatMap(Reservations, (r) => Effect.all({ used: r.used("k"), crash: r.get("crash") })))
      expect(state.used).toBe(2n)
      expect(state.crash._tag).toBe("None")
    }))

  it.scoped("answers a write the database refuses with StoreError and consumes nothing (trigger)", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(open(join(dir, "trigger.db")))
      const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
      const r = yield* Effect.provide(Reservations, ctx)
      yield* sql.unsafe(`CREATE TRIGGER refuse BEFORE INSERT ON accounting_reservations
        BEGIN SELECT RAISE(ABORT, 'injected fault'); END`)
      const k = fresh("k")
      const exit = yield* Effect.exit(r.reserve({ id: "x", limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" }))
      expect(failure(exit)).toMatchObject({ _tag: "StoreError", operation: "reservations.insert" })
      expect(yield* r.used(k)).toBe(0n)
      expect((yield* sql`SELECT key FROM accounting_usage WHERE key = ${k}`).length).toBe(0)
      yield* sql.unsafe("DROP TRIGGER refuse")
      yield* r.reserve({ id: "x", limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" })
      expect(yield* r.used(k)).toBe(4n)
    }))

  it.effect("fails to open an unusable file with StoreError", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.provide(Reservations, open(join(dir, "no-such-dir", "x.db"))))
      expect(failure(exit)).toMatchObject({ _tag: "StoreError" })
    }))
})
