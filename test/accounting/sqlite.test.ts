// The Reservations suite on SQLite (one file, WAL), plus what only a durable, shared file can show:
// several processes racing on one key, restart, a crash mid-transaction, and a write refused by the
// database itself (a trigger).
import { SqlClient } from "@effect/sql"
import { Effect, Exit, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
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

describe("Reservations (sqlite, durable)", () => {
  const withStore = <A, E>(file: string, eff: Effect.Effect<A, E, Reservations | Atomic | SqlClient.SqlClient>) =>
    Effect.runPromise(Effect.provide(eff, open(file)))
  const used = (file: string, key: string) => withStore(file, Effect.flatMap(Reservations, (r) => r.used(key)))

  it("keeps consumption and reservations across close and reopen", async () => {
    const file = join(dir, "restart.db")
    await withStore(file, Effect.flatMap(Reservations, (r) =>
      Effect.all([
        r.reserve({ id: "held", limits: [{ key: "k", limit: 10n, amount: 4n }], onFailure: "consume" }),
        r.reserve({ id: "done", limits: [{ key: "k", limit: 10n, amount: 5n }], onFailure: "consume" }),
        r.commit("done", { k: 3n })
      ])))
    // Reopened: the same state, and the same idempotency answers.
    const after = await withStore(file, Effect.flatMap(Reservations, (r) =>
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
    expect(await used(file, "k")).toBe(3n)
  })

  it("lets exactly floor(limit/amount) reserves through across several processes", async () => {
    const file = join(dir, "procs.db")
    await used(file, "warm") // creates the schema before the processes start
    // Processes take about a second to start; all of them begin reserving at one instant.
      const startAt = Date.now() + 2500
      const tallies = await Promise.all([0, 1, 2].map((p) =>
      raceProcess({ store: "sqlite", target: file, key: "shared", idPrefix: `p${p}`, n: 60, limit: "300", amount: "3", slowMs: 2, startAt })
    ))
    expect(tallies.flatMap((t) => t.other)).toEqual([])
    expect(tallies.reduce((s, t) => s + t.ok, 0)).toBe(100)
    expect(tallies.reduce((s, t) => s + t.exhausted, 0)).toBe(180 - 100)
    expect(await used(file, "shared")).toBe(300n)
  })

  it("leaves nothing behind when the process is killed mid-transaction", async () => {
    const file = join(dir, "crash.db")
    await withStore(file, Effect.flatMap(Reservations, (r) =>
      r.reserve({ id: "before", limits: [{ key: "k", limit: 10n, amount: 2n }], onFailure: "consume" })))
    await killMidTransaction({ store: "sqlite", target: file, key: "k", idPrefix: "crash", limit: "10", amount: "5" })
    const state = await withStore(file, Effect.flatMap(Reservations, (r) => Effect.all({ used: r.used("k"), crash: r.get("crash") })))
    expect(state.used).toBe(2n)
    expect(state.crash._tag).toBe("None")
  })

  it("answers a write the database refuses with StoreError and consumes nothing (trigger)", async () => {
    const file = join(dir, "trigger.db")
    const rt = ManagedRuntime.make(open(file))
    try {
      const sql = await rt.runPromise(SqlClient.SqlClient)
      await rt.runPromise(sql.unsafe(`CREATE TRIGGER refuse BEFORE INSERT ON accounting_reservations
        BEGIN SELECT RAISE(ABORT, 'injected fault'); END`))
      const k = fresh("k")
      const exit = await rt.runPromiseExit(Effect.flatMap(Reservations, (r) =>
        r.reserve({ id: "x", limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" })))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined)
        .toMatchObject({ _tag: "StoreError", operation: "reservations.insert" })
      expect(await rt.runPromise(Effect.flatMap(Reservations, (r) => r.used(k)))).toBe(0n)
      expect((await rt.runPromise(sql`SELECT key FROM accounting_usage WHERE key = ${k}`)).length).toBe(0)
      await rt.runPromise(sql.unsafe("DROP TRIGGER refuse"))
      await rt.runPromise(Effect.flatMap(Reservations, (r) =>
        r.reserve({ id: "x", limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" })))
      expect(await rt.runPromise(Effect.flatMap(Reservations, (r) => r.used(k)))).toBe(4n)
    } finally {
      await rt.dispose()
    }
  })

  it("fails to open an unusable file with StoreError", async () => {
    const exit = await Effect.runPromiseExit(Effect.provide(Reservations, open(join(dir, "no-such-dir", "x.db"))))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined)
      .toMatchObject({ _tag: "StoreError" })
  })
})
