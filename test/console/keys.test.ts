// `mandate console --keys`: every key file that cannot name a principal stops the start with one
// error line naming its reason (before anything listens), as every command that reads a key does.
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect } from "vitest"
import { runCli } from "../support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-console-keys-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const key = (name: string, text: string, mode: number) => {
  const f = join(dir, name)
  writeFileSync(f, text)
  chmodSync(f, mode)
  return f
}

describe("mandate console --keys", () => {
  it.live("refuses a missing path, a key readable by others and a file that is not a hex seed", () =>
    Effect.gen(function*() {
      const open = key("open.key", `${"ab".repeat(32)}\n`, 0o644)
      const bad = key("bad.key", "not hex\n", 0o600)
      // A folder: its *.key files are read (the bad one among them is named).
      const folder = join(dir, "folder")
      mkdirSync(folder)
      writeFileSync(join(folder, "good.key"), `${"cd".repeat(32)}\n`, { mode: 0o600 })
      writeFileSync(join(folder, "worse.key"), "zz\n", { mode: 0o600 })
      const cases: Array<[string, string]> = [
        [join(dir, "absent.key"), "mandate/unreadable"],
        [open, "mandate/key_permissions"],
        [bad, "mandate/bad_key_file"],
        [folder, "mandate/bad_key_file"]
      ]
      for (const [path, reason] of cases) {
        const r = yield* Effect.promise(() => runCli(["console", "--keys", path, "--port", "0"]))
        expect({ path, status: r.status, lines: r.stderr.trim().split("\n").length }).toEqual({ path, status: 1, lines: 1 })
        expect(r.stderr).toMatch(new RegExp(`^error: ${reason} at `))
      }
    }), 120_000)
})
