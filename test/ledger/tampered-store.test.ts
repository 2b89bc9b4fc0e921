// `mandate ledger verify` of a SQLite ledger checks what the store keeps beside the lines: each
// row's stored hash against its line (`chain_broken`), and the mode the store declares against the
// header line's (`mode_mismatch`). The file is edited directly, as a writer with access to it could.
import Database from "better-sqlite3"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import { runCli } from "../support/cli.js"

vi.setConfig({ testTimeout: 120_000 })

const dir = mkdtempSync(join(tmpdir(), "mandate-tampered-store-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ledger = async (name: string, mode: string) => {
  const db = join(dir, name)
  expect((await runCli(["ledger", "init", db, "--mode", mode])).status).toBe(0)
  const events = join(dir, `${name}.jsonl`)
  writeFileSync(events, `${JSON.stringify({ type: "action", run_id: "r1", action: { id: "a1", kind: "llm", metadata: { id: "a1" }, estimate: { tokens: 10, usd: "0.30", latency_ms: 0, risk: 0 } } })}\n`)
  const rec = await runCli(["ledger", "record", db, events])
  expect(rec.status, rec.stderr).toBe(0)
  expect((await runCli(["ledger", "verify", db])).status).toBe(0)
  return db
}
const edit = (db: string, statement: string) => {
  const h = new Database(db)
  try {
    expect(h.prepare(statement).run().changes).toBeGreaterThan(0)
  } finally {
    h.close()
  }
}
const refused = (r: { status: number | null; stderr: string }, reason: string) => {
  expect(r.status, r.stderr).toBe(1)
  expect(r.stderr).toMatch(new RegExp(`^error: ${reason}( at [^:]+)?: .+\\n$`))
}

describe("mandate ledger verify of an edited SQLite store", () => {
  it("finds a stored hash that is not its line's: chain_broken", async () => {
    const db = await ledger("hash.db", "local_full")
    edit(db, "UPDATE ledger_lines SET hash = 'AAAA' WHERE seq = 0")
    const r = await runCli(["ledger", "verify", db])
    refused(r, "chain_broken")
    // Named by its line, as every break of the chain is.
    expect(r.stderr).toMatch(/^error: chain_broken at line 1: /)
  })

  it("finds a declared mode that is not the header line's: mode_mismatch", async () => {
    const db = await ledger("mode.db", "local_full")
    edit(db, "UPDATE ledger_meta SET mode = 'safe_telemetry'")
    refused(await runCli(["ledger", "verify", db]), "mode_mismatch")
  })
})
