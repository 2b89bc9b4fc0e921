// Runs the `mandate` CLI: in this process through its run function (src/cli/run.ts), its output
// captured and its exit status returned, for every test that needs no process of its own; or as a
// child process, as a user would (the bundled CLI, or src/cli/main.ts through tsx, from the
// repository root, without colour), for servers that must be signalled or killed and for the demos. Shared by the
// CLI tests and the demo tests.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { PassThrough, Readable } from "node:stream"
import { inject } from "vitest"
import { repoRoot } from "./shared.js"

export interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Node's arguments that start the CLI: the bundled bin in dist/ the run's global setup made current (bin-setup.ts)
 * when there is one, else the sources through tsx. tsx is loaded either way: some tests hand the
 * CLI a handler module written in TypeScript. */
const testBin = (inject as (key: string) => string | undefined)("mandateTestBin")
export const cliEntry: ReadonlyArray<string> = [
  "--import",
  "tsx",
  testBin !== undefined && existsSync(testBin) ? testBin : join(repoRoot, "src/cli/main.ts")
]

/** Starts `mandate ...args`; its stdout and stderr are pipes. */
export const spawnMandate = (args: ReadonlyArray<string>): ChildProcess =>
  spawn(process.execPath, [...cliEntry, ...args], {
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

/** Runs `mandate ...args` to completion in this process: stdout and stderr captured, `env` its
 * environment (default: this process's, without colour), `input` its whole stdin. Runs in one
 * worker do not share any of these, so they may overlap. */
export const runCli = async (
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly input?: string } = {}
): Promise<Ran> => {
  const out = new PassThrough()
  const err = new PassThrough()
  let stdout = ""
  let stderr = ""
  out.on("data", (d: Buffer) => { stdout += d.toString() })
  err.on("data", (d: Buffer) => { stderr += d.toString() })
  // Imported on first use: the files that only start the CLI as a process (spawnMandate) then do
  // not load its command line (@effect/cli, the platform) into their worker.
  const { run } = await import("../../src/cli/run.js")
  const status = await run(args, {
    stdout: out,
    stderr: err,
    stdin: Readable.from(options.input === undefined || options.input === "" ? [] : [Buffer.from(options.input)]),
    env: options.env ?? { ...process.env, NO_COLOR: "1" }
  })
  // Whatever was written is through the pipes before the streams end.
  await new Promise<void>((resolve) => setImmediate(resolve))
  return { status, stdout, stderr }
}
