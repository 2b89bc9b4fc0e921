// Runs the `mandate` CLI as a child process, as a user would: node with tsx, src/cli/main.ts, from
// the repository root, without colour. Shared by the CLI tests and the demo test.
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { repoRoot } from "./shared.js"

export interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Starts `mandate ...args`; its stdout and stderr are pipes. */
export const spawnMandate = (args: ReadonlyArray<string>): ChildProcess =>
  spawn(process.execPath, ["--import", "tsx", join(repoRoot, "src/cli/main.ts"), ...args], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"]
  })

/** Runs `mandate ...args` to completion (asynchronously, so the test worker's event loop stays
 * free), sending `killSignal` if it is still running after `timeoutMs`. */
export const runMandate = (
  args: ReadonlyArray<string>,
  timeoutMs: number,
  killSignal: NodeJS.Signals
): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawnMandate(args)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d: Buffer) => { stdout += d.toString() })
    child.stderr!.on("data", (d: Buffer) => { stderr += d.toString() })
    const timer = setTimeout(() => child.kill(killSignal), timeoutMs)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
