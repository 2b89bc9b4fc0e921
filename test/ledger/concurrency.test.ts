// The concurrency proof: 10,000 concurrent guarded actions from
// 4 worker processes against one USD budget, on SQLite and on PostgreSQL, never exceed the budget
// by one cent (not by one nano-dollar), every reservation ends settled or released, the ledger's
// settlements add up to exactly what the budget records as used, and the ledger verifies; also
// when one worker is SIGKILLed mid-run and restarted (it recovers its held reservations first).
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Stream } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import { type LedgerLocation, openStores, parseLocation } from "../../src/cli/ledger-open.js"
import { budgetKey, createLedger, LedgerStore, readLedger, toNanos, verifyLedger } from "../../src/ledger/index.js"
import * as PgStore from "../../src/store/postgres/client.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import { pgReachable, uniqueSchema } from "../accounting/pg.js"
import { runWorker, type Tally } from "./processes.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-proof-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const BUDGET = "100.00"
// Large enough that the killed worker still holds reservations when it dies (at 200 settled of
// 2,700 actions in all, about $0.045 each; the others start when it has settled 100), small
// enough that the run exhausts it.
const SMALL = "60.00"
const pg = await pgReachable()

const sqlOf = (where: LedgerLocation) =>
  where.store === "sqlite" ? SqliteStore.layer(where.file) : PgStore.layer({ ...(where.schema !== undefined ? { schema: where.schema } : {}) })

const create = (where: string) =>
  Effect.runPromise(Effect.provide(createLedger({ ledger: "proof", mode: "local_full", key: undefined }), openStores(parseLocation(where), { ledger: "proof" })))

/** What the stores say after the run. */
const audit = (where: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const r = yield* Reservations
    const used = yield* r.used(budgetKey("proof", "usd", "usd"))
    const store = yield* LedgerStore
    const verified = yield* verifyLedger(store.lines, yield* store.head)
    let keptUsd = 0n
    let reservations = 0
    let settlements = 0
    yield* Stream.runForEach(readLedger(store.lines), (e) => Effect.sync(() => {
      if (e.type === "reservation") reservations++
      if (e.type === "settlement") {
        settlements++
        keptUsd += toNanos(e.kept_usd)
      }
    }))
    const sql = yield* SqlClient.SqlClient
    const heldRows = yield* sql<{ n: number | string }>`SELECT count(*) AS n FROM accounting_reservations WHERE state = 'held'`
    const heldIndex = yield* sql<{ n: number | string }>`SELECT count(*) AS n FROM ledger_held`
    return { used, keptUsd, reservations, settlements, lines: verified.lines, held: Number(heldRows[0].n), heldIndex: Number(heldIndex[0].n) }
  }).pipe(Effect.provide(openStores(parseLocation(where), { ledger: "proof" }).pipe(Layer.provideMerge(sqlOf(parseLocation(where)))))))

const check = async (where: string, tallies: ReadonlyArray<Tally>, budget = BUDGET) => {
  expect(tallies.flatMap((t) => t.other)).toEqual([])
  const a = await audit(where)
  // Never over the budget, exactly: used is in nano-dollars.
  expect(a.used <= toNanos(budget)).toBe(true)
  expect(a.keptUsd).toBe(a.used)
  expect(a.held).toBe(0)
  expect(a.heldIndex).toBe(0)
  expect(a.settlements).toBe(a.reservations)
  // The budget ran out: the check was exercised, not merely never reached.
  expect(tallies.reduce((s, t) => s + t.denied, 0)).toBeGreaterThan(0)
  return a
}

const proof = (name: string, where: () => string) =>
  describe(`the concurrency proof on ${name}`, () => {
    it("10,000 concurrent guarded actions from 4 processes stay within one USD budget", { timeout: 2_400_000 }, async () => {
      const w = where()
      await create(w)
      const tallies = (await Promise.all([0, 1, 2, 3].map((p) => runWorker({ where: w, owner: `w${p}`, n: 2500, budget: BUDGET, concurrency: 16 })))) as Array<Tally>
      expect(tallies.reduce((s, t) => s + t.ok + t.denied + t.failed, 0)).toBe(10_000)
      const a = await check(w, tallies)
      console.log(`[${name}] used ${a.used} of ${toNanos(BUDGET)} nano-USD; ${tallies.map((t) => `${t.ok}/${t.denied}/${t.failed}`).join(" ")} ok/denied/failed; ${a.lines} ledger lines`)
    })

    it("holds after a worker is SIGKILLed mid-run and restarted", { timeout: 1_200_000 }, async () => {
      const w = where()
      await create(w)
      // The others start once the victim has settled 100 actions, so that the budget is not yet
      // spent when it dies at 200: with 64 actions in flight it then holds reservations for certain
      // (started together, the others could exhaust the budget first and leave it nothing held).
      let going!: () => void
      const victimGoing = new Promise<void>((resolve) => (going = resolve))
      const victim = runWorker({ where: w, owner: "k0", n: 800, budget: SMALL }, 200, (settled) => settled >= 100 && going())
      await Promise.race([victimGoing, victim])
      const [killed, ...rest] = await Promise.all([
        victim,
        ...[1, 2, 3].map((p) => runWorker({ where: w, owner: `k${p}`, n: 600, budget: SMALL }))
      ])
      expect(killed).toBeUndefined()
      const restarted = (await runWorker({ where: w, owner: "k0", n: 100, budget: SMALL, recover: true, from: 100_000 }))!
      // The kill came mid-run: the restart had reservations of the dead process to settle.
      expect(restarted.recovered).toBeGreaterThan(0)
      const a = await check(w, [...(rest as Array<Tally>), restarted], SMALL)
      console.log(`[${name}] after SIGKILL: ${restarted.recovered} held reservations recovered; used ${a.used} of ${toNanos(SMALL)}`)
    })
  })

let files = 0
proof("SQLite", () => join(dir, `proof-${++files}.db`))
if (pg) proof("PostgreSQL", () => `postgres://postgres@127.0.0.1:5432/test#${uniqueSchema("ledger")}`)
