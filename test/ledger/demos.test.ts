// The Writ demo and the YEA demo, run with a ledger, leave one verifiable ledger holding both. Each
// command runs as a user would (a child process), into one SQLite file: the Writ demo's is the run
// this test run shares (test/support/demo-run.ts, `mandate demo --ledger`), copied here so that the
// YEA demo adds to the copy; then `mandate ledger verify` passes, `stats` shows both protocols, and
// a changed line is found.
import Database from "better-sqlite3"
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import { runMandate } from "../support/cli.js"
import { sharedDemo } from "../support/demo-run.js"

// Each command is a node process, the Writ demo three of them; a loaded machine takes a while.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 60_000 })

const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-demos-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const ledger = join(dir, "ledger.db")
const mandate = (...args: ReadonlyArray<string>) => runMandate(args, 280_000, "SIGINT")

describe("both demos into one ledger", () => {
  it("the Writ demo and the YEA demo leave one verifiable ledger holding both", async () => {
    const writ = await sharedDemo()
    expect(writ.status, writ.stdout.slice(-2000) + writ.stderr.slice(-2000)).toBe(0)
    // The SQLite file with its write-ahead log and key file, if the demo left them, as one copy.
    for (const suffix of ["", "-wal", "-shm", ".key"]) {
      if (existsSync(writ.ledger + suffix)) copyFileSync(writ.ledger + suffix, ledger + suffix)
    }
    const yea = await mandate("yea", "demo", "--ledger", ledger)
    expect(yea.status, yea.stdout.slice(-2000) + yea.stderr.slice(-2000)).toBe(0)

    const verify = await mandate("ledger", "verify", ledger)
    expect(verify.status, verify.stderr).toBe(0)
    expect(verify.stdout).toMatch(/^ok: ledger default \(local_full\), \d+ lines, chain intact/)

    const stats = await mandate("ledger", "stats", ledger, "--json")
    expect(stats.status, stats.stderr).toBe(0)
    const s = JSON.parse(stats.stdout) as { rows: Array<{ protocol: string; reason: string; count: number }>; summary: string }
    const reasons = (p: string) => new Set(s.rows.filter((r) => r.protocol === p).map((r) => r.reason))
    // Writ: accepted, consumed, and the demo's admission refusals with their section 7 codes.
    for (const r of ["accepted", "consumed", "not_narrowed", "out_of_bounds", "count_exhausted", "wrong_executor", "expired", "revoked", "bad_signature"]) {
      expect(reasons("writ"), r).toContain(r)
    }
    for (const r of ["proposal", "consent_required", "commit", "undo", "uses_spent"]) expect(reasons("yea"), r).toContain(r)
    expect(s.summary).toContain("Writ:")
    expect(s.summary).toContain("YEA:")

    // The same file, one line changed behind the ledger's back: verify names the break.
    const db = new Database(ledger)
    db.prepare("UPDATE ledger_lines SET line = replace(line, '\"accepted\"', '\"refused\"') WHERE seq = (SELECT min(seq) FROM ledger_lines WHERE line LIKE '%\"accepted\"%')").run()
    db.close()
    const broken = await mandate("ledger", "verify", ledger)
    expect(broken.status).toBe(1)
    expect(broken.stderr).toMatch(/^error: chain_broken at line \d+: /)
  })
})
