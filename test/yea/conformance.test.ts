// The conformance runner over the published YEA vectors (../shared, read in place), plus synthetic
// files of our own to show the runner and the CLI report failures (so a pass means something).
import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runCli } from "../support/cli.js"
import { checkFile, runConformance, summarize } from "../../src/yea/conformance.js"
import { sharedPath } from "../support/shared.js"
import { agentKey, ask, issue, principalKey, NOW } from "./_helpers.js"

const dir = sharedPath("reference", "yea", "conformance")
const run = (d: string) => runConformance(d).pipe(Effect.provide(NodeFileSystem.layer))

describe.skipIf(!dir)("published YEA conformance vectors", () => {
  it.effect("every case of every file passes, approval.json included, nothing skipped", () =>
    Effect.gen(function* () {
      const files = yield* run(dir!)
      const summary = summarize(files)
      expect(summary.failures).toEqual([])
      const ran = files.filter((f) => f.skipped === undefined).map((f) => f.file)
      expect(ran).toEqual(["canonical.json", "hash.json", "keys.json", "proof.json", "printable.json", "lens.json", "uses.json", "grants.json", "approval.json"])
      for (const f of files.filter((f) => f.skipped === undefined)) expect(f.cases.length).toBeGreaterThan(0)
      expect(summary.skipped).toEqual([])
      expect(summary.passed).toBeGreaterThan(250)
    }))
})

const fail = (file: string, json: unknown) => Effect.map(checkFile(file, json), (f) => summarize([f]))

describe("the runner reports failures", () => {
  it.effect("canonical: a wrong expectation and a missed error", () =>
    Effect.gen(function* () {
      const s = yield* fail("canonical.json", [
        { name: "right", input: { b: 1, a: 2 }, canonical: '{"a":2,"b":1}' },
        { name: "wrong", input: { b: 1, a: 2 }, canonical: '{"b":1,"a":2}' },
        { name: "missed error", input: { s: "ok" }, error: true }
      ])
      expect([s.passed, s.failed]).toEqual([1, 2])
      expect(s.failures[0]).toMatch(/^canonical\.json: wrong: /)
      expect(s.failures[1]).toMatch(/^canonical\.json: missed error: /)
    }))
  it.effect("grants: an expectation the implementation does not meet", () =>
    Effect.gen(function* () {
      const token = issue([{ svc: ["shop.example"] }])
      const c = (name: string, expect: unknown) => ({ name, token, trusted: [principalKey], proofKey: agentKey, ctx: { ...ask(), now: NOW }, expect })
      const s = yield* fail("grants.json", { cases: [c("ok", { ok: true }), c("claims forbidden", { ok: false, code: "forbidden" })] })
      expect([s.passed, s.failed]).toEqual([1, 1])
      expect(s.failures[0]).toMatch(/^grants\.json: claims forbidden: expected "forbidden", got ok/)
    }))
  it.effect("uses, keys, hash: malformed files and wrong answers fail", () =>
    Effect.gen(function* () {
      expect((yield* fail("uses.json", { wellFormed: [] })).failed).toBe(1)
      expect((yield* fail("uses.json", { quantities: [{ quantity: { amount: 5, scale: 1 }, lens: "5" }], wellFormed: [{ name: "x", uses: {}, valid: false }] })).failed).toBe(2)
      expect((yield* fail("keys.json", [{ seed: "AAAA", public: "ed25519:x" }])).failed).toBe(1)
      expect((yield* fail("hash.json", [{ name: "h", proposal: { id: "p" }, hash: "nope" }])).failed).toBe(1)
    }))
  it.effect("approval.json: a file without its sections fails, and is never skipped", () =>
    Effect.gen(function* () {
      const s = yield* fail("approval.json", { seeds: {} })
      expect([s.passed, s.failed, s.skipped.length]).toEqual([0, 1, 0])
      const t = yield* fail("approval.json", { keys: {}, phrases: [{ typed: "approve", phrase: "approve", match: false }] })
      expect(t.failures).toContain("approval.json: phrases: \"approve\": expected match=false")
    }))
})

describe("mandate yea conformance DIR", () => {
  it("prints one line per failed case, the counts, and exits 1", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "yea-conf-"))
    try {
      writeFileSync(
        join(tmp, "canonical.json"),
        JSON.stringify([
          { name: "right", input: [1], canonical: "[1]" },
          { name: "wrong", input: [1], canonical: "[2]" }
        ])
      )
      writeFileSync(join(tmp, "approval.json"), "{}")
      const { status, stdout: out } = await runCli(["yea", "conformance", tmp])
      expect(status).toBe(1)
      const lines = out.trim().split("\n")
      expect(lines[0]).toMatch(/^canonical\.json: wrong: expected "\[2\]", got "\[1\]"$/)
      expect(lines).toContain("approval.json: (file): expected the approval.json sections")
      expect(lines[lines.length - 1]).toBe("1 passed, 2 failed")
    } finally {
      rmSync(tmp, { recursive: true, force: true })
    }
  })
  it.skipIf(!dir)("exits 0 on the published vectors", async () => {
    const r = await runCli(["yea", "conformance", dir!])
    expect(r.status).toBe(0)
    const out = r.stdout
    expect(out.trim().split("\n").pop()).toMatch(/^\d+ passed, 0 failed$/)
  })
})
