// `npm run bench -- ledger [--n N]`: guarded actions per second on SQLite (one file, synchronous
// normal), beside a one-row transaction on the same file measured in the same run, as a ratio.
// A guarded action here is the whole guard: policy, one reserve with its action, decision and
// reservation lines in one atomic step, the run, and one commit with its settlement line in another;
// the ledger's Atomic on SQLite is group commit, so the steps of the 16 in flight share COMMITs.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import { openLedger, openStores } from "../../src/cli/ledger-open.js"
import { createLedger, makeGuard, usdBudget, type Usd } from "../../src/ledger/index.js"

const flag = (args: ReadonlyArray<string>, name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt
}

const timed = <E, R>(n: number, concurrency: number, op: (i: number) => Effect.Effect<unknown, E, R>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    yield* Effect.forEach(Array.from({ length: n }, (_, i) => i), op, { concurrency, discard: true })
    return n / ((performance.now() - t0) / 1000)
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
    const report = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // The baseline is a plain one-row transaction (BEGIN IMMEDIATE, INSERT, COMMIT) on the same
      // connection, not the ledger's Atomic: that one is group commit, which would batch the rows too.
      const transaction = SqliteStore.makeTransaction(sql, where.file)
      yield* sql.unsafe("CREATE TABLE IF NOT EXISTS bench_rows (id TEXT PRIMARY KEY)")
      const oneRow = yield* timed(n, 1, (i) => transaction(sql`INSERT INTO bench_rows (id) VALUES (${`r-${i}`})`))
      // The guard is made on the ledger in context: `racing` on the group-commit one, then on the other.
      const racing = (prefix: string, concurrency: number) =>
        Effect.flatMap(makeGuard({ mode: "enforce", policy: usdBudget("1000000" as Usd), namespace: "bench", runId: "bench", owner: "bench" }), (guard) =>
          timed(n, concurrency, (i) =>
            guard.guard(
              { id: `${prefix}-${i}`, kind: "llm", metadata: { i }, estimate: { tokens: 10, usd: "0.01" as Usd, latency_ms: 0, risk: 0 } },
              Effect.succeed({ value: i, actual: { tokens: 8, usd: "0.008" as Usd, latency_ms: 0, risk: 0 } })
            )))
      const seq = yield* racing("s", 1)
      const par = yield* racing("p", 16)
      const parSingle = yield* racing("q", 16).pipe(Effect.provide(openLedger(single, { ledger: "bench", synchronous: "normal", groupCommit: false })))
      return { oneRow, seq, par, parSingle }
    }).pipe(Effect.provide(openLedger(where, { ledger: "bench", synchronous: "normal" }))))
    console.log(`SQLite (synchronous normal), n = ${n}: baseline 1-row tx ${report.oneRow.toFixed(0)}/s`)
    for (const [label, rate] of [["guarded, 1 in flight", report.seq], ["guarded, 16 in flight", report.par], ["16, no group commit", report.parSingle]] as const) {
      console.log(`  ${label.padEnd(24)} ${rate.toFixed(0).padStart(7)}/s  (ratio to 1-row tx ${(rate / report.oneRow).toFixed(3)})`)
    }
    // The summary line: guarded actions per second beside the same run's baseline.
    const best = Math.max(report.seq, report.par)
    console.log(`ledger: ${best.toFixed(0)} guarded actions/s on SQLite beside ${report.oneRow.toFixed(0)} one-row transactions/s in the same run (ratio ${(best / report.oneRow).toFixed(3)})`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
