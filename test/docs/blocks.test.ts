// How the docs test reads a page (blocks.ts): which blocks run, which are skipped and why, which
// output is checked, and that output differing from what a page shows is caught.
import { describe, expect, it } from "@effect/vitest"
import { missingLines, shellBlocks } from "./blocks.js"

const page = [
  "# A page",
  "",
  "```sh",
  "mandate keygen a.key",
  "```",
  "",
  "```text",
  "did:key:z6Mk…",
  "```",
  "",
  "<!-- docs-test: skip needs a clone and the network -->",
  "```sh",
  "npm ci",
  "```",
  "",
  "```sh",
  "echo one",
  "```",
  "",
  "It prints, later:",
  "",
  "```text",
  "not checked: prose stands between",
  "```",
  "",
  "```ts",
  "const x = 1",
  "```"
].join("\n")

describe("docs blocks", () => {
  it("finds the shell blocks in order, with their skip reason and the output shown right after", () => {
    expect(shellBlocks(page)).toEqual([
      { line: 3, code: "mandate keygen a.key", skip: undefined, expected: ["did:key:z6Mk…"] },
      { line: 12, code: "npm ci", skip: "needs a clone and the network", expected: [] },
      { line: 16, code: "echo one", skip: undefined, expected: [] }
    ])
  })

  it("refuses a page with a block never closed", () => {
    expect(() => shellBlocks("```sh\necho\n")).toThrow(/line 1: a ```sh block is never closed/)
  })

  it("finds each shown line in the output, in order, with … standing for anything", () => {
    const actual = "did:key:z6MkABC\nwrit XYZ (child 1 of ABC)\nstatus 200\n"
    expect(missingLines(["did:key:z6Mk…", "writ … (child 1 of …)", "status 200"], actual)).toEqual([])
  })

  it("names the shown lines that are missing, out of order, or differ", () => {
    const actual = "status 200\ntally ok\n"
    expect(missingLines(["tally ok", "status 200"], actual)).toEqual(["status 200"])
    expect(missingLines(["status 404"], actual)).toEqual(["status 404"])
    // Regular-expression characters in a shown line are literal.
    expect(missingLines(["tally.ok"], actual)).toEqual(["tally.ok"])
  })
})
