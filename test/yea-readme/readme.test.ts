// The README's YEA example is real code: extract it from the "## YEA" section, run it, and check
// that it prints the auto-committed receipt it shows.
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/shared.js"

describe("README, YEA section", () => {
  it("builds a service, connects an agent over yea:// and prints the receipt's Lens", () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const block = /## YEA\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)
    expect(block).not.toBeNull()
    const dir = mkdtempSync(join(repoRoot, ".readme-yea-"))
    try {
      const file = join(dir, "example.ts")
      writeFileSync(file, block![1])
      const r = spawnSync(process.execPath, ["--conditions=mandate-source", "--import", "tsx", file], { cwd: repoRoot, encoding: "utf8", timeout: 120_000 })
      expect(r.stderr).toBe("")
      expect(r.status).toBe(0)
      expect(r.stdout).toMatch(/^✓ Delete note n1 \(receipt r_[A-Za-z0-9_-]+\) · undo until /)
      expect(r.stdout).toContain("  - delete note/n1")
      expect(r.stdout).toContain("deleted: n1")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
