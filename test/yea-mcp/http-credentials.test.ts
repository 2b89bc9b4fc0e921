// `mandate yea mcp-example --http` reads its credentials through Config from the run's
// environment (src/cli/yea-mcp.ts `httpCredentials`): a token shorter than 32 characters is the
// command's typed failure `mandate/bad_token` (never a defect of the server), a missing token or
// person is `mandate/usage`, and the token itself is never printed.
import { describe, expect, it } from "@effect/vitest"
import { runCli } from "../support/cli.js"

const seed = Buffer.alloc(32, 7).toString("base64url")
const args = ["yea", "mcp-example", "--server-seed", seed, "--http"]
const env = (extra: Record<string, string>) => ({ PATH: process.env.PATH ?? "", NO_COLOR: "1", ...extra })

describe("yea mcp-example --http credentials", () => {
  it("a short YEA_HTTP_TOKEN fails mandate/bad_token, without printing it", async () => {
    const token = "s3cret-but-short"
    const r = await runCli(args, { env: env({ YEA_HTTP_TOKEN: token, YEA_SUB: "person-1" }) })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("mandate/bad_token")
    expect(r.stderr).toContain("32")
    expect(r.stdout + r.stderr).not.toContain(token)
  })

  it("a missing YEA_HTTP_TOKEN is mandate/usage naming it", async () => {
    const r = await runCli(args, { env: env({ YEA_SUB: "person-1" }) })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("mandate/usage")
    expect(r.stderr).toContain("YEA_HTTP_TOKEN")
  })

  it("a missing or empty YEA_SUB is mandate/usage naming it", async () => {
    for (const extra of [{}, { YEA_SUB: "" }] as ReadonlyArray<Record<string, string>>) {
      const r = await runCli(args, { env: env({ YEA_HTTP_TOKEN: "t".repeat(40), ...extra }) })
      expect(r.status).toBe(1)
      expect(r.stderr).toContain("mandate/usage")
      expect(r.stderr).toContain("YEA_SUB")
    }
  })
})
