// Global setup of the integration project, whose tests start the CLI as a process: bundles it once
// per run (scripts/build-cli.mjs, the bin's own build) into a folder of this run's own, and provides
// its path to the project's workers (test/support/cli.ts `cliEntry`). A bundled CLI starts several
// times faster than tsx transpiling the sources on every start. Not for e2e: the demos start their
// executors from the sources (src/cli/demo/procs.ts), as `npm start` does.
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    mandateTestBin: string
  }
}

const root = fileURLToPath(new URL("../..", import.meta.url))

export default function setup(project: TestProject): () => void {
  // Under the repository's ignored .tmp/, not the system's temp folder: the bundle imports its
  // one external dependency (better-sqlite3) from the repository's node_modules, found by walking up.
  mkdirSync(join(root, ".tmp"), { recursive: true })
  const out = mkdtempSync(join(root, ".tmp", "test-bin-"))
  const r = spawnSync(process.execPath, [join(root, "scripts", "build-cli.mjs"), out], { cwd: root, encoding: "utf8" })
  if (r.status !== 0) throw new Error(`building the CLI for the tests failed: ${r.stderr}`)
  project.provide("mandateTestBin", join(out, "main.js"))
  return () => rmSync(out, { recursive: true, force: true })
}
