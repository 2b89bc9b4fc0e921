// Spawns worker.ts processes for the concurrency proof.
//
// The worker is bundled once per test file (esbuild, as scripts/build-cli.mjs bundles the bin) and
// every process runs that one file: started through tsx, each of the 20 or so workers a file starts
// spent about 10 s (3 s of CPU) transpiling and loading the sources before its first action on this
// 2-core machine, the bundle about 1.5 s (0.3 s of CPU). The code run is the same worker.ts.
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..")

let bundled: Promise<string> | undefined
let bundleDir: string | undefined
// Registered on the importing test file: the bundle goes with the file's run.
afterAll(() => {
  if (bundleDir !== undefined) rmSync(bundleDir, { recursive: true, force: true })
})
/** The bundled worker, built on first use. */
const workerBundle = (): Promise<string> =>
  (bundled ??= (async () => {
    // Under the repository's ignored .tmp/ (as test/support/bin-setup.ts): the bundle imports its one
    // external dependency, better-sqlite3, from the repository's node_modules, found by walking up.
    mkdirSync(join(root, ".tmp"), { recursive: true })
    const out = (bundleDir = mkdtempSync(join(root, ".tmp", "ledger-worker-")))
    const { build } = await import("esbuild")
    const file = join(out, "worker.mjs")
    await build({
      entryPoints: [join(here, "worker.ts")],
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
  })())

export interface Tally {
  readonly ok: number
  readonly denied: number
  readonly failed: number
  readonly recovered: number
  readonly other: ReadonlyArray<string>
}

/**
 * Runs a worker; with `killAfter` it is SIGKILLed once it reported that many settled actions, and
 * the promise resolves with undefined. `onProgress` hears each count of settled actions it reports.
 */
export const runWorker = async (args: object, killAfter?: number, onProgress?: (settled: number) => void): Promise<Tally | undefined> => {
  const worker = await workerBundle()
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [worker, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let errOut = ""
    p.stdout.on("data", (d) => {
      out += d
      const m = [...String(d).matchAll(/progress (\d+)/g)].at(-1)
      if (m !== undefined) onProgress?.(Number(m[1]))
      if (killAfter !== undefined && m !== undefined && Number(m[1]) >= killAfter) p.kill("SIGKILL")
    })
    p.stderr.on("data", (d) => (errOut += d))
    p.on("exit", (code, signal) => {
      if (signal === "SIGKILL" && killAfter !== undefined) return resolve(undefined)
      if (code !== 0) return reject(new Error(`worker exited ${code}: ${errOut}`))
      const last = out.trim().split("\n").at(-1) ?? ""
      try {
        resolve(JSON.parse(last) as Tally)
      } catch {
        reject(new Error(`bad worker output ${last} ${errOut}`))
      }
    })
  })
}
