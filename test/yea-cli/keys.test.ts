// `mandate yea init | grant | delegate | inspect | approve | doctor` as a user runs them (child
// processes, their own folders): what each writes and prints, and every refusal with its reason.
import { describe, expect, it } from "vitest"
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { decodeGrant } from "../../src/yea/grant.js"
import { AGENT, MALLORY, PRINCIPAL, agentKey, rawToken, malloryKey, principalKey, subagentKey } from "../yea/_helpers.js"
import { codeOf, proposalOf } from "./codes.js"
import { errorLine, hasScript, homes, mandate, mandateAtTerminal, writeSeed } from "./run.js"

const T = 300_000
const tokenIn = (s: string): string => {
  const m = /pg1\.[A-Za-z0-9_-]+/.exec(s)
  if (m === null) throw new Error(`no grant in: ${s}`)
  return m[0]
}
/** Fixed keys: the principal and agent of test/yea/_helpers. */
const fixedHomes = () => {
  const h = homes()
  writeSeed(h.home, "agent.key", AGENT)
  writeSeed(h.principalHome, "principal.key", PRINCIPAL)
  return h
}

describe("mandate yea init", () => {
  it("creates both keys 0600 in 0700 folders, keeps them on a second run, and warns when they share a folder", async () => {
    const h = homes()
    const first = await mandate(["yea", "init"], h.env)
    expect(first.status).toBe(0)
    expect(first.stdout).toMatch(/agent key: +ed25519:\S+ \(created\)/)
    expect(first.stdout).toMatch(/principal key: +ed25519:\S+ \(created\)/)
    for (const f of [join(h.home, "agent.key"), join(h.principalHome, "principal.key")]) expect(statSync(f).mode & 0o777).toBe(0o600)
    for (const d of [h.home, h.principalHome]) expect(statSync(d).mode & 0o777).toBe(0o700)
    expect(first.stderr).not.toContain("warning")
    const again = await mandate(["yea", "init"], h.env)
    expect(again.stdout).toMatch(/agent key: +ed25519:\S+ \(exists\)/)
    expect(again.stdout.split("\n")[0].split(" ").slice(0, 5)).toEqual(first.stdout.split("\n")[0].split(" ").slice(0, 5))
    const shared = { ...h.env, YEA_PRINCIPAL_HOME: h.home }
    const together = await mandate(["yea", "init"], shared)
    expect(together.status).toBe(0)
    expect(together.stderr).toContain("YEA_PRINCIPAL_HOME")
    const agentOnly = homes()
    expect((await mandate(["yea", "init", "--agent-only"], agentOnly.env)).status).toBe(0)
    expect(existsSync(join(agentOnly.principalHome, "principal.key"))).toBe(false)
  }, T)

  it("refuses a symbolic link on the key path (mandate/symlink) and a folder others can write (mandate/key_permissions)", async () => {
    const h = homes()
    mkdirSync(join(h.root, "real"), { mode: 0o700 })
    symlinkSync(join(h.root, "real"), h.home)
    const linked = await mandate(["yea", "init", "--agent-only"], h.env)
    expect(linked.status).toBe(1)
    expect(errorLine(linked)).toMatch(/^error: mandate\/symlink at /)
    const open = homes()
    mkdirSync(open.home, { mode: 0o777 })
    chmodSync(open.home, 0o777)
    const r = await mandate(["yea", "init", "--agent-only"], open.env)
    expect(errorLine(r)).toMatch(/^error: mandate\/key_permissions at /)
  }, T)
})

describe("mandate yea grant and delegate", () => {
  it("signs the caveats the flags ask for, to this agent, and saves the grant", async () => {
    const h = fixedHomes()
    const r = await mandate(["yea", "grant", "--svc", "shop.example", "--verbs", "ASK,INTENT,COMMIT", "--can", "shop.*", "--each", "spend=40.00USD", "--total", "emails=20", "--risk", "low", "--exp", "24h"], h.env)
    expect(r.status).toBe(0)
    const g = Either.getOrThrow(decodeGrant(tokenIn(r.stdout)))
    expect(g.principal).toBe(principalKey)
    expect(g.holder).toBe(agentKey)
    const caveats = g.root.caveats as ReadonlyArray<Record<string, unknown>>
    expect(caveats.slice(0, 6)).toEqual([
      { svc: ["shop.example"] }, { verbs: ["ASK", "INTENT", "COMMIT"] }, { can: ["shop.*"] },
      { each: { of: "spend", max: 4000, scale: 2, unit: "USD" } }, { total: { of: "emails", max: 20 } }, { risk: "low" }
    ])
    expect(caveats[6].exp).toBe(g.root.iat + 86400)
    const saved = JSON.parse(readFileSync(join(h.home, "grants.json"), "utf8"))
    expect(saved).toEqual([tokenIn(r.stdout)])
    expect(statSync(join(h.home, "grants.json")).mode & 0o777).toBe(0o600)
    // To another key: printed, not saved.
    const other = await mandate(["yea", "grant", "--svc", "shop.example", "--to", malloryKey], h.env)
    expect(Either.getOrThrow(decodeGrant(tokenIn(other.stdout))).holder).toBe(malloryKey)
    expect(JSON.parse(readFileSync(join(h.home, "grants.json"), "utf8"))).toHaveLength(1)
    // delegate: the agent narrows it for a sub-agent.
    const d = await mandate(["yea", "delegate", tokenIn(r.stdout), "--to", subagentKey, "--can", "shop.search"], h.env)
    expect(d.status).toBe(0)
    const dg = Either.getOrThrow(decodeGrant(tokenIn(d.stdout)))
    expect([dg.holder, dg.delegations.length, dg.delegations[0].caveats]).toEqual([subagentKey, 1, [{ can: ["shop.search"] }]])
    // A delegation's exp is counted from the same second it signs as its iat (one Clock read).
    const timed = await mandate(["yea", "delegate", tokenIn(r.stdout), "--to", subagentKey, "--exp", "1h"], h.env)
    const tb = Either.getOrThrow(decodeGrant(tokenIn(timed.stdout))).delegations[0]
    expect(tb.caveats).toEqual([{ exp: tb.iat + 3600 }])
    // ... but cannot delegate a grant it does not hold (unauthorized).
    const notHeld = await mandate(["yea", "delegate", tokenIn(other.stdout), "--to", subagentKey], h.env)
    expect(errorLine(notHeld)).toMatch(/^error: unauthorized at /)
  }, T)

  it("refuses each malformed flag before signing, naming it", async () => {
    const h = fixedHomes()
    const cases: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
      [["--each", "spend=forty"], /^error: invalid_params at --each: /],
      [["--total", "Spend=1"], /^error: invalid_params at --total: /],
      [["--exp", "tomorrow"], /^error: invalid_params at --exp: /],
      [["--verbs", "ASK,PAY"], /^error: invalid_params at --verbs: /],
      [["--to", "ed25519:short"], /^error: invalid_params at --to: /],
      [["--risk", "extreme"], /^error: mandate\/usage at mandate yea grant: /]
    ]
    for (const [flags, line] of cases) {
      const r = await mandate(["yea", "grant", ...flags], h.env)
      expect(r.status, flags.join(" ")).toBe(1)
      expect(errorLine(r), flags.join(" ")).toMatch(line)
    }
    expect(existsSync(join(h.home, "grants.json"))).toBe(false)
    const d = await mandate(["yea", "delegate", "pg1.nope", "--to", subagentKey], h.env)
    expect(errorLine(d)).toMatch(/^error: unauthorized at /)
  }, T)

  it("refuses a missing principal key (mandate/no_key) and one others can read (mandate/key_permissions)", async () => {
    const none = homes()
    writeSeed(none.home, "agent.key", AGENT)
    expect(errorLine(await mandate(["yea", "grant", "--svc", "x"], none.env))).toMatch(/^error: mandate\/no_key at .*principal\.key: /)
    const loose = homes()
    writeSeed(loose.home, "agent.key", AGENT)
    writeSeed(loose.principalHome, "principal.key", PRINCIPAL, 0o644)
    expect(errorLine(await mandate(["yea", "grant", "--svc", "x"], loose.env))).toMatch(/^error: mandate\/key_permissions at /)
  }, T)
})

describe("mandate yea inspect", () => {
  it("draws a grant, a consent code and a frame; refuses a tampered grant, a bad code and a bad frame", async () => {
    const h = fixedHomes()
    const token = tokenIn((await mandate(["yea", "grant", "--svc", "shop.example", "--no-save"], h.env)).stdout)
    const shown = await mandate(["yea", "inspect", token], h.env)
    expect(shown.status).toBe(0)
    expect(shown.stdout).toContain("signatures verify")
    expect(shown.stdout).toContain('{"svc":["shop.example"]}')
    const asJson = JSON.parse((await mandate(["yea", "inspect", token, "--json"], h.env)).stdout)
    expect([asJson.kind, asJson.holder, asJson.verified]).toEqual(["grant", agentKey, true])
    // One signature character changed (still canonical base64url).
    const g = Either.getOrThrow(decodeGrant(token))
    const flipped = g.root.s[5] === "A" ? "B" : "A"
    const bad = rawToken([{ p: g.root.raw, s: g.root.s.slice(0, 5) + flipped + g.root.s.slice(6) }])
    expect(errorLine(await mandate(["yea", "inspect", bad], h.env))).toMatch(/^error: unauthorized at /)
    const code = await mandate(["yea", "inspect", codeOf()], h.env)
    expect(code.stdout).toContain("hash re-checked")
    expect(code.stdout).toContain("+ create order — 4× Pad Thai")
    expect(errorLine(await mandate(["yea", "inspect", codeOf({ consent: { summary: "Order 1 meal" } })], h.env))).toMatch(/^error: conflict at consent: /)
    const frame = JSON.stringify({ yea: 1, id: "s1", re: "c1", kind: "ANSWER", data: { total: 3 } })
    const f = await mandate(["yea", "inspect", frame], h.env)
    expect(f.stdout).toContain("total: 3")
    expect(errorLine(await mandate(["yea", "inspect", JSON.stringify({ yea: 1, id: "s1", re: "c1", kind: "NOPE" })], h.env))).toMatch(/^error: bad_frame at /)
    expect(errorLine(await mandate(["yea", "inspect", JSON.stringify({ yea: 1, id: "c", verb: "ASK" })], h.env))).toMatch(/^error: bad_frame at /)
    expect(errorLine(await mandate(["yea", "inspect", "no-such-file"], h.env))).toMatch(/^error: bad_frame at INPUT: /)
  }, T)
})

describe("mandate yea approve", () => {
  it("refuses to run from a pipe (mandate/not_interactive), before reading any key", async () => {
    const h = fixedHomes()
    const r = await mandate(["yea", "approve", codeOf()], h.env, "y\n")
    expect(r.status).toBe(1)
    expect(errorLine(r)).toMatch(/^error: mandate\/not_interactive at mandate yea approve: /)
    expect(r.stdout).not.toContain("pg1.")
  }, T)

  it.skipIf(!hasScript)("at a terminal: shows the proposal, signs on yes, refuses on no, refuses every bad code", async () => {
    if (!hasScript) console.log("skipped: util-linux script is not installed (it gives the child a terminal)")
    const h = fixedHomes()
    const yes = await mandateAtTerminal(["yea", "approve", codeOf()], h.env, "y\n")
    expect(yes.status).toBe(0)
    for (const s of ["+ create order — 4× Pad Thai", "spend 43.95 USD", "within 2h", proposalOf().hash]) expect(yes.stdout).toContain(s)
    const consent = Either.getOrThrow(decodeGrant(tokenIn(yes.stdout)))
    expect(consent.holder).toBe(agentKey)
    expect(consent.root.caveats).toContainEqual({ only: proposalOf().hash })
    const no = await mandateAtTerminal(["yea", "approve", codeOf()], h.env, "n\n")
    expect(no.status).toBe(1)
    expect(errorLine(no)).toMatch(/^error: mandate\/declined at /)
    expect(no.stdout).not.toContain("pg1.")
    const refusals: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
      [[codeOf({ detail: { summary: "trust me" } })], /^error: invalid_params at detail: .*does not carry its proposal/],
      [[codeOf({ detail: { ...proposalOf(), summary: "Order 1 meal" } })], /^error: conflict at detail\.hash: /],
      [[codeOf({ consent: { summary: "Order 1 meal" } })], /^error: conflict at consent: /],
      [[codeOf({ proposal: proposalOf({ expires: 1_000_000_000 }) })], /^error: expired at /],
      [[codeOf({ agent: malloryKey })], /^error: invalid_params at agent: .*--to/],
      [[codeOf(), "--to", "ed25519:x"], /^error: invalid_params at --to: /],
      [[codeOf({ principal: malloryKey })], /^error: unauthorized at principal: /],
      [["pc1.bad!"], /^error: invalid_params at /]
    ]
    for (const [args, line] of refusals) {
      const r = await mandateAtTerminal(["yea", "approve", ...args], h.env, "y\n")
      expect(r.status, args[0].slice(0, 20)).toBe(1)
      expect(errorLine(r), String(line)).toMatch(line)
      expect(r.stdout).not.toMatch(/pg1\./)
    }
    // A foreign agent key named explicitly after checking it: signed for that key.
    const foreign = await mandateAtTerminal(["yea", "approve", codeOf({ agent: malloryKey }), "--to", malloryKey], h.env, "yes\n")
    expect(Either.getOrThrow(decodeGrant(tokenIn(foreign.stdout))).holder).toBe(malloryKey)
  }, T)
})

describe("mandate yea doctor", () => {
  it("passes with a warning for a local principal key; fails on loose key permissions and an unreachable service", async () => {
    const h = fixedHomes()
    await mandate(["yea", "grant", "--svc", "shop.example", "--exp", "1h"], h.env)
    const ok = await mandate(["yea", "doctor"], h.env)
    expect(ok.status).toBe(0)
    expect(ok.stdout).toMatch(/^ok {3}agent key: ed25519:/m)
    expect(ok.stdout).toMatch(/^warn principal key: .*readable on this machine/m)
    expect(ok.stdout).toMatch(/^ok {3}grant 0: /m)
    chmodSync(join(h.home, "agent.key"), 0o644)
    const loose = await mandate(["yea", "doctor", "--url", "yea://127.0.0.1:1"], h.env)
    expect(loose.status).toBe(1)
    expect(loose.stdout).toMatch(/^fail agent key: mandate\/key_permissions/m)
    expect(loose.stdout).toMatch(/^fail yea:\/\/127\.0\.0\.1:1: unreachable/m)
    expect(errorLine(loose)).toMatch(/^error: mandate\/doctor at mandate yea doctor: 2 checks failed/)
    void MALLORY
  }, T)
})
