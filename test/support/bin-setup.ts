// Global setup of the integration project, whose tests start the CLI as a process: makes dist/
// current once, before any worker starts (test/package/pack.ts `ensureBuilt`, keyed by the
// sources' hash: a fresh `npm ci` has built it already, so nothing is built then), and provides the
// bundled bin in it (dist/bin/main.js, scripts/build-cli.mjs's output) to the project's workers
// (test/support/cli.ts `cliEntry`). The e2e project's files use the same dist/ (demo-setup.ts), so
// a run builds it at most once. A bundled CLI starts several times faster than tsx transpiling the
// sources on every start. Not for e2e: the demos start their executors from the sources
// (src/cli/demo/procs.ts), as `npm start` does.
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
import { builtMark } from "../../scripts/built.js"
import { ensureBuilt } from "../package/pack.js"

declare module "vitest" {
  export interface ProvidedContext {
    mandateTestBin: string
  }
}

const root = fileURLToPath(new URL("../..", import.meta.url))

export default async function setup(project: TestProject): Promise<void> {
  await ensureBuilt()
  project.provide("mandateTestBin", builtMark(root))
}
