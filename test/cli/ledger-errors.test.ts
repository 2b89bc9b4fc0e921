// `mandate ledger` failures print as every CLI failure does, `error: <code> at <where>: <why>`,
// naming no class, driver or Schema type of the implementation (src/cli/ledger-failure.ts).
import { afterAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ledgerFailure } from "../../src/cli/ledger-failure.js"
import { runCli } from "../support/cli.js"

/** Names only the implementation knows, which a user's error line must not carry. */
const INTERNAL = /StoreError|LedgerError|ParseError|SqlError|PgClient|FiberFailure|FileSystem\.|readonly|\n\s+at /

const oneLine = (stderr: string, code: string, where: string): void => {
  expect(stderr).not.toMatch(INTERNAL)
  expect(stderr.split("\n").length).toBe(2)
  expect(stderr.startsWith(`error: ${code} at ${where}: `), stderr).toBe(true)
}

describe("mandate ledger errors", () => {
  const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-errors-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("a store that cannot be opened is mandate/store_unavailable at the store", async () => {
    const missing = join(dir, "no-such-folder", "l.db")
    const a = await runCli(["ledger", "init", missing])
    expect(a.status).toBe(1)
    oneLine(a.stderr, "mandate/store_unavailable", missing)
    const b = await runCli(["ledger", "init", dir])
    oneLine(b.stderr, "mandate/store_unavailable", dir)
    // A PostgreSQL server that refuses the connection (loopback port 1): the driver's name is not shown.
    const c = await runCli(["ledger", "init", "postgres://u@127.0.0.1:1/x#s"])
    expect(c.status).toBe(1)
    expect(c.stderr).toMatch(/^error: mandate\/store_unavailable at postgres:\/\/127\.0\.0\.1:1\/x[^\n]*: [^\n]*ECONNREFUSED/)
    expect(c.stderr).not.toMatch(INTERNAL)
  })

  it("an event that does not decode names its line and member, not a TypeScript type", async () => {
    const db = join(dir, "l.db")
    expect((await runCli(["ledger", "init", db])).status).toBe(0)
    const file = (name: string, text: string) => {
      const f = join(dir, name)
      writeFileSync(f, text)
      return f
    }
    const extra = await runCli(["ledger", "record", db, file("extra.jsonl", '{"type":"action","bogus":1}\n')])
    oneLine(extra.stderr, "invalid_event", "line 1, bogus")
    expect(extra.stderr).toContain("not a member of this event")
    const kind = await runCli(["ledger", "record", db, file("kind.jsonl", '{"type":"nope"}\n')])
    oneLine(kind.stderr, "invalid_event", "line 1, type")
    const notObject = await runCli(["ledger", "record", db, file("string.jsonl", '"x"\n')])
    oneLine(notObject.stderr, "invalid_event", "line 1")
    expect(notObject.stderr).toContain('not an event (got "x")')
    const wrongType = await runCli(["ledger", "record", db, file("id.jsonl", '{"type":"action","run_id":"r","action":{"id":5}}\n')])
    oneLine(wrongType.stderr, "invalid_event", "line 1, action.id")
  })

  it("a check without a member of its own is placed at the command", async () => {
    const r = await runCli(["ledger", "recover", join(dir, "l.db")])
    oneLine(r.stderr, "invalid_argument", "mandate ledger recover")
  })

  it("a file the system refuses is mandate/unreadable at the file; anything else mandate/internal", () => {
    const sys = { _tag: "SystemError", reason: "PermissionDenied", module: "FileSystem", method: "readFile", pathOrDescriptor: "/x/p.json", description: "EACCES: permission denied", message: "FileSystem.readFile (/x/p.json): EACCES: permission denied" }
    expect(ledgerFailure(sys, "mandate ledger replay")).toEqual({ reason: "mandate/unreadable", where: "/x/p.json", why: "EACCES: permission denied" })
    expect(ledgerFailure(new Error("SqliteError: disk I/O error"), "mandate ledger stats")).toEqual({ reason: "mandate/internal", where: "mandate ledger stats", why: "disk I/O error" })
  })
})
