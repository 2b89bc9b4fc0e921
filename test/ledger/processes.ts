// Spawns worker.ts processes for the concurrency proof, from one bundle per test file
// (test/support/worker-bundle.ts).
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { workerBundle } from "../support/worker-bundle.js"

const worker = join(dirname(fileURLToPath(import.meta.url)), "worker.ts")

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
  const bundle = await workerBundle(worker)
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [bundle, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] })
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
