// Global setup of the e2e project: a folder of this run's own where the demo's one shared run is
// kept (demo-run.ts `sharedDemo`), provided to the project's workers and removed at the end. Only
// the folder is made here; the demo itself runs when the first test that reads it asks, so a run of
// other e2e files alone does not pay for it.
//
// dist/ is made current here, once, before any worker starts (pack.ts `ensureBuilt`): the files
// that use it (test/package, test/docs/blocks.e2e) then find it built, and none rebuilds it under
// another one mid-run (a bin deleted under blocks.e2e gave mandate/not_built).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { ensureBuilt } from "../package/pack.js"

declare module "vitest" {
  export interface ProvidedContext {
    mandateDemoRun: string
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  await ensureBuilt()
  const dir = mkdtempSync(join(tmpdir(), "mandate-demo-run-"))
  project.provide("mandateDemoRun", dir)
  return () => rmSync(dir, { recursive: true, force: true })
}
