// Spawns worker.ts processes for the cross-process tests, from one bundle per test file
// (test/support/worker-bundle.ts).
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { workerBundle } from "../support/worker-bundle.js"

const worker = join(dirname(fileURLToPath(import.meta.url)), "worker.ts")

const start = async (args: object) =>
  spawn(process.execPath, [await workerBundle(worker), JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] })

export interface RaceTally {
  readonly ok: number
  readonly exhausted: number
  readonly other: ReadonlyArray<string>
}

/** Runs a race worker to completion and returns its tally. */
export const raceProcess = async (args: object): Promise<RaceTally> => {
  const p = await start({ ...args, mode: "race" })
  return new Promise((resolve, reject) => {
    let out = ""
    let errOut = ""
    p.stdout.on("data", (d) => (out += d))
    p.stderr.on("data", (d) => (errOut += d))
    p.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`worker exited ${code}: ${errOut}`))
      try {
        resolve(JSON.parse(out.trim()) as RaceTally)
      } catch (e) {
        reject(new Error(`bad worker output ${out} ${errOut}`))
      }
    })
  })
}

/** Starts a hang worker, waits until it has reserved inside its open transaction, then SIGKILLs it. */
export const killMidTransaction = async (args: object): Promise<void> => {
  const p = await start({ ...args, mode: "hang", n: 1 })
  return new Promise((resolve, reject) => {
    let errOut = ""
    p.stderr.on("data", (d) => (errOut += d))
    p.stdout.on("data", (d) => {
      if (String(d).includes("reserved")) p.kill("SIGKILL")
    })
    p.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve()
      else reject(new Error(`worker was not killed mid-transaction (exit ${code}): ${errOut}`))
    })
  })
}
