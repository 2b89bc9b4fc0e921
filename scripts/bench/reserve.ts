// `npm run bench -- reserve [--n N] [--pg-concurrency C] [--pg-only] [--diagnose]`: reservations per
// second on each store,
// each beside a baseline measured in the same run on the same store, printed as a ratio:
//   noop tx  : an empty atomic step (memory: the journal lock; SQLite: BEGIN, the write-lock
//              statement, COMMIT; PostgreSQL: BEGIN, SELECT 1, COMMIT);
//   1-row tx : an atomic step that inserts one row (the least a durable reserve must write).
// A reserve here is a new id drawing 1 unit from 1 key or 3 keys (a Writ chain with counts and a
// total): the same keys every time ("hot": every reserve contends for the same rows) or fresh keys.
// --pg-only skips memory and SQLite; --diagnose adds, after the timed runs on PostgreSQL with C in
// flight, n more hot-key reserves observed by _reserve-diagnose.ts (statements, tuple writes and
// server wait events per reserve), untimed so that the sampling cannot distort the ratios.
// The last line is the issue's summary: the hot-key ratio on PostgreSQL with C in flight.
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { createConnection } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Atomic, Reservations } from "../../src/accounting/reservations.js"
import type { StoreError } from "../../src/accounting/store-error.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"
import * as PgStore from "../../src/store/postgres/client.js"
import * as PgReservations from "../../src/store/postgres/reservations.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as SqliteReservations from "../../src/store/sqlite/reservations.js"
import { diagnose } from "./_reserve-diagnose.js"

const flag = (args: ReadonlyArray<string>, name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt
}

const pgUp = (): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createConnection({ host: "127.0.0.1", port: 5432 })
    const done = (ok: boolean) => (s.destroy(), resolve(ok))
    s.setTimeout(1000, () => done(false))
    s.once("connect", () => done(true))
    s.once("error", () => done(false))
  })

type R = Reservations | Atomic

interface Figures {
  readonly noop: number
  readonly oneRow: number
  readonly hot1: number
  readonly hot3: number
  readonly distinct1: number
}
const timeOps = async (
  rt: ManagedRuntime.ManagedRuntime<R | SqlClient.SqlClient, StoreError>,
  n: number,
  concurrency: number,
  op: (i: number) => Effect.Effect<unknown, unknown, R | SqlClient.SqlClient>
): Promise<number> => {
  const t0 = performance.now()
  await rt.runPromise(Effect.forEach(Array.from({ length: n }, (_, i) => i), op, { concurrency, discard: true }))
  return n / ((performance.now() - t0) / 1000)
}

const fmt = (x: number) => x.toFixed(0).padStart(7)

/** A reserve of 1 unit under a new id, on `keys` keys: the same keys every time (hot) or new ones. */
const reserveOp = (prefix: string, keys: number, hot: boolean) => (i: number) =>
  Effect.flatMap(Reservations, (r) =>
    r.reserve({
      id: `${prefix}-${i}`,
      limits: Array.from({ length: keys }, (_, k) => ({ key: hot ? `${prefix}/k${k}` : `${prefix}/${i}/k${k}`, limit: 10n ** 18n, amount: 1n })),
      onFailure: "consume"
    }))

const report = (name: string, r: Figures) =>
  console.log(
    `${name.padEnd(22)} baselines: noop tx ${fmt(r.noop)}/s, 1-row tx ${fmt(r.oneRow)}/s | reserve/s (ratio to 1-row tx): ` +
      `1 hot key ${fmt(r.hot1)} (${(r.hot1 / r.oneRow).toFixed(2)})  3 hot keys ${fmt(r.hot3)} (${(r.hot3 / r.oneRow).toFixed(2)})  ` +
      `1 fresh key ${fmt(r.distinct1)} (${(r.distinct1 / r.oneRow).toFixed(2)})`
  )

const benchStore = async (
  name: string,
  layer: Layer.Layer<R | SqlClient.SqlClient, StoreError>,
  n: number,
  concurrency: number,
  run: string,
  diagnosis?: (rt: ManagedRuntime.ManagedRuntime<R | SqlClient.SqlClient, StoreError>, work: Effect.Effect<void, unknown, R>) => Promise<void>
): Promise<Figures> => {
  const rt = ManagedRuntime.make(layer)
  try {
    await rt.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.unsafe("CREATE TABLE IF NOT EXISTS bench_rows (id TEXT PRIMARY KEY)")))
    const noop = (_: number) => Effect.flatMap(Atomic, (a) => a.transaction(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)))
    const oneRow = (i: number) =>
      Effect.flatMap(Atomic, (a) => a.transaction(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO bench_rows (id) VALUES (${`${run}-${i}`})`)))
    const ops = {
      noop,
      oneRow,
      hot1: reserveOp(`${run}-h1`, 1, true),
      hot3: reserveOp(`${run}-h3`, 3, true),
      distinct1: reserveOp(`${run}-d1`, 1, false)
    }
    // Warm-up: prepared statements, pool connections, JIT.
    for (const op of Object.values(ops)) await timeOps(rt, Math.max(10, Math.floor(n / 10)), concurrency, (i) => op(n + i))
    const r = {
      noop: await timeOps(rt, n, concurrency, ops.noop),
      oneRow: await timeOps(rt, n, concurrency, ops.oneRow),
      hot1: await timeOps(rt, n, concurrency, ops.hot1),
      hot3: await timeOps(rt, n, concurrency, ops.hot3),
      distinct1: await timeOps(rt, n, concurrency, ops.distinct1)
    }
    report(name, r)
    if (diagnosis !== undefined) {
      const op = reserveOp(`${run}-h1`, 1, true)
      await diagnosis(rt, Effect.forEach(Array.from({ length: n }, (_, i) => 3 * n + i), op, { concurrency, discard: true }))
    }
    return r
  } finally {
    await rt.dispose()
  }
}

export const run = async (args: Array<string>): Promise<void> => {
  const n = flag(args, "n", 2000)
  const pgConcurrency = flag(args, "pg-concurrency", 8)
  const pgOnly = args.includes("--pg-only")
  const runId = `b${process.pid}`

  if (!pgOnly) await memoryAndSqlite(n, runId)
  if (!(await pgUp())) {
    console.log("postgres: 127.0.0.1:5432 unreachable, skipped")
    console.log("reserve: postgres hot-key not measured (PostgreSQL unreachable) (target 0.5)")
    return
  }
  const schema = `bench_reserve_${process.pid}`
  // The pool's backends carry this name, so --diagnose samples only them.
  const app = `mandate_bench_${process.pid}`
  const url = `${PgStore.defaultUrl}?application_name=${app}`
  let loaded: Figures | undefined
  try {
    for (const c of [1, pgConcurrency]) {
      const last = c === pgConcurrency
      loaded = await benchStore(
        `postgres (${c} in flight)`,
        PgReservations.layer.pipe(Layer.provideMerge(PgStore.layer({ url, schema, maxConnections: Math.max(2, c) }))),
        n,
        c,
        `${runId}c${c}`,
        last && args.includes("--diagnose")
          ? (rt, work) => diagnose({ label: `1 hot key, ${c} in flight`, schema, app, n, rt, observer: PgStore.layer(), work })
          : undefined
      )
    }
  } finally {
    await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(
      Effect.provide(PgStore.layer())
    ))
  }
  if (loaded !== undefined) {
    console.log(`reserve: postgres hot-key ${(loaded.hot1 / loaded.oneRow).toFixed(2)} of one-row tx (target 0.5)` +
      ` [${pgConcurrency} in flight: 1 hot key ${loaded.hot1.toFixed(0)}/s, 1-row tx ${loaded.oneRow.toFixed(0)}/s]`)
  }
}

const memoryAndSqlite = async (n: number, runId: string): Promise<void> => {
  // Memory: no SQL; the "noop" and "1-row" baselines are an empty step and a step writing one map entry.
  {
    const rt = ManagedRuntime.make(MemoryReservations.layer)
    const mem = new Map<string, number>()
    const time = async (op: (i: number) => Effect.Effect<unknown, unknown, R>) => {
      const t0 = performance.now()
      await rt.runPromise(Effect.forEach(Array.from({ length: n * 10 }, (_, i) => i), op, { discard: true }))
      return (n * 10) / ((performance.now() - t0) / 1000)
    }
    const ops = {
      noop: (_: number) => Effect.flatMap(Atomic, (a) => a.transaction(Effect.void)),
      oneRow: (i: number) => Effect.flatMap(Atomic, (a) => a.transaction(Effect.sync(() => mem.set(`r${i}`, i)))),
      hot1: reserveOp("m-h1", 1, true),
      hot3: reserveOp("m-h3", 3, true),
      distinct1: reserveOp("m-d1", 1, false)
    }
    for (const op of Object.values(ops)) await time((i) => op(-1 - i))
    report("memory", {
      noop: await time(ops.noop),
      oneRow: await time(ops.oneRow),
      hot1: await time(ops.hot1),
      hot3: await time(ops.hot3),
      distinct1: await time(ops.distinct1)
    })
    await rt.dispose()
  }

  // SQLite: one file, WAL, synchronous FULL (the default): each committed write is an fsync.
  const dir = mkdtempSync(join(tmpdir(), "mandate-bench-reserve-"))
  try {
    await benchStore(
      "sqlite (1 connection)",
      SqliteReservations.layer.pipe(Layer.provideMerge(SqliteStore.layer(join(dir, "bench.db")))),
      n,
      1,
      runId
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
