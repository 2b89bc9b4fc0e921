// `npm run bench -- ledger [--n N] [--rounds R] [--full]`: guarded actions per second on SQLite (one file, synchronous
// normal), beside a one-row transaction on the same file measured in the same run, as a ratio.
// A guarded action here is the whole guard: policy, one reserve with its action, decision and
// reservation lines in one atomic step, the run, and one commit with its settlement line in another;
// the ledger's Atomic on SQLite is group commit, so the steps of the 16 in flight share COMMITs.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import { openLedger, openStores } from "../../src/cli/ledger-open.js"
import { createLedger, type Guard, makeGuard, usdBudget, type Usd } from "../../src/ledger/index.js"

const flag = (args: ReadonlyArray<string>, name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt
}

/** This process's CPU time so far (user + system), in milliseconds. */
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/** Milliseconds (wall and CPU) to run `op` on 0..n-1 with `concurrency` in flight. */
const timed = <E, R>(n: number, concurrency: number, op: (i: number) => Effect.Effect<unknown, E, R>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    const c0 = cpuMs()
    yield* Effect.forEach(Array.from({ length: n }, (_, i) => i), op, { concurrency, discard: true })
    return { wall: performance.now() - t0, cpu: cpuMs() - c0 }
  })

export const run = async (args: ReadonlyArray<string>) => {
  const n = flag(args, "n", 2000)
  const dir = mkdtempSync(join(tmpdir(), "mandate-bench-ledger-"))
  const where = { store: "sqlite", file: join(dir, "ledger.db") } as const
  // The same guard on a ledger whose atomic steps are each a transaction of their own (no group
  // commit), in another file, measured in the same run: what group commit changes, beside the noise.
  const single = { store: "sqlite", file: join(dir, "ledger-single.db") } as const
  try {
    for (const w of [where, single]) {
      await Effect.runPromise(Effect.provide(createLedger({ ledger: "bench", mode: "local_full", key: undefined }), openStores(w, { ledger: "bench" })))
    }
    // The figures are measured in interleaved rounds (--rounds), each figure's rate its operations
    // over its time summed across the rounds, so that a change of the machine's load during the run
    // weighs on every figure alike.
    const rounds = Math.max(1, Math.floor(flag(args, "rounds", 4)))
    // --full: synchronous=FULL, a ledger's default (every COMMIT an fsync), instead of normal.
    const synchronous = args.includes("--full") ? "full" : "normal"
    const per = Math.ceil(n / rounds)
    const report = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // The baseline is a plain one-row transaction (BEGIN IMMEDIATE, INSERT, COMMIT) on the same
      // connection, not the ledger's Atomic: that one is group commit, which would batch the rows too.
      const transaction = SqliteStore.makeTransaction(sql, where.file)
      yield* sql.unsafe("CREATE TABLE IF NOT EXISTS bench_rows (id TEXT PRIMARY KEY)")
      const config = { mode: "enforce", policy: usdBudget("1000000" as Usd), namespace: "bench", runId: "bench", owner: "bench" } as const
      const grouped = yield* makeGuard(config)
      const plain = yield* Effect.provide(makeGuard(config), yield* Layer.build(openLedger(single, { ledger: "bench", synchronous, groupCommit: false })))
      const racing = (guard: Guard, prefix: string, concurrency: number) =>
        timed(per, concurrency, (i) =>
          guard.guard(
            { id: `${prefix}-${i}`, kind: "llm", metadata: { i }, estimate: { tokens: 10, usd: "0.01" as Usd, latency_ms: 0, risk: 0 } },
            Effect.succeed({ value: i, actual: { tokens: 8, usd: "0.008" as Usd, latency_ms: 0, risk: 0 } })
          ))
      const ms = { oneRow: { wall: 0, cpu: 0 }, seq: { wall: 0, cpu: 0 }, par: { wall: 0, cpu: 0 }, parSingle: { wall: 0, cpu: 0 } }
      const add = (k: keyof typeof ms, t: { wall: number; cpu: number }) => {
        ms[k].wall += t.wall
        ms[k].cpu += t.cpu
      }
      for (let r = 0; r < rounds; r++) {
        add("oneRow", yield* timed(per, 1, (i) => transaction(sql`INSERT INTO bench_rows (id) VALUES (${`r-${r}-${i}`})`)))
        add("seq", yield* racing(grouped, `s${r}`, 1))
        add("par", yield* racing(grouped, `p${r}`, 16))
        add("parSingle", yield* racing(plain, `q${r}`, 16))
      }
      // Per figure: operations per second of wall time, and this process's CPU milliseconds per operation.
      const of = (t: { wall: number; cpu: number }) => ({ rate: (per * rounds) / (t.wall / 1000), cpu: t.cpu / (per * rounds) })
      return { oneRow: of(ms.oneRow), seq: of(ms.seq), par: of(ms.par), parSingle: of(ms.parSingle) }
    })).pipe(Effect.provide(openLedger(where, { ledger: "bench", synchronous }))))
    console.log(`SQLite (synchronous ${synchronous}), n = ${per * rounds} in ${rounds} interleaved rounds: baseline 1-row tx ${report.oneRow.rate.toFixed(0)}/s, ${report.oneRow.cpu.toFixed(3)} ms CPU each`)
    for (const [label, f] of [["guarded, 1 in flight", report.seq], ["guarded, 16 in flight", report.par], ["16, no group commit", report.parSingle]] as const) {
      console.log(
        `  ${label.padEnd(24)} ${f.rate.toFixed(0).padStart(7)}/s  (ratio to 1-row tx ${(f.rate / report.oneRow.rate).toFixed(3)}); ` +
          `${f.cpu.toFixed(3)} ms CPU each (CPU ratio ${(report.oneRow.cpu / f.cpu).toFixed(3)})`
      )
    }
    // The summary line: guarded actions per second beside the same run's baseline.
    const best = Math.max(report.seq.rate, report.par.rate)
    console.log(`ledger: ${best.toFixed(0)} guarded actions/s on SQLite beside ${report.oneRow.rate.toFixed(0)} one-row transactions/s in the same run (ratio ${(best / report.oneRow.rate).toFixed(3)})`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
