// `npx tsx scripts/bench/_ledger-diagnose.ts [--n N] [--concurrency C] [--full]`: what one guarded
// action costs on SQLite, beside a one-row transaction in the same run: the statements SQLite ran
// per action (counted at better-sqlite3's Statement, by SQL text) and the process's CPU per action
// (process.cpuUsage). Run it under `node --cpu-prof` (tsx's --import) to see where that CPU goes.
import { SqlClient } from "@effect/sql"
import Sqlite from "better-sqlite3"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createLedger, makeGuard, usdBudget, type Usd } from "../../src/ledger/index.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import { openLedger, openStores } from "../../src/cli/ledger-open.js"
import { flag } from "./_limit.js"

// Every statement better-sqlite3 runs, by its SQL text.
const counts = new Map<string, number>()
const probe = new Sqlite(":memory:")
const proto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, (...a: Array<unknown>) => unknown>
probe.close()
for (const m of ["run", "all", "get"]) {
  const original = proto[m]
  proto[m] = function(this: { source: string }, ...a: Array<unknown>) {
    counts.set(this.source, (counts.get(this.source) ?? 0) + 1)
    return original.apply(this, a)
  }
}
const total = () => [...counts.values()].reduce((s, n) => s + n, 0)

const args = process.argv.slice(2)
const n = flag(args, "n", 1000)
const concurrency = flag(args, "concurrency", 16)
const synchronous = args.includes("--full") ? "full" : "normal"
const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-diagnose-"))
const where = { store: "sqlite", file: join(dir, "ledger.db") } as const
const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
try {
  await Effect.runPromise(Effect.provide(createLedger({ ledger: "bench", mode: "local_full", key: undefined }), openStores(where, { ledger: "bench" })))
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = SqliteStore.makeTransaction(sql, where.file)
    yield* sql.unsafe("CREATE TABLE IF NOT EXISTS bench_rows (id TEXT PRIMARY KEY)")
    const guard = yield* makeGuard({ mode: "enforce", policy: usdBudget("1000000" as Usd), namespace: "bench", runId: "bench", owner: "bench" })
    const action = (prefix: string) => (i: number) =>
      guard.guard(
        { id: `${prefix}-${i}`, kind: "llm", metadata: { i }, estimate: { tokens: 10, usd: "0.01" as Usd, latency_ms: 0, risk: 0 } },
        Effect.succeed({ value: i, actual: { tokens: 8, usd: "0.008" as Usd, latency_ms: 0, risk: 0 } })
      )
    const measure = <E>(label: string, k: number, c: number, op: (i: number) => Effect.Effect<unknown, E>) =>
      Effect.gen(function*() {
        const s0 = total()
        const c0 = cpu()
        const t0 = performance.now()
        yield* Effect.forEach(Array.from({ length: k }, (_, i) => i), op, { concurrency: c, discard: true })
        const wall = performance.now() - t0
        const ms = cpu() - c0
        console.log(`${label.padEnd(26)} ${(ms / k).toFixed(3)} ms CPU/op  ${(1000 * k / wall).toFixed(0).padStart(6)}/s  ${((total() - s0) / k).toFixed(1)} statements/op`)
        return ms / k
      })
    // Warm up both paths (JIT, statement cache), then measure.
    yield* measure("warm-up 1-row tx", 200, 1, (i) => transaction(sql`INSERT INTO bench_rows (id) VALUES (${`w-${i}`})`))
    yield* measure("warm-up guarded", 200, concurrency, action("w"))
    const base = yield* measure("1-row tx", n, 1, (i) => transaction(sql`INSERT INTO bench_rows (id) VALUES (${`r-${i}`})`))
    counts.clear()
    const one = yield* measure("guarded, 1 in flight", n, 1, action("s"))
    const perOne = new Map(counts)
    counts.clear()
    const par = yield* measure(`guarded, ${concurrency} in flight`, n, concurrency, action("p"))
    console.log(`CPU ratio (1-row tx / guarded): 1 in flight ${(base / one).toFixed(3)}, ${concurrency} in flight ${(base / par).toFixed(3)}`)
    console.log(`statements per guarded action, 1 in flight (synchronous ${synchronous}):`)
    for (const [s, c] of [...perOne].sort((a, b) => b[1] - a[1])) console.log(`  ${(c / n).toFixed(2).padStart(6)}  ${s.replace(/\s+/g, " ").slice(0, 110)}`)
  })).pipe(Effect.provide(openLedger(where, { ledger: "bench", synchronous }))))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
