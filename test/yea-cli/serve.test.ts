// `mandate yea serve --module FILE`: a user's own service, reached with `mandate yea do` over
// stdio: (the service as the child `do` starts), and the refusals of a bad module or a bad choice.
import { afterAll, describe, expect, it } from "vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "../support/shared.js"
import { AGENT, principalKey } from "../yea/_helpers.js"
import { errorLine, homes, mandate, writeSeed } from "./run.js"
import { cliEntry } from "../support/cli.js"

const T = 300_000
mkdirSync(join(repoRoot, ".tmp"), { recursive: true })
// Inside the repository (ignored .tmp/), so the module resolves `effect` from its node_modules.
const dir = mkdtempSync(join(repoRoot, ".tmp", "yea-serve-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const good = join(dir, "notes.ts")
writeFileSync(good, `import { Effect } from "effect"
export const service = (trust: ReadonlyArray<string>) => ({
  id: "notes.example", name: "Notes", trust,
  capabilities: { "notes.list": { kind: "ask", summary: "List notes", run: () => Effect.succeed(["buy milk"]) } }
})
`)
const empty = join(dir, "empty.ts")
writeFileSync(empty, "export const nothing = 1\n")
const h = homes()
writeSeed(h.home, "agent.key", AGENT)

describe("mandate yea serve --module", () => {
  it("serves the module's service; do reaches it over stdio:", async () => {
    const command = [process.execPath, ...cliEntry, "yea", "serve", "--module", good, "--stdio", "--trust", principalKey].join(" ")
    const hello = await mandate(["yea", "do", "stdio:", "HELLO", "--command", command], h.env)
    expect(hello.status, hello.stderr).toBe(0)
    expect(hello.stdout).toContain("# Notes (notes.example)")
    const ask = await mandate(["yea", "do", "stdio:", "ASK", "notes.list", "--command", command], h.env)
    expect(ask.stdout).toContain("buy milk")
  }, T)

  it("refuses a module without a service, both a name and a module, and neither", async () => {
    expect(errorLine(await mandate(["yea", "serve", "--module", empty, "--trust", principalKey], h.env))).toMatch(/^error: invalid_params at --module: .*exports no service spec/)
    expect(errorLine(await mandate(["yea", "serve", "shop", "--module", good], h.env))).toMatch(/^error: invalid_params at SERVICE: /)
    expect(errorLine(await mandate(["yea", "serve"], h.env))).toMatch(/^error: invalid_params at SERVICE: /)
    expect(errorLine(await mandate(["yea", "do", "stdio:", "HELLO"], h.env))).toMatch(/^error: bad_frame at stdio:: /)
  }, T)
})
