#!/usr/bin/env node
// Thin launcher: runs the TypeScript CLI through tsx so `npx mandate ...` works without a build step.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { dirname, join } from "node:path"
const root = join(dirname(fileURLToPath(import.meta.url)), "..")  // scripts/ -> repository root
const r = spawnSync(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...process.argv.slice(2)], { stdio: "inherit" })
process.exit(r.status ?? 1)
