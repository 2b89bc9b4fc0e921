// docs/cli.md is what `npm run docs:cli` would write now: the CLI's own help for every command.
// The page is compared, never written, here.
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { cliReference } from "../../src/cli/reference.js"
import { isGroup, tree } from "../../src/cli/tree.js"
import { repoRoot } from "../support/shared.js"

describe("docs/cli.md", () => {
  it("is the CLI's help as `npm run docs:cli` writes it now (run it after changing a command)", async () => {
    const page = readFileSync(join(repoRoot, "docs", "cli.md"), "utf8")
    const now = await cliReference()
    expect(page === now, "docs/cli.md is stale: run `npm run docs:cli`").toBe(true)
  })

  it("has a section for every command of the tree", async () => {
    const page = await cliReference()
    for (const e of tree) {
      for (const path of isGroup(e) ? [[e.name], ...e.subcommands.map((s) => [e.name, s.name])] : [[e.name]]) {
        expect(page).toContain(`\n### mandate ${path.join(" ")}\n\n\`\`\`text\nmandate ${path.join(" ")}`)
      }
    }
    // And the commands inside a command (`writ files run`).
    for (const nested of ["writ files run", "writ files check", "writ jws wrap", "writ jws unwrap"]) expect(page).toContain(`\n### mandate ${nested}\n`)
    expect(page).not.toContain("A user-defined piece of text")
  })
})
