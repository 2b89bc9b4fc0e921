// `mandate gateway` as a real process, for the tests that run it as the check does: started with
// its arguments, resolved once it prints its URL alone on a line of stdout, killed at the end.
import type { ChildProcess } from "node:child_process"
import { spawnMandate } from "../support/cli.js"

/** The processes started, so a file's afterAll can kill what is left. */
export const children: Array<ChildProcess> = []

/** Kills every gateway still running and waits for their exits (their store connections are then gone). */
export const killAll = () =>
  Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) =>
    new Promise<void>((resolve) => {
      c.once("exit", () => resolve())
      c.kill("SIGKILL")
    })))

/** Starts `mandate gateway ...args`; resolves with the process and the URL it prints. */
export const startGatewayProcess = (args: ReadonlyArray<string>) =>
  new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    const child = spawnMandate(["gateway", ...args])
    children.push(child)
    let out = ""
    let err = ""
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      const line = out.split("\n").find((l) => /^http:\/\/127\.0\.0\.1:\d+$/.test(l))
      if (line !== undefined) resolve({ child, url: line })
    })
    child.stderr!.on("data", (d: Buffer) => { err += d.toString() })
    child.on("exit", (code, signal) => reject(new Error(`gateway exited ${code ?? signal}: ${err}`)))
  })
