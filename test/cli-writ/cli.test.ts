// The `mandate` CLI end to end in a temporary folder: keygen, writ issue -> delegate -> call ->
// verify, every local refusal printed with its reason code, bad input files answered with a reason
// code and exit status 1 and never a stack trace; then against a running `writ serve`: send (a
// tally verified by section 6.2, a signed refusal, an unsigned error), inspect, revoke and audit.
// Independent commands run concurrently: each is a separate node process.
import type { ChildProcess } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"

// Each command is a separate node process; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 })
import { repoRoot } from "../support/shared.js"
import { mandate, noStack, type Ran, serve } from "./run.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-cli-"))
const p = (f: string) => join(dir, f)
const keys: Record<string, string> = {}

afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ok = (r: Ran) => expect(r.status, r.stdout + r.stderr).toBe(0)
const refused = (r: Ran, reason: string) => {
  expect(r.status, r.stdout + r.stderr).toBe(1)
  expect(r.stdout + r.stderr).toContain(reason)
  expect(noStack(r), r.stderr).toBe(true)
}

describe("mandate keygen", () => {
  it("writes a 0600 key file and prints its did:key; refuses to overwrite; refuses unsafe or bad key files", async () => {
    const made = await Promise.all(["a", "b", "c"].map((n) => mandate("keygen", p(`${n}.key`))))
    ;["a", "b", "c"].forEach((n, i) => {
      ok(made[i])
      keys[n] = made[i].stdout.trim()
      expect(keys[n]).toMatch(/^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+$/)
      expect(statSync(p(`${n}.key`)).mode & 0o777).toBe(0o600)
      expect(readFileSync(p(`${n}.key`), "utf8")).toMatch(/^[0-9a-f]{64}\n$/)
    })
    expect(new Set(Object.values(keys)).size).toBe(3)
    copyFileSync(p("a.key"), p("open.key"))
    chmodSync(p("open.key"), 0o644)
    writeFileSync(p("junk.key"), "not a key\n", { mode: 0o600 })
    const [again, show, open, junk] = await Promise.all([
      mandate("keygen", p("a.key")),
      mandate("keygen", "--show", p("a.key")),
      mandate("keygen", "--show", p("open.key")),
      mandate("keygen", "--show", p("junk.key"))
    ])
    refused(again, "mandate/exists")
    ok(show)
    expect(show.stdout.trim()).toBe(keys.a)
    refused(open, "mandate/key_permissions")
    refused(junk, "mandate/bad_key_file")
  })
})

describe("mandate writ issue -> delegate -> call -> verify", () => {
  it("issues a root writ and verifies it", async () => {
    ok(await mandate(
      "writ", "issue", "--key", p("a.key"), "--hld", keys.b, "--act", "travel", "--max", "amount=60000", "--count", "uses=1",
      "--set", "currency=USD", "--window", "date=20261015,20261019", "--ttl", "3600", "--out", p("w1.json")
    ))
    const v = await mandate("writ", "verify", p("w1.json"))
    ok(v)
    expect(v.stdout).toContain("chain: valid")
    const chain = JSON.parse(readFileSync(p("w1.json"), "utf8"))
    expect(chain).toHaveLength(1)
    expect(chain[0].bnd.amount).toEqual({ t: "max", v: 60000 })
    expect(chain[0].bnd.currency).toEqual({ t: "set", v: ["USD"] })
    expect(chain[0].bnd.date).toEqual({ t: "window", v: [20261015, 20261019] })
  })

  it("delegates a narrowed child; refuses a wider one, one from a key that does not hold the writ, a bad holder", async () => {
    const [good, wider, notHeld, badKey] = await Promise.all([
      mandate("writ", "delegate", "--key", p("b.key"), "--chain", p("w1.json"), "--hld", keys.c, "--act", "travel/charge", "--max", "amount=58900", "--out", p("w2.json")),
      mandate("writ", "delegate", "--key", p("b.key"), "--chain", p("w1.json"), "--hld", keys.c, "--max", "amount=65000", "--out", p("bad1.json")),
      mandate("writ", "delegate", "--key", p("a.key"), "--chain", p("w1.json"), "--hld", keys.c, "--out", p("bad2.json")),
      mandate("writ", "delegate", "--key", p("b.key"), "--chain", p("w1.json"), "--hld", "did:key:nope", "--out", p("bad3.json"))
    ])
    ok(good)
    refused(wider, "not_narrowed")
    refused(notHeld, "wrong_executor")
    refused(badKey, "bad_key")
    const v = await mandate("writ", "verify", p("w2.json"))
    expect(v.stdout).toContain("chain of 2")
  })

  it("builds and signs a call, verifies it, and refuses calls the leaf does not admit", async () => {
    const args = '{"amount":58900,"currency":"USD","date":20261015}'
    const call = (key: string, op: string, a: string, out: string) =>
      mandate("writ", "call", "--key", p(key), "--chain", p("w2.json"), "--op", op, "--args", a, "--out", p(out))
    const [good, over, missing, op, standing] = await Promise.all([
      call("b.key", "travel/charge", args, "call.json"),
      call("b.key", "travel/charge", '{"amount":59000,"currency":"USD","date":20261015}', "x1.json"),
      call("b.key", "travel/charge", '{"currency":"USD","date":20261015}', "x2.json"),
      call("b.key", "travel/chargeback", args, "x3.json"),
      call("a.key", "travel/charge", args, "x4.json")
    ])
    ok(good)
    refused(over, "out_of_bounds")
    refused(missing, "missing_arg")
    refused(op, "forbidden_op")
    refused(standing, "no_standing")
    const v = await mandate("writ", "verify", p("call.json"))
    ok(v)
    expect(v.stdout).toContain("call: valid")
  })

  it("revokes a writ and verifies the revoke; checks expiry with --now", async () => {
    const exp = JSON.parse(readFileSync(p("w1.json"), "utf8"))[0].exp as number
    const [rv, notIssuer, expired] = await Promise.all([
      mandate("writ", "revoke", "--key", p("a.key"), "--chain", p("w1.json"), "--out", p("rv.json")),
      mandate("writ", "revoke", "--key", p("c.key"), "--chain", p("w1.json"), "--out", p("rv2.json")),
      mandate("writ", "verify", p("w1.json"), "--now", String(exp))
    ])
    ok(rv)
    refused(notIssuer, "no_standing")
    refused(expired, "expired")
    expect((await mandate("writ", "verify", p("rv.json"))).stdout).toContain("revoke: valid")
  })
})

describe("bad input files: a reason code and exit status 1, never a stack trace", () => {
  it("names the reason for each kind of bad file", async () => {
    const w1 = JSON.parse(readFileSync(p("w1.json"), "utf8"))[0]
    writeFileSync(p("dup.json"), '{"v":1,"v":1,"typ":"writ"}')
    writeFileSync(p("garbage.json"), "this is not json")
    writeFileSync(p("float.json"), JSON.stringify({ ...w1, exp: 1.5 }))
    writeFileSync(p("tampered.json"), JSON.stringify({ ...w1, bnd: { ...w1.bnd, amount: { t: "max", v: 99999 } } }))
    writeFileSync(p("typ.json"), JSON.stringify({ ...w1, typ: "grant" }))
    writeFileSync(p("v2.json"), JSON.stringify({ ...w1, v: 2 }))
    writeFileSync(p("deep.json"), "[".repeat(70) + "]".repeat(70))
    const cases: ReadonlyArray<[ReadonlyArray<string>, string]> = [
      [["writ", "verify", p("dup.json")], "noncanonical"],
      [["writ", "verify", p("garbage.json")], "noncanonical"],
      [["writ", "verify", p("float.json")], "noncanonical"],
      [["writ", "verify", p("tampered.json")], "bad_signature"],
      [["writ", "verify", p("typ.json")], "wrong_type"],
      [["writ", "verify", p("v2.json")], "unsupported_version"],
      [["writ", "verify", p("deep.json")], "too_large"],
      [["writ", "verify", p("absent.json")], "mandate/unreadable"],
      [["writ", "call", "--key", p("b.key"), "--chain", p("garbage.json"), "--op", "x", "--out", p("x.json")], "noncanonical"],
      [["writ", "delegate", "--key", p("b.key"), "--chain", p("tampered.json"), "--hld", keys.c, "--out", p("x.json")], "bad_signature"],
      [["writ", "issue", "--key", p("a.key"), "--hld", keys.b, "--act", "x", "--max", "amount", "--ttl", "60", "--out", p("x.json")], "mandate/usage"],
      [["writ", "inspect", p("w1.json")], "wrong_type"]
    ]
    const results = await Promise.all(cases.map(([args]) => mandate(...args)))
    results.forEach((r, i) => refused(r, cases[i][1]))
  })
})

describe("against a running executor: send, inspect, audit", () => {
  let child: ChildProcess | undefined
  let url = ""
  beforeAll(async () => {
    const [r, e] = await Promise.all([
      mandate("writ", "issue", "--key", p("a.key"), "--hld", keys.c, "--act", "travel/charge", "--max", "amount=60000",
        "--count", "uses=2", "--ttl", "3600", "--out", p("wc.json")),
      // Expires a second from now (an expiry already past is refused at issue): expired by the time
      // it is called, which the wait below makes certain.
      mandate("writ", "issue", "--key", p("a.key"), "--hld", keys.c, "--act", "travel/charge", "--ttl", "1", "--out", p("we.json"))
    ])
    ok(r)
    ok(e)
    // The executor starts meanwhile: its start does not depend on the writs.
    const [, s] = await Promise.all([
      new Promise((resolve) => setTimeout(resolve, 2_000)),
      serve(["--port", "0", "--store", p("c.sqlite"), "--key", p("c.key"), "--root", keys.a,
        "--handler", join(repoRoot, "src/examples/payment.ts")])
    ])
    child = s.child
    url = s.url
    expect(s.did).toBe(keys.c)
  })
  afterAll(() => { child?.kill("SIGKILL") })

  it("sends calls: a tally tree verified by section 6.2, a signed refusal, an unsigned error; inspect draws the tree", async () => {
    const [c1, ce, cw] = await Promise.all([
      mandate("writ", "call", "--key", p("a.key"), "--chain", p("wc.json"), "--op", "travel/charge", "--args", '{"amount":100}', "--out", p("c1.json")),
      mandate("writ", "call", "--key", p("a.key"), "--chain", p("we.json"), "--op", "travel/charge", "--args", "{}", "--out", p("ce.json")),
      // Under writ_1, which B holds: sent to C, the wrong executor.
      mandate("writ", "call", "--key", p("a.key"), "--chain", p("w1.json"), "--op", "travel/book", "--args", '{"amount":5,"currency":"USD","date":20261016}', "--out", p("cw.json"))
    ])
    ok(c1)
    ok(ce)
    ok(cw)
    const call1 = JSON.parse(readFileSync(p("c1.json"), "utf8"))
    writeFileSync(p("c1x.json"), JSON.stringify({ ...call1, args: { amount: 5 } }))
    const [s, se, su, sw] = await Promise.all([
      mandate("writ", "send", url, p("c1.json"), "--out", p("a1.json")),
      mandate("writ", "send", url, p("ce.json")),
      mandate("writ", "send", url, p("c1x.json")),
      mandate("writ", "send", url, p("cw.json"))
    ])
    ok(sw)
    expect(sw.stdout).toContain("tally failed (wrong_executor), a signed refusal")
    expect(sw.stdout).toContain(`receiver's key from its well-known document: ${keys.c}`)
    expect(sw.stdout).toContain("verdict: valid")
    ok(s)
    expect(s.stdout).toContain("tally ok")
    expect(s.stdout).toContain("verdict: valid")
    ok(se)
    expect(se.stdout).toContain("tally failed (expired), a signed refusal")
    expect(se.stdout).toContain("verdict: valid")
    expect(su.status).toBe(1)
    expect(su.stdout).toContain("refused, unsigned (section 7 steps 1-2): bad_signature")

    const a = JSON.parse(readFileSync(p("a1.json"), "utf8"))
    writeFileSync(p("a1x.json"), JSON.stringify({ ...a, tally: { ...a.tally, used: { amount: 1 } } }))
    const [i, bad, v] = await Promise.all([
      mandate("writ", "inspect", p("a1.json"), "--call", p("c1.json")),
      mandate("writ", "inspect", p("a1x.json"), "--call", p("c1.json")),
      mandate("writ", "verify", p("a1x.json"), "--call", p("c1.json"))
    ])
    ok(i)
    expect(i.stdout).toContain("tree: valid")
    expect(i.stdout).toMatch(/travel\/charge\s+st ok\s+used amount 100\s+signer did:key:z6Mk\S+\s+\[signature ok\]/)
    // The answer doctored after the fact: inspect and verify name the failure and exit 1.
    expect(bad.status).toBe(1)
    expect(bad.stdout).toContain("unverifiable: bad_signature")
    refused(v, "bad_signature")
  })

  it("sends a revoke and verifies the ack; audit reads and filters the record", async () => {
    ok(await mandate("writ", "revoke", "--key", p("a.key"), "--chain", p("wc.json"), "--out", p("rvc.json")))
    const s = await mandate("writ", "send", url, p("rvc.json"))
    ok(s)
    expect(s.stdout).toMatch(/ack from did:key:z6Mk\S+: valid/)
    ok(await mandate("writ", "call", "--key", p("a.key"), "--chain", p("wc.json"), "--op", "travel/charge", "--args", '{"amount":1}', "--out", p("c2.json")))
    expect((await mandate("writ", "send", url, p("c2.json"))).stdout).toContain("tally failed (revoked)")
    const [all, onlyExpired, revokes, absent] = await Promise.all([
      mandate("writ", "audit", p("c.sqlite")),
      mandate("writ", "audit", p("c.sqlite"), "--reason", "expired", "--json"),
      mandate("writ", "audit", p("c.sqlite"), "--kind", "revoke"),
      mandate("writ", "audit", p("no-such.sqlite"))
    ])
    ok(all)
    // ok, expired, the unsigned bad_signature, wrong_executor, the revoke, and the call refused as revoked.
    expect(all.stdout).toContain("6 entries")
    expect(all.stdout).toMatch(/error \(bad_signature\)/)
    const lines = onlyExpired.stdout.trim().split("\n").map((l) => JSON.parse(l))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ kind: "call", outcome: "failed", reason: "expired", op: "travel/charge" })
    expect(revokes.stdout).toContain("1 entries")
    refused(absent, "mandate/unreadable")
  })
})

describe("nonsense TTLs and roots beyond 24 hours (section 12)", () => {
  it("refuses --ttl -5, 0, 1.5, an --exp already past and a root over 24 hours ahead; --max-ttl allows a longer root", async () => {
    const issue = (...more: ReadonlyArray<string>) =>
      mandate("writ", "issue", "--key", p("a.key"), "--hld", keys.b, "--act", "x", ...more)
    const [neg, zero, frac, past, far, allowed] = await Promise.all([
      issue("--ttl", "-5", "--out", p("t1.json")),
      issue("--ttl", "0", "--out", p("t2.json")),
      issue("--ttl", "1.5", "--out", p("t3.json")),
      issue("--exp", "1000", "--out", p("t4.json")),
      issue("--ttl", "86401", "--out", p("t5.json")),
      issue("--ttl", "172800", "--max-ttl", "172800", "--out", p("t6.json"))
    ])
    for (const r of [neg, zero, frac, past, far]) refused(r, "mandate/usage")
    expect(far.stderr).toContain("--max-ttl")
    for (const f of ["t1", "t2", "t3", "t4", "t5"]) expect(existsSync(p(`${f}.json`))).toBe(false)
    ok(allowed)
    // The writ carries no issue time: compare with this machine's clock, the one the CLI read.
    const w = JSON.parse(readFileSync(p("t6.json"), "utf8"))[0]
    expect(w.exp).toBeGreaterThan(Math.floor(Date.now() / 1000) + 86_400)
  })
})

describe("--out and one-line errors", () => {
  it("--out refuses an existing file unless --force and never follows a symlink", async () => {
    writeFileSync(p("keep.json"), "keep\n")
    writeFileSync(p("victim"), "victim\n")
    symlinkSync(p("victim"), p("link.json"))
    const issue = (...more: ReadonlyArray<string>) =>
      mandate("writ", "issue", "--key", p("a.key"), "--hld", keys.b, "--act", "x", "--ttl", "60", ...more)
    const [exists, link, linkForced] = await Promise.all([
      issue("--out", p("keep.json")),
      issue("--out", p("link.json")),
      issue("--out", p("link.json"), "--force")
    ])
    refused(exists, "mandate/exists")
    refused(link, "mandate/symlink")
    refused(linkForced, "mandate/symlink")
    expect(readFileSync(p("keep.json"), "utf8")).toBe("keep\n")
    expect(readFileSync(p("victim"), "utf8")).toBe("victim\n")
    ok(await issue("--out", p("keep.json"), "--force"))
    expect(JSON.parse(readFileSync(p("keep.json"), "utf8"))[0].typ).toBe("writ")
  })

  it("usage errors found by @effect/cli and an invalid URL are one line: error: <reason> at <where>: <why>", async () => {
    const cases: ReadonlyArray<[ReadonlyArray<string>, string, string]> = [
      [["writ", "issue"], "mandate/usage", "mandate writ issue"],
      [["writ", "verify", p("w1.json"), "--now", "soon"], "mandate/usage", "mandate writ verify"],
      [["writ", "bogus"], "mandate/usage", "mandate writ"],
      [["bogus"], "mandate/usage", "mandate"],
      [["writ", "send", "not a url", p("c1.json")], "mandate/bad_url", "not a url"],
      [["writ", "send", "ftp://127.0.0.1/", p("c1.json")], "mandate/bad_url", "ftp://127.0.0.1/"],
      [["writ", "issue", "--key", p("a.key"), "--hld", keys.b, "--out", p("t7.json")], "mandate/usage", "mandate writ issue"]
    ]
    const rs = await Promise.all(cases.map(([args]) => mandate(...args)))
    rs.forEach((r, i) => {
      const [args, reason, where] = cases[i]
      expect(r.status, args.join(" ")).toBe(1)
      expect(r.stderr, args.join(" ")).toMatch(/^error: \S+ at .+: \S.*\n$/)
      expect(r.stderr.startsWith(`error: ${reason} at ${where}: `), r.stderr).toBe(true)
      expect(noStack(r)).toBe(true)
    })
  })
})

describe("--help", () => {
  it("every command has help", async () => {
    const cmds = [["keygen"], ["writ", "issue"], ["writ", "delegate"], ["writ", "call"], ["writ", "send"], ["writ", "verify"],
      ["writ", "revoke"], ["writ", "inspect"], ["writ", "audit"], ["writ", "serve"], ["writ", "scenarios"], ["writ", "conformance"], ["demo"]]
    const rs = await Promise.all(cmds.map((c) => mandate(...c, "--help")))
    rs.forEach((r, i) => {
      expect(r.status, cmds[i].join(" ")).toBe(0)
      expect(r.stdout.startsWith(`mandate ${cmds[i].join(" ")}: `), cmds[i].join(" ")).toBe(true)
      expect(r.stdout).toContain(`\nUsage\n  mandate ${cmds[i].join(" ")}`)
    })
  })
})
