// `mandate yea grant-import TOKEN|FILE` in this process, a temp MANDATE_HOME per case: a grant to
// this agent is saved once (from the token or a file), and every grant that would be refused at a
// service is refused here with its reason code, grants.json left as it was.
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AGENT, MALLORY, delegate, issue, malloryKey, principalKey, rawBlock, rawRoot, rawToken, rootPayload, subagentKey } from "../yea/_helpers.js"
import { errorLine, homes, mandate, writeSeed } from "./run.js"

const agentHome = () => {
  const h = homes()
  writeSeed(h.home, "agent.key", AGENT)
  return h
}
const saved = (home: string): ReadonlyArray<string> => {
  const file = join(home, "grants.json")
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ReadonlyArray<string>) : []
}

describe("mandate yea grant-import", () => {
  it("saves a grant to this agent, from the token or from a file, once; prints its principal", async () => {
    const h = agentHome()
    const token = issue([{ verbs: ["ASK"] }])
    const r = await mandate(["yea", "grant-import", token], h.env)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain(`principal  ${principalKey}`)
    expect(r.stderr).toContain("saved to")
    expect(r.stderr).toContain("--trust")
    expect(saved(h.home)).toEqual([token])
    const file = join(h.root, "grant.txt")
    writeFileSync(file, token + "\n")
    const again = await mandate(["yea", "grant-import", file, "--trust", principalKey], h.env)
    expect(again.status, again.stderr).toBe(0)
    expect(again.stderr).toContain("already saved")
    expect(again.stderr).not.toContain("--trust")
    expect(saved(h.home)).toEqual([token])
  })

  it("refuses a grant that would be refused at a service, with its reason code, and saves nothing", async () => {
    const h = agentHome()
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [["pg1.AAAA"], /^error: unauthorized at TOKEN: malformed grant/],
      [[rawToken([rawBlock(rootPayload([]), MALLORY)])], /^error: unauthorized at blocks\[0\]\.s: grant signature does not verify/],
      [[issue([], subagentKey)], /^error: unauthorized at TOKEN: proof key is not the grant holder/],
      [[delegate(issue([]), AGENT, [])], /^error: unauthorized at TOKEN: proof key is not the grant holder/],
      [[issue([]), "--trust", malloryKey], /^error: unauthorized at blocks\[0\]\.p\.iss: .*does not trust/],
      [[issue([]), "--trust", "ed25519:nope"], /^error: invalid_params at --trust: /],
      [[rawRoot([{ bogus: 1 }])], /^error: forbidden at blocks\[0\]\.p\.caveats\[0\]: malformed caveat/],
      [[issue([{ exp: 1000 }])], /^error: forbidden at blocks\[0\]\.p\.caveats\[0\]: grant has expired/],
      [[join(h.root, "missing.txt")], /^error: mandate\/unreadable at .*missing\.txt/]
    ]
    for (const [args, expected] of cases) {
      const r = await mandate(["yea", "grant-import", ...args], h.env)
      expect(r.status, args.join(" ")).toBe(1)
      expect(errorLine(r), args.join(" ")).toMatch(expected)
    }
    expect(saved(h.home)).toEqual([])
  })

  it("refuses without an agent key (mandate/no_key): a grant is imported for this machine's agent", async () => {
    const h = homes()
    expect(errorLine(await mandate(["yea", "grant-import", issue([])], h.env))).toMatch(/^error: mandate\/no_key at /)
  })
})
