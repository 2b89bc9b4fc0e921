// The ledger CLI as the ledger's CLI tests run it: in process (test/support/cli.ts), and the one
// shape of its refusals (`error: <code> at <where>: <why>`, one line, exit status 1).
import { expect } from "vitest"
import { type Ran, runCli } from "../support/cli.js"

/** `mandate ledger ...args`, run in process. */
export const ledgerCli = (...args: ReadonlyArray<string>): Promise<Ran> => runCli(["ledger", ...args])

/** Expects `r` to be one refusal line naming `reason`. */
export const expectRefused = (r: { status: number | null; stderr: string }, reason: string): void => {
  expect(r.status, r.stderr).toBe(1)
  expect(r.stderr).toMatch(new RegExp(`^error: ${reason}( at [^:]+)?: .+\\n$`))
}
