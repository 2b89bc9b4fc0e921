// `mandate demo` (npm start) end to end: three processes on loopback, every expectation checked by
// the demo itself. The test asserts exit status 0, that the transcript names every reason the demo
// is meant to show, that every object exchanged was written, and that no executor process is left
// running afterwards. The run is the one this test run shares (test/support/demo-run.ts: the demo
// with `--ledger`, whose ledger test/ledger/demos.test.ts checks); the run with a declining payment
// handler is this file's own.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"

// Each command is a separate node process; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 })
import { type Ran, runMandate } from "../support/cli.js"
import { sharedDemo } from "../support/demo-run.js"
import { repoRoot } from "../support/shared.js"

const outBad = mkdtempSync(join(tmpdir(), "mandate-demo-bad-"))
afterAll(() => {
  rmSync(outBad, { recursive: true, force: true })
})

const run = (...extra: ReadonlyArray<string>): Promise<Ran> => runMandate(["demo", ...extra], 170_000, "SIGINT")

/** Executor processes whose command line names this run's output folder. */
const leftover = (out: string): Array<string> => {
  const found: Array<string> = []
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      if (cmd.includes(out) && cmd.includes("serve")) found.push(pid)
    } catch {
      // gone
    }
  }
  return found
}

describe("mandate demo", () => {
  it("runs A, B and C over HTTP and every expectation holds", async () => {
    const r = await sharedDemo()
    const out = r.out
    expect(r.status, r.stdout.slice(-3000) + r.stderr.slice(-2000)).toBe(0)
    const transcript = r.transcript
    expect(transcript).toContain("demo: every expectation held")
    expect(transcript).toMatch(/\d+ expectations checked, 0 failed/)
    expect(transcript).not.toContain("FAIL")
    // The seven refusals, each with its reason, and the unsigned error of section 7 steps 1-2.
    for (const reason of ["not_narrowed", "out_of_bounds", "count_exhausted", "not_reversible", "wrong_executor", "expired", "revoked"]) {
      expect(transcript, reason).toMatch(new RegExp(`signed refusal, st failed, reason ${reason}`))
    }
    expect(transcript).toContain("unsigned error bad_signature")
    // The rest of the story.
    for (const phrase of [
      "tree: valid (section 6.2)", "C reverses the charge", "answered from the store, byte for byte",
      "C's ack comes back in fwd", "A's in-flight call ends canceled", "accounted for by B's ack", "sys/tallies"
    ]) expect(transcript, phrase).toContain(phrase)
    // Every object exchanged is on disk, and the audit records.
    const files = readdirSync(out)
    expect(files.filter((f) => f.endsWith(".json")).length).toBeGreaterThan(30)
    expect(files).toContain("audit-B.jsonl")
    expect(files).toContain("audit-C.jsonl")
    expect(existsSync(join(out, "keys", "a.key"))).toBe(true)
    // No executor left running.
    expect(leftover(out)).toEqual([])
  })

  it("exits 1 and names what failed when C declines every charge, and still stops both executors", async () => {
    const r = await run("--out", outBad, "--c-handler", join(repoRoot, "test/demo/fixtures/declining-payment.ts"))
    expect(r.status).toBe(1)
    const transcript = readFileSync(join(outBad, "transcript.txt"), "utf8")
    expect(transcript).toContain("demo: FAILED")
    expect(transcript).toContain("failed: B answers with an ok tally")
    expect(transcript).toMatch(/\d+ expectations checked, [1-9]\d* failed/)
    expect(leftover(outBad)).toEqual([])
  })
})
