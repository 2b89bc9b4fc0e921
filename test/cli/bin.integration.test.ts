// The bundled `mandate` bin (scripts/mandate.mjs -> dist/bin, rebuilt here when stale)
// as a real process, against the CLI run in this process (its run function, which every other CLI
// test uses): the same arguments give the same exit status and the same output, the process's exit
// status is the run's, its environment reaches the commands, and a signal stops a server cleanly.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt } from "../package/pack.js"
import { type Ran, runCli } from "../support/cli.js"
import { repoRoot } from "../support/shared.js"
import { principalKey } from "../yea/_helpers.js"

const bin = join(repoRoot, "scripts", "mandate.mjs")

const runBin = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => void (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => void (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 100_000)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })

const noStack = (r: Ran): boolean => !/\n\s+at .+:\d+:\d+/.test(r.stdout + r.stderr)

// dist/ is shared with the package tests, which pack it: a rebuild here must take their lock, or
// `npm pack` in another worker can catch dist/bin/ deleted mid-build (a tarball without the bin).
beforeAll(() => ensureBuilt(), 600_000)

describe("the bundled bin and the run function agree", () => {
  const dir = mkdtempSync(join(tmpdir(), "mandate-bin-"))
  writeFileSync(join(dir, "canonical.json"), JSON.stringify([{ name: "right", input: [1], canonical: "[1]" }, { name: "wrong", input: [1], canonical: "[2]" }]))
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, number]> = [
    ["top-level help", ["--help"], 0],
    ["a group's help", ["writ", "--help"], 0],
    ["a command's help", ["ledger", "verify", "--help"], 0],
    ["the version", ["--version"], 0],
    ["a missing option (usage error)", ["writ", "issue"], 1],
    ["an unknown command", ["no-such-command"], 1],
    ["a missing file", ["writ", "verify", join(dir, "absent.json")], 1],
    // A refusal, not an error: the failed cases on stdout, no error line.
    ["a conformance run with a failing case", ["yea", "conformance", dir], 1],
    ["a ledger store that does not exist", ["ledger", "verify", join(dir, "absent.sqlite")], 1]
  ]
  for (const [name, args, status] of cases) {
    it(name, async () => {
      const [real, inProcess] = await Promise.all([runBin(args), runCli(args)])
      expect(real.status).toBe(status)
      expect(inProcess).toEqual(real)
      expect(noStack(real)).toBe(true)
      // Every failure but a refusal is one error line naming its reason.
      if (status === 1 && args[1] !== "conformance") expect(real.stderr).toMatch(/^error: \S+( at .+)?: \S/m)
    })
  }
})

describe("the bundled bin as a process", () => {
  it("keygen writes a 0600 key file and prints its did:key; a second run refuses, exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mandate-bin-key-"))
    const key = join(dir, "a.key")
    const made = await runBin(["keygen", key])
    expect(made.status).toBe(0)
    expect(made.stdout.trim()).toMatch(/^did:key:z\S+$/)
    expect(statSync(key).mode & 0o777).toBe(0o600)
    const again = await runBin(["keygen", key])
    expect(again.status).toBe(1)
    expect(again.stderr).toMatch(/^error: mandate\/\S+ at /m)
    expect(noStack(again)).toBe(true)
  })

  it("reads its homes from its environment (yea init creates them 0700 with 0600 keys)", async () => {
    const root = mkdtempSync(join(tmpdir(), "mandate-bin-home-"))
    const env = { ...process.env, NO_COLOR: "1", MANDATE_HOME: join(root, "agent"), MANDATE_PRINCIPAL_HOME: join(root, "principal") }
    const r = await runBin(["yea", "init"], env)
    expect(r.status).toBe(0)
    expect(existsSync(join(root, "agent", "agent.key"))).toBe(true)
    expect(existsSync(join(root, "principal", "principal.key"))).toBe(true)
    expect(statSync(join(root, "agent")).mode & 0o777).toBe(0o700)
    expect(statSync(join(root, "agent", "agent.key")).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(root, "agent", "agent.key"), "utf8")).toMatch(/^[0-9a-f]{64}\n$/)
  })

  it("a server started by the bin stops on SIGTERM", async () => {
    const child: ChildProcess = spawn(process.execPath, [bin, "yea", "serve", "shop", "--port", "0", "--trust", principalKey], { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`serve did not start: ${err}`))), 100_000)
      child.stderr!.on("data", (d: Buffer) => {
        err += d.toString()
        if (/serving \S+ at yea:\/\/\S+/.test(err)) (clearTimeout(timer), resolve())
      })
    })
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("close", (code, signal) => resolve({ code, signal })))
    child.kill("SIGTERM")
    const end = await closed
    // runMain interrupts the command on the signal: the server's scope closes and the process ends
    // by itself (not killed by the signal's default action).
    expect(end.signal).toBe(null)
    expect(noStack({ status: end.code, stdout: "", stderr: err })).toBe(true)
  })
})
