// Spawns worker.ts processes for the cross-process tests.
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const worker = join(dirname(fileURLToPath(import.meta.url)), "worker.ts")

const start = (args: object) =>
  spawn(process.execPath, ["--import", "tsx", worker, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] })

export interface RaceTally {
  readonly ok: number
  readonly exhausted: number
  readonly other: ReadonlyArray<string>
}

/** Runs a race worker to completion and returns its tally. */
export const raceProcess = (args: object): Promise<RaceTally> =>
  new Promise((resolve, reject) => {
    const p = start({ ...args, mode: "race" })
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

/** Starts a hang worker, waits until it has reserved inside its open transaction, then SIGKILLs it. */
export const killMidTransaction = (args: object): Promise<void> =>
  new Promise((resolve, reject) => {
    const p = start({ ...args, mode: "hang", n: 1 })
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
