// `mandate writ files run|check` as a user runs them: a call handed over with `writ call --out`
// beside the work, one pass of the executor over the folder, the tally checked by the delegator.
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { mandate, noStack } from "../cli-writ/run.js"
import { repoRoot } from "../support/shared.js"

const did = (out: string) => out.match(/did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+/)![0]

describe("mandate writ files (CLI)", () => {
  it("runs a folder's calls once and checks each tally beside its work", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mandate-files-cli-"))
    const shared = join(dir, "shared")
    mkdirSync(shared)
    const [a, c] = await Promise.all([mandate("keygen", join(dir, "a.key")), mandate("keygen", join(dir, "c.key"))])
    const [A, C] = [did(a.stdout), did(c.stdout)]
    await mandate("writ", "issue", "--key", join(dir, "a.key"), "--hld", C, "--act", "travel", "--max", "amount=60000", "--ttl", "3600", "--out", join(dir, "grant.json"))
    const work = join(shared, "invoice.txt")
    writeFileSync(work, "invoice 7\n")
    const call = await mandate("writ", "call", "--key", join(dir, "a.key"), "--chain", join(dir, "grant.json"), "--op", "travel/charge",
      "--args", '{"amount":58900,"currency":"USD"}', "--out", `${work}.writ-call.json`)
    expect(call.status).toBe(0)
    const before = await mandate("writ", "files", "check", work)
    expect(before.status).toBe(1)
    expect(before.stderr).toMatch(/^error: missing_tally at .*invoice\.txt\.writ-tally\.json/m)
    const handler = join(repoRoot, "src/examples/payment.ts")
    const run = ["writ", "files", "run", shared, "--key", join(dir, "c.key"), "--root", A, "--handler", handler, "--store", join(dir, "c.sqlite")]
    const first = await mandate(...run)
    expect(first.status).toBe(0)
    expect(first.stdout).toContain(`ok  ${work}`)
    expect(first.stdout).toContain("1 executed")
    const check = await mandate("writ", "files", "check", work)
    expect(check.status).toBe(0)
    expect(check.stdout).toMatch(/^tally [A-Za-z0-9_-]{43}: valid/)
    // A second pass finds nothing to do.
    expect((await mandate(...run)).stdout).toContain("0 executed")
    // A tally edited after signing is refused, in one line.
    const answer = JSON.parse(readFileSync(`${work}.writ-tally.json`, "utf8")) as { tally: { used: Record<string, number> } }
    answer.tally.used = { amount: 1 }
    writeFileSync(`${work}.writ-tally.json`, JSON.stringify(answer))
    const forged = await mandate("writ", "files", "check", work)
    expect(forged.status).toBe(1)
    expect(forged.stderr).toMatch(/^error: bad_signature/m)
    expect(noStack(forged)).toBe(true)
  }, 600_000)
})
