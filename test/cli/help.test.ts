import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/shared.js"

describe("mandate CLI", () => {
  it("prints its help listing the protocol groups", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", join(repoRoot, "src/cli/main.ts"), "--help"], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("writ")
    expect(r.stdout).toContain("yea")
  })
  it("answers a usage error with the missing option, exit status 1 and no logged failure", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", join(repoRoot, "src/cli/main.ts"), "writ", "issue"], { encoding: "utf8" })
    expect(r.status).toBe(1)
    expect(r.stdout + r.stderr).toContain("Expected to find option")
    expect(r.stdout + r.stderr).not.toContain("ERROR (")
  })
})
