// `mandate yea do` against `mandate yea serve shop` (both child processes, loopback only): one
// request per run, the consent flow through `approve`, a replayed COMMIT, and each refusal.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { Either } from "effect"
import { decodeGrant } from "../../src/yea/grant.js"
import { repoRoot } from "../support/shared.js"
import { AGENT, PRINCIPAL, principalKey } from "../yea/_helpers.js"
import { errorLine, hasScript, homes, mandate, mandateAtTerminal, writeSeed } from "./run.js"
import { cliEntry } from "../support/cli.js"

const T = 300_000
const h = homes()
writeSeed(h.home, "agent.key", AGENT)
writeSeed(h.principalHome, "principal.key", PRINCIPAL)
let server: ChildProcess | undefined
let url = ""

beforeAll(async () => {
  server = spawn(process.execPath, [...cliEntry, "yea", "serve", "shop", "--port", "0", "--trust", principalKey], { cwd: repoRoot, env: h.env, stdio: ["ignore", "ignore", "pipe"] })
  url = await new Promise<string>((resolve, reject) => {
    let err = ""
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 90_000)
    server!.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      const m = /serving \S+ at (yea:\/\/\S+)/.exec(err)
      if (m !== null) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
  })
}, 120_000)
afterAll(() => void server?.kill("SIGKILL"))

const order = (qty: number) => JSON.stringify({ items: [{ sku: "m01", qty }], deliver: "2026-12-05" })

describe("mandate yea do", () => {
  it("HELLO and ASK print the Lens; --json prints the reply", async () => {
    const hello = await mandate(["yea", "do", url, "HELLO"], h.env)
    expect(hello.status).toBe(0)
    expect(hello.stdout).toContain("# Example Meals (shop.example)")
    const ask = await mandate(["yea", "do", url, "ASK", "shop.search", "--params", '{"tag":"vegan"}', "--json"], h.env)
    expect(JSON.parse(ask.stdout).kind).toBe("ANSWER")
  }, T)

  it.skipIf(!hasScript)("inside the grant commits; over it prints a pc1. code that approve signs; the consent commits once, a replay answers the same receipt", async () => {
    const grant = await mandate(["yea", "grant", "--svc", "shop.example", "--each", "spend=40.00USD", "--risk", "low", "--exp", "1h"], h.env)
    expect(grant.status).toBe(0)
    const small = await mandate(["yea", "do", url, "INTENT", "shop.order", "--params", order(1), "--commit", "1"], h.env)
    expect(small.status).toBe(0)
    expect(small.stdout).toMatch(/^✓ .*\(receipt r_/)
    const big = await mandate(["yea", "do", url, "INTENT", "shop.order", "--params", order(4), "--commit", "1", "--json"], h.env)
    expect(big.status).toBe(1)
    expect(JSON.parse(big.stdout).code).toBe("consent_required")
    expect(errorLine(big)).toMatch(/^error: consent_required at COMMIT: /)
    const code = /mandate yea approve (pc1\.[A-Za-z0-9_-]+)/.exec(big.stderr)![1]
    const commitLine = /mandate yea do \S+ COMMIT --proposal (\S+) --hash (\S+)/.exec(big.stderr)!
    const approved = await mandateAtTerminal(["yea", "approve", code], h.env, "y\n")
    expect(approved.status).toBe(0)
    const consent = /pg1\.[A-Za-z0-9_-]+/.exec(approved.stdout)![0]
    expect(Either.isRight(decodeGrant(consent))).toBe(true)
    const args = ["yea", "do", url, "COMMIT", "--proposal", commitLine[1], "--hash", commitLine[2], "--grant", consent, "--json"]
    const first = JSON.parse((await mandate(args, h.env)).stdout)
    expect(first.kind).toBe("RECEIPT")
    const again = JSON.parse((await mandate(args, h.env)).stdout)
    expect([again.kind, again.receipt, again.replay]).toEqual(["RECEIPT", first.receipt, true])
    // A wrong hash is conflict, and the reply does not reveal the right one (§4.4). Its first
    // character is changed to one it is not (a hash starting with "x" once made it the right one).
    const wrong = await mandate(["yea", "do", url, "COMMIT", "--proposal", commitLine[1], "--hash", (commitLine[2].startsWith("x") ? "y" : "x") + commitLine[2].slice(1)], h.env)
    expect(errorLine(wrong)).toMatch(/^error: conflict at COMMIT: /)
    expect(wrong.stdout + wrong.stderr).not.toContain(commitLine[2])
  }, T)

  it("refuses missing and malformed flags and an unreachable service, each naming its reason", async () => {
    const cases: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
      [[url, "COMMIT", "--proposal", "p_1"], /^error: invalid_params at --hash: /],
      [[url, "ASK"], /^error: invalid_params at --CAPABILITY: /],
      [[url, "ASK", "shop.search", "--params", "[1]"], /^error: invalid_params at --params: /],
      [[url, "ASK", "shop.nothing"], /^error: unknown_capability at ASK shop\.nothing: /],
      [["yea://127.0.0.1:1", "HELLO"], /^error: unavailable at yea:\/\/127\.0\.0\.1:1: /],
      [["ftp://127.0.0.1", "HELLO"], /^error: bad_frame at ftp:\/\/127\.0\.0\.1: /],
      [[url, "UNDO", "--receipt", "r_none"], /^error: (not_found|unauthorized) at UNDO: /]
    ]
    for (const [args, line] of cases) {
      const r = await mandate(["yea", "do", ...args], h.env)
      expect(r.status, args.join(" ")).toBe(1)
      expect(errorLine(r), args.join(" ")).toMatch(line)
    }
  }, T)
})
