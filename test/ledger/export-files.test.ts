// `ledger verify` reads an exported JSONL file too (its hash chain, from its header), `ledger record`
// imports one (verified whole first, then chained after the ledger's head), and `verify`, `stats`
// and `record` on a missing path refuse with one line and create nothing.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import { afterAll, describe, expect, it, vi } from "vitest"
import { initLedger, openLedger, openStores, parseLocation } from "../../src/cli/ledger-open.js"
import { LedgerStore, makeGuard, usdBudget, type Usd } from "../../src/ledger/index.js"
import { expectRefused, ledgerCli } from "./cli-harness.js"
import { cost } from "./harness.js"

vi.setConfig({ testTimeout: 300_000 })

const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-export-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const p = (f: string) => join(dir, f)
const mandate = ledgerCli
const refused = expectRefused

/** A ledger with three guarded actions (one refused), exported to a JSONL file as `export` writes it. */
const exported = async (name: string, mode: "local_full" | "safe_telemetry") => {
  const db = p(`${name}.db`)
  // A safe_telemetry ledger's key lives outside it: in a key file beside it, written by init.
  await Effect.runPromise(Effect.provide(initLedger(parseLocation(db), { mode }), openStores(parseLocation(db))))
  const lines = await Effect.runPromise(Effect.gen(function*() {
    const g = yield* makeGuard({ mode: "enforce", policy: usdBudget("1" as Usd), namespace: "x", runId: "run-1", owner: "w" })
    for (const i of [1, 2, 3]) yield* Effect.either(g.guard({ id: `a${i}`, kind: "llm", metadata: { i }, estimate: cost(5, "0.40") }, Effect.succeed({ value: i, actual: cost(5, "0.40") })))
    return Array.from(yield* Stream.runCollect((yield* LedgerStore).lines))
  }).pipe(Effect.provide(openLedger(parseLocation(db)))))
  writeFileSync(p(`${name}.jsonl`), lines.join("\n") + "\n")
  return { db, file: p(`${name}.jsonl`), lines }
}

describe("verify and record read exported ledgers", () => {
  it("ledger verify reads an export; ledger record imports one", async () => {
    const { db, file, lines } = await exported("full", "local_full")
    const v = await mandate("verify", file)
    expect(v.status, v.stderr).toBe(0)
    expect(v.stdout).toMatch(new RegExp(`^ok: export of ledger default \\(local_full\\), ${lines.length} lines, chain intact, head [A-Za-z0-9_-]{43}\\n$`))

    const target = p("import.db")
    expect((await mandate("init", target)).status).toBe(0)
    const rec = await mandate("record", target, file)
    expect(rec.status, rec.stderr).toBe(0)
    expect(rec.stdout).toContain(`recorded ${lines.length - 1} events from an exported ledger (chain verified)`)
    expect((await mandate("verify", target)).stdout).toContain(`${lines.length} lines, chain intact`)
    // The imported ledger tells the same story as the one exported.
    const [a, b] = await Promise.all([mandate("stats", db, "--json"), mandate("stats", target, "--json")])
    expect(JSON.parse(b.stdout)).toEqual(JSON.parse(a.stdout))
  })

  it("ledger verify and record refuse a changed export, and a safe_telemetry export into a local_full ledger", async () => {
    const { file, lines } = await exported("tampered", "local_full")
    const changed = [...lines]
    // The first action's estimate, lowered after the fact.
    changed[1] = changed[1].replace(`"usd":"0.40"`, `"usd":"0.10"`)
    expect(changed[1]).not.toBe(lines[1])
    writeFileSync(p("changed.jsonl"), changed.join("\n") + "\n")
    refused(await mandate("verify", p("changed.jsonl")), "chain_broken")
    const target = p("import2.db")
    expect((await mandate("init", target)).status).toBe(0)
    // Verified whole before any of it is recorded: nothing lands.
    refused(await mandate("record", target, p("changed.jsonl")), "chain_broken")
    expect((await mandate("verify", target)).stdout).toContain(", 1 lines, chain intact")
    const safe = await exported("safe", "safe_telemetry")
    refused(await mandate("record", target, safe.file), "mode_mismatch")
    expect(readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0)).toHaveLength(lines.length)
  })

  it("verify, stats and record on a missing path refuse with one line and create nothing", async () => {
    const missing = p("missing.db")
    refused(await mandate("verify", missing), "ledger_missing")
    refused(await mandate("stats", missing), "ledger_missing")
    writeFileSync(p("one.jsonl"), JSON.stringify({ type: "outcome", outcome: { task_id: "t", result: "success", verified: true, verifier: "ci", action_ids: [] } }) + "\n")
    refused(await mandate("record", missing, p("one.jsonl")), "ledger_missing")
    expect(existsSync(missing)).toBe(false)
    const db = p("present.db")
    expect((await mandate("init", db)).status).toBe(0)
    refused(await mandate("record", db, p("no-such-events.jsonl")), "file_missing")
    expect(existsSync(p("no-such-events.jsonl"))).toBe(false)
  })
})
