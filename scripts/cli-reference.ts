// `npm run docs:cli`: writes docs/cli.md, the CLI reference, from the CLI's own help
// (src/cli/reference.ts). test/cli/reference.test.ts fails when the checked-in page differs from
// what this would write now; run this after changing a command, an option or a description.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { cliReference } from "../src/cli/reference.js"

const page = join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "cli.md")
mkdirSync(dirname(page), { recursive: true })
writeFileSync(page, await cliReference())
console.log(`wrote ${page}`)
