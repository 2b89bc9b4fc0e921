// `mandate writ scenarios DIR`: one line per failed step, the closing `N passed, N failed` line
// (N counts scenarios), exit status 1 on any failure and 0 otherwise.
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot, sharedPath } from "../support/shared.js"

const dir = sharedPath("reference", "writ", "scenarios")
const main = join(repoRoot, "test/writ-executor/scenarios-main.ts")
const runCli = (args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, ["--import", "tsx", main, ...args], { cwd: repoRoot, encoding: "utf8" })

describe.skipIf(!dir)("writ scenarios command", () => {
  it("reports a tampered scenario's failed steps and exits 1", () => {
    const out = mkdtempSync(join(tmpdir(), "mandate-scen-"))
    const scenario = JSON.parse(readFileSync(join(dir!, "001_count_replay_and_root_acceptance.json"), "utf8"))
    scenario.steps[2].expect.tally.err.code = "out_of_bounds"
    writeFileSync(join(out, "001.json"), JSON.stringify(scenario))
    writeFileSync(join(out, "002.json"), readFileSync(join(dir!, "002_forward_call_checks_in_order.json")))
    const r = runCli([out])
    const lines = r.stdout.trim().split("\n")
    expect(lines.filter((l) => l.startsWith("FAIL 001.json")).length).toBe(2) // once per store
    expect(lines.every((l) => !l.startsWith("FAIL 002.json"))).toBe(true)
    expect(lines[lines.length - 1]).toBe("1 passed, 1 failed")
    expect(r.status).toBe(1)
  })

  it("passes the reference scenarios with exit status 0", () => {
    const r = runCli([dir!])
    const lines = r.stdout.trim().split("\n")
    expect(lines[lines.length - 1]).toMatch(/^\d+ passed, 0 failed$/)
    expect(r.status).toBe(0)
  })
})
