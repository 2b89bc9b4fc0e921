// The shared Writ v0.1 corpus (section 14), run in place from ../shared; skipped with a notice when
// absent. Every vector must pass, each rejection with the spec's reason.
import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runCli } from "../support/cli.js"
import { formatFailure, runConformance, runVectorText, summary } from "../../src/writ/conformance.js"
import { sharedPath } from "../support/shared.js"

const dir = sharedPath("reference", "writ", "vectors")

describe.skipIf(!dir)("Writ v0.1 conformance vectors", () => {
  it("passes every vector in the shared corpus", async () => {
    const results = await Effect.runPromise(runConformance(dir!).pipe(Effect.provide(NodeContext.layer)))
    expect(results.length).toBeGreaterThan(200)
    const failures = results.filter((r) => !r.pass).map(formatFailure)
    expect(failures).toEqual([])
    expect(summary(results)).toBe(`${results.length} passed, 0 failed`)
  })

  it("fails a vector whose expectation is inverted (the runner can fail)", async () => {
    const text = readFileSync(join(dir!, "054_verify_writ_tampered_exp.json"), "utf8")
    const v = JSON.parse(text)
    const flipped = JSON.stringify({ ...v, reason: "malformed" })
    const r = await Effect.runPromise(runVectorText("x.json", flipped))
    expect(r.pass).toBe(false)
    expect(r.actualReason).toBe("bad_signature")
    const accepted = JSON.stringify({ ...v, expect: "accept", reason: undefined })
    expect((await Effect.runPromise(runVectorText("y.json", accepted))).pass).toBe(false)
  })

  it("`mandate writ conformance DIR` prints failures and the summary, exit 1 on a failure", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "writ-vectors-"))
    const good = readFileSync(join(dir!, "014_narrows_max_equal.json"), "utf8")
    writeFileSync(join(tmp, "a.json"), good)
    const run = () => runCli(["writ", "conformance", tmp])
    let r = await run()
    expect(r.stdout.trim()).toBe("1 passed, 0 failed")
    expect(r.status).toBe(0)
    writeFileSync(join(tmp, "b.json"), JSON.stringify({ ...JSON.parse(good), expect: "reject", reason: "not_narrowed" }))
    r = await run()
    const lines = r.stdout.trim().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toContain("b.json")
    expect(lines[0]).toContain("expected reject not_narrowed, got accept")
    expect(lines[1]).toBe("1 passed, 1 failed")
    expect(r.status).toBe(1)
  })
})
