// Runs the `mandate` CLI as a child process, as a user would: node with tsx, src/cli/main.ts.
import type { ChildProcess } from "node:child_process"
import { type Ran, runMandate, spawnMandate } from "../support/cli.js"

export type { Ran } from "../support/cli.js"

/** Runs one command to completion (asynchronously, so the test worker's event loop stays free).
 * Killed only when far past what a loaded machine takes (the test timeout is 300 s): a dozen of
 * these run at once, each transpiling the sources through tsx. */
export const mandate = (...args: ReadonlyArray<string>): Promise<Ran> => runMandate(args, 240_000, "SIGKILL")

/** No stack trace on either stream: a failure is one line naming its reason. */
export const noStack = (r: Ran): boolean => !/\n\s+at .+:\d+:\d+/.test(r.stdout + r.stderr)

/** Starts `mandate writ serve` and resolves with its URL once it prints its ready line. */
export const serve = (args: ReadonlyArray<string>): Promise<{ url: string; did: string; child: ChildProcess }> =>
  new Promise((resolve, reject) => {
    const child = spawnMandate(["writ", "serve", ...args])
    let out = ""
    let err = ""
    child.stderr!.on("data", (d: Buffer) => { err += d.toString() })
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      for (const line of out.split("\n")) {
        if (!line.startsWith("{")) continue
        try {
          const j = JSON.parse(line) as { url: string; did: string }
          if (typeof j.url === "string") resolve({ url: j.url, did: j.did, child })
        } catch {
          // not yet a whole line
        }
      }
    })
    child.on("exit", (code) => reject(new Error(`writ serve exited (${code}): ${err}`)))
  })
