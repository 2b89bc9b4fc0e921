#!/usr/bin/env node
// The `mandate` bin: runs the bundled CLI (dist/bin/main.js, which `npm run build` makes and the
// published package ships) in this process, with no TypeScript loader. It finds the package from
// its own real location (Node resolves a symlinked entry point, as npm's bin links and
// `npm install -g` make), so it works from any directory. When something it needs is missing it
// says so in the documented one-line form, `error: <reason> at <where>: <why>`, never a stack trace.
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const fail = (reason, where, why) => {
  process.stderr.write(`error: ${reason} at ${where}: ${why}\n`)
  process.exit(1)
}

if (Number(process.versions.node.split(".")[0]) < 20) {
  fail("mandate/node_version", `node ${process.version}`, "Mandate needs Node 20 or later")
}
const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const main = join(root, "dist", "bin", "main.js")
if (!existsSync(main)) fail("mandate/not_built", main, `the command line is not built; run \`npm run build\` in ${root}`)
try {
  await import(pathToFileURL(main).href)
} catch (e) {
  // Only loading can fail here (a command's own failures are printed by the CLI itself): a
  // dependency missing or a file damaged.
  const why = e instanceof Error ? e.message.split("\n")[0] : String(e)
  fail("mandate/broken_install", main, why)
}
