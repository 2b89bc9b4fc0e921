// Runs `mandate yea ...` with its own YEA_HOME / YEA_PRINCIPAL_HOME, in this process with
// its stdin piped (as an agent's shell would), or as a child process at a pseudo-terminal through util-linux `script` (as a
// person would), the answer to any prompt written to its input. Every run has a time limit.
import { spawn, spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cliEntry, runCli } from "../support/cli.js"
import { repoRoot } from "../support/shared.js"

export interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface Homes {
  readonly root: string
  readonly home: string
  readonly principalHome: string
  readonly env: NodeJS.ProcessEnv
}

/** A fresh pair of folders (not created: `init` creates them 0700). */
export const homes = (): Homes => {
  const root = mkdtempSync(join(tmpdir(), "mandate-yea-cli-"))
  const home = join(root, "agent")
  const principalHome = join(root, "principal")
  return { root, home, principalHome, env: { ...process.env, NO_COLOR: "1", YEA_HOME: home, YEA_PRINCIPAL_HOME: principalHome } }
}

/** Writes a fixed seed as a key file (mode 0600) in a 0700 folder. */
export const writeSeed = (dir: string, name: string, seed: Uint8Array, mode = 0o600): string => {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  const path = join(dir, name)
  writeFileSync(path, Buffer.from(seed).toString("hex") + "\n", { mode })
  chmodSync(path, mode)
  return path
}


/** `mandate ...args` in this process (its run function) with `env` and `input` as its piped
 * stdin: not a terminal, as an agent's shell would run it. */
export const mandate = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, input = ""): Promise<Ran> => runCli(args, { env, input })

/** Whether util-linux `script` is here to give a child a pseudo-terminal. */
export const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/** `mandate ...args` at a pseudo-terminal; `input` is typed at it. stdout and stderr arrive mixed. */
export const mandateAtTerminal = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, input: string, timeoutMs = 90_000): Promise<Ran> => {
  const line = [process.execPath, ...cliEntry, ...args].map(shellQuote).join(" ")
  return new Promise((resolve) => {
    const child = spawn("script", ["-qec", line, "/dev/null"], { cwd: repoRoot, env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    child.stdout.on("data", (d: Buffer) => void (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => void (stdout += d.toString()))
    // Typed once the prompt is up; the pty keeps it until the child reads a line.
    child.stdin.write(input)
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout: stdout.replace(/\r/g, ""), stderr: "" })
    })
  })
}

/** The one-line failure a command prints: `error: <reason> at <where>: <why>`. */
export const errorLine = (r: Ran): string | undefined => {
  // At a terminal the line may follow a prompt on the same line.
  const line = (r.stderr + "\n" + r.stdout).split("\n").find((l) => l.includes("error: "))
  return line === undefined ? undefined : line.slice(line.indexOf("error: "))
}
