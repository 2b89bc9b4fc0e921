// The TypeScript examples of the docs are real code: each is taken from its page, run from the
// sources (the `mandate-source` export condition, so `import ... from "mandate"` is this repository's
// src/, never a dist/ that may be stale) and what it prints is checked. test/package runs the
// library example again as plain JavaScript against the packed and installed package. The README
// itself keeps the two commands of a clone.
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot } from "../support/shared.js"

const page = (name: string) => readFileSync(join(repoRoot, name), "utf8")

/** The first ```ts block after `heading` on a page. */
const example = (name: string, heading: string): string => {
  const text = page(name)
  const at = text.indexOf(heading)
  expect(at, `${name} has no "${heading}"`).toBeGreaterThanOrEqual(0)
  const block = /```ts\n([\s\S]*?)```/.exec(text.slice(at))
  expect(block, `${name} has no TypeScript example after "${heading}"`).not.toBeNull()
  return block![1]
}

// Inside the repository so that `mandate` resolves to this package (its self-reference).
const dir = mkdtempSync(join(repoRoot, ".docs-examples-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const runTs = (name: string, code: string) => {
  const file = join(dir, name)
  writeFileSync(file, code)
  return spawnSync(process.execPath, ["--conditions=mandate-source", "--import", "tsx", file], { cwd: repoRoot, encoding: "utf8", timeout: 120_000 })
}

describe("the README", () => {
  it("shows both commands", () => {
    const readme = page("README.md")
    expect(readme).toContain("npm ci && npm start")
    expect(readme).toContain("npm ci && npm test")
    expect(readme).toContain("npm run test:all")
  })
})

describe("docs/library.md", () => {
  it("has a Writ example that runs and prints the reasons it names", () => {
    const r = runTs("library.ts", example("docs/library.md", "## Writ: issue, delegate, verify a call"))
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("widen: not_narrowed")
    expect(r.stdout).toMatch(/call: [A-Za-z0-9_-]{43} verified under 2 writs/)
    expect(r.stdout).toContain("overcharge: out_of_bounds")
    expect(r.stdout).toContain("altered: bad_signature")
  })
})

describe("docs/yea-mcp.md", () => {
  it("shows the whole job server as it is shipped (src/examples/refund-jobs.ts, which the page's shell blocks run)", () => {
    expect(example("docs/yea-mcp.md", "## A whole job server")).toBe(readFileSync(join(repoRoot, "src/examples/refund-jobs.ts"), "utf8"))
  })
})

describe("docs/yea.md", () => {
  it("builds a service, connects an agent over yea:// and prints the receipt's Lens", () => {
    const r = runTs("yea.ts", example("docs/yea.md", "## Build a service, connect an agent"))
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^✓ Delete note n1 \(receipt r_[A-Za-z0-9_-]+\) · undo until /)
    expect(r.stdout).toContain("  - delete note/n1")
    expect(r.stdout).toContain("deleted: n1")
  }, 180_000)
})
