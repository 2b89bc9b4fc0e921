// Section 9 under real crashes: an executor process on a SQLite file, under load, is killed with
// SIGKILL at varied moments, twenty times, and restarted on the same file each time. No accepted
// call, no consumed count or total, and no recorded revoke may be lost: every answer the process
// gave is still what the store answers, consumption matches the recorded calls exactly, nothing is
// left pending after recovery.
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import { canonicalText, identity } from "../../src/writ/sign.js"
import { CallStore, RevokeStore } from "../../src/writ/executor/stores.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { repoRoot } from "../support/shared.js"
import { workerBundle } from "../support/worker-bundle.js"
import { rig, settable, T0 } from "./fixtures.js"
import { A, AMOUNT, E, w1, w2 } from "./kill-shared.js"

const KILLS = 20

const child = join(repoRoot, "test/writ-executor/kill-child.ts")

/**
 * Starts the child (from one bundle per file, test/support/worker-bundle.ts: a tsx start per run
 * cost seconds of transpiling) and SIGKILLs it once it has printed `afterAnswers` answers: a moment
 * set by the child's own progress rather than a wall-clock delay, so the kill finds the same amount
 * of work done however loaded the machine is, with calls still in flight in the other workers.
 * Returns what it printed.
 */
const runChild = async (file: string, run: number, afterAnswers: number): Promise<Array<string>> => {
  const bundle = await workerBundle(child)
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [bundle, file, String(run)], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    let answers = 0
    let scanned = 0
    let killed = false
    p.stdout.on("data", (d) => {
      out += d
      // Whole lines only: the ANSWER lines come after READY (the child recovers first).
      for (let nl = out.indexOf("\n", scanned); nl >= 0; nl = out.indexOf("\n", scanned)) {
        if (out.startsWith("ANSWER ", scanned)) answers++
        scanned = nl + 1
      }
      if (answers >= afterAnswers && !killed) {
        killed = true
        p.kill("SIGKILL")
      }
    })
    p.stderr.on("data", (d) => (err += d))
    p.on("exit", (code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`child exited ${code}: ${err}`))
      // A line cut by the kill is not an answer the caller received.
      else resolve(out.split("\n").slice(0, -1))
    })
  })
}

describe("killing the SQLite executor at varied moments under load", () => {
  it(`loses no accepted call, consumption or revoke over ${KILLS} kills`, async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mandate-kill-")), "executor.sqlite")
    const answered = new Map<string, string>()
    const revoked = new Set<string>()
    let totalAnswers = 0
    for (let run = 1; run <= KILLS; run++) {
      const lines = await runChild(file, run, 5 + ((run * 53) % 120))
      for (const line of lines) {
        if (line.startsWith("ANSWER ")) {
          const [, id, tally] = line.match(/^ANSWER (\S+) (.*)$/)!
          answered.set(id, tally)
          totalAnswers++
        } else if (line.startsWith("REVOKED ")) revoked.add(line.slice(8))
      }
      // Restart on the same file and check every invariant.
      await Effect.runPromise(Effect.gen(function*() {
        const scope = yield* Scope.make()
        const stores = (yield* Layer.buildWithScope(SqliteWrit.layer(file), scope)) as Context.Context<StoreContext | SqlClient.SqlClient>
        const clock = settable()
        clock.set(T0)
        const ex = yield* rig(stores as Context.Context<StoreContext>, {
          executorKey: E, accept: [A], app: { perform: () => Effect.succeed({ st: "ok" as const }) }
        }).pipe(Scope.extend(scope))
        yield* Effect.withClock(ex.recover, clock.clock)
        const calls = Context.get(stores, CallStore)
        expect(yield* calls.pending).toEqual([])
        // Every answer the process gave is the stored answer.
        for (const [id, tally] of answered) {
          const entry = yield* calls.get(identity(w2), id)
          expect(Option.isSome(entry) && entry.value.state === "final").toBe(true)
          if (Option.isSome(entry) && entry.value.state === "final") expect(canonicalText(entry.value.tally)).toBe(tally)
        }
        // Consumption equals what the recorded calls took: nothing lost, nothing leaked.
        const sql = Context.get(stores, SqlClient.SqlClient)
        const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM writ_calls WHERE leaf = ${identity(w2)}`
        const recorded = BigInt(rows[0].n)
        const reservations = Context.get(stores, Reservations)
        expect(yield* reservations.used(`writ/count/${identity(w1)}`)).toBe(recorded)
        expect(yield* reservations.used(`writ/count/${identity(w2)}`)).toBe(recorded)
        expect(yield* reservations.used(`writ/total/${identity(w2)}/amount`)).toBe(recorded * BigInt(AMOUNT))
        expect(recorded >= BigInt(answered.size)).toBe(true)
        // Every recorded revoke survived.
        const revokes = Context.get(stores, RevokeStore)
        for (const w of revoked) expect(yield* revokes.covers([w], [])).toBe(true)
        yield* Scope.close(scope, Exit.void)
      }).pipe(Effect.orDie))
    }
    console.log(`kill test: ${KILLS} kills, ${totalAnswers} answers checked, ${revoked.size} revokes checked`)
    expect(totalAnswers).toBeGreaterThan(KILLS)
    expect(revoked.size).toBeGreaterThan(0)
  }, 300_000)
})
