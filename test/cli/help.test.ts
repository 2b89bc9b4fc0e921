import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli.js"

describe("mandate CLI", () => {
  it("prints its help listing the protocol groups", async () => {
    const r = await runCli(["--help"])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("writ")
    expect(r.stdout).toContain("yea")
  })
  it("answers a usage error with the missing option, exit status 1 and no logged failure", async () => {
    const r = await runCli(["writ", "issue"])
    expect(r.status).toBe(1)
    expect(r.stdout + r.stderr).toContain("Expected to find option")
    expect(r.stdout + r.stderr).not.toContain("ERROR (")
  })
})
