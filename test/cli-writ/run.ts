// Runs the `mandate` CLI: a command in this process (its run function), `writ serve` as a child
// process (a server the test stops).
import type { ChildProcess } from "node:child_process"
import { type Ran, runCli, spawnMandate } from "../support/cli.js"

export type { Ran } from "../support/cli.js"

/** Runs one command to completion in this process, its output captured. */
export const mandate = (...args: ReadonlyArray<string>): Promise<Ran> => runCli(args)

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
