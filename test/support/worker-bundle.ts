// A worker script for tests that start it as several processes (test/ledger/processes.ts,
// test/accounting/processes.ts), bundled once per test file with esbuild (as scripts/build-cli.mjs
// bundles the bin), so that every process runs that one file. Started through tsx instead, each
// process spent about 10 s (3 s of CPU) transpiling and loading the sources before its first step on
// this 2-core machine; bundled, about 1.5 s (0.3 s of CPU). The code run is the same worker source.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))

const built = new Map<string, Promise<string>>()
const dirs: Array<string> = []
// Registered on the importing test file: the bundles go with the file's run.
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** The bundle of the worker script at `entry` (an absolute path), built on first use. */
export const workerBundle = (entry: string): Promise<string> => {
  const known = built.get(entry)
  if (known !== undefined) return known
  const p = (async () => {
    // Under the repository's ignored .tmp/ (as dist/bin is under the repository): the bundle imports its one
    // external dependency, better-sqlite3, from the repository's node_modules, found by walking up.
    mkdirSync(join(root, ".tmp"), { recursive: true })
    const out = mkdtempSync(join(root, ".tmp", "test-worker-"))
    dirs.push(out)
    const { build } = await import("esbuild")
    const file = join(out, basename(entry).replace(/\.ts$/, ".mjs"))
    await build({
      entryPoints: [entry],
      outfile: file,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      external: ["better-sqlite3"],
      // Bundled CommonJS dependencies call `require` for Node's own modules.
      banner: { js: "import{createRequire as __workerRequire}from\"node:module\";const require=__workerRequire(import.meta.url);" },
      logLevel: "warning"
    })
    return file
  })()
  built.set(entry, p)
  return p
}
