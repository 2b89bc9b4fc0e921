// The README's library example is real code: extract it, run it, check what it prints.
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "./support/shared.js"

describe("README", () => {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8")

  it("shows both commands", () => {
    expect(readme).toContain("npm ci && npm start")
    expect(readme).toContain("npm ci && npm test")
    expect(readme).toContain("npm run test:all")
  })

  it("has a library example that runs and prints the reasons it names", () => {
    const block = /## Library[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)
    expect(block).not.toBeNull()
    // Run it from inside the repository so that `import ... from "mandate"` resolves to this package,
    // and to its sources (the `mandate-source` export condition), never to a dist/ that may be stale.
    // test/package runs it again as plain JavaScript against the packed and installed package.
    const dir = mkdtempSync(join(repoRoot, ".readme-"))
    try {
      const file = join(dir, "example.ts")
      writeFileSync(file, block![1])
      const r = spawnSync(process.execPath, ["--conditions=mandate-source", "--import", "tsx", file], { cwd: repoRoot, encoding: "utf8" })
      expect(r.stderr).toBe("")
      expect(r.status).toBe(0)
      expect(r.stdout).toContain("widen: not_narrowed")
      expect(r.stdout).toMatch(/call: [A-Za-z0-9_-]{43} verified under 2 writs/)
      expect(r.stdout).toContain("overcharge: out_of_bounds")
      expect(r.stdout).toContain("altered: bad_signature")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
