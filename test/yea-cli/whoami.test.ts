// `mandate yea whoami` and `mandate yea service-id KEYFILE` in this process, each with its own
// temp MANDATE_HOME / MANDATE_PRINCIPAL_HOME: the public keys printed (never a seed) and every refusal.
import { describe, expect, it } from "@effect/vitest"
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AGENT, PRINCIPAL, SUBAGENT, agentKey, principalKey, subagentKey } from "../yea/_helpers.js"
import { errorLine, homes, mandate, writeSeed } from "./run.js"

const hex = (seed: Uint8Array) => Buffer.from(seed).toString("hex")

describe("mandate yea whoami", () => {
  it("prints the home, the agent key and the principal key, with their files, and no seed", async () => {
    const h = homes()
    writeSeed(h.home, "agent.key", AGENT)
    writeSeed(h.principalHome, "principal.key", PRINCIPAL)
    const r = await mandate(["yea", "whoami"], h.env)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.split("\n")).toEqual([
      `home       ${h.home}`,
      `agent      ${agentKey}  ${join(h.home, "agent.key")}`,
      `principal  ${principalKey}  ${join(h.principalHome, "principal.key")}`,
      ""
    ])
    expect(r.stderr).toContain("principal key is readable on this machine")
    for (const s of [AGENT, PRINCIPAL]) expect(r.stdout + r.stderr).not.toContain(hex(s))
  })

  it("says none for a key this machine does not hold (an agent-only machine, a principal's device)", async () => {
    const agentOnly = homes()
    writeSeed(agentOnly.home, "agent.key", AGENT)
    const a = await mandate(["yea", "whoami"], agentOnly.env)
    expect(a.status, a.stderr).toBe(0)
    expect(a.stdout).toMatch(/^principal +none /m)
    expect(a.stderr).toBe("")
    const principalOnly = homes()
    writeSeed(principalOnly.principalHome, "principal.key", PRINCIPAL)
    const p = await mandate(["yea", "whoami"], principalOnly.env)
    expect(p.status, p.stderr).toBe(0)
    expect(p.stdout).toMatch(/^agent +none /m)
    expect(p.stdout).toContain(principalKey)
  })

  it("refuses an empty home (mandate/no_key), a linked key (mandate/symlink) and an open folder (mandate/key_permissions)", async () => {
    const empty = homes()
    const r = await mandate(["yea", "whoami"], empty.env)
    expect(r.status).toBe(1)
    expect(errorLine(r)).toMatch(/^error: mandate\/no_key at .*run `mandate yea init`/)
    const linked = homes()
    const real = writeSeed(join(linked.root, "real"), "agent.key", AGENT)
    mkdirSync(linked.home, { mode: 0o700 })
    symlinkSync(real, join(linked.home, "agent.key"))
    expect(errorLine(await mandate(["yea", "whoami"], linked.env))).toMatch(/^error: mandate\/symlink at /)
    const open = homes()
    writeSeed(open.home, "agent.key", AGENT)
    chmodSync(open.home, 0o777)
    expect(errorLine(await mandate(["yea", "whoami"], open.env))).toMatch(/^error: mandate\/key_permissions at /)
  })
})

describe("mandate yea service-id KEYFILE", () => {
  it("prints the public key of a server key file, and nothing of its seed", async () => {
    const h = homes()
    const file = writeSeed(join(h.root, "server"), "calendar.key", SUBAGENT)
    const r = await mandate(["yea", "service-id", file], h.env)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${subagentKey}\n`)
    expect(r.stdout).not.toContain(hex(SUBAGENT))
  })

  it("refuses a missing file (mandate/no_key), a file that is not a key, a linked key, and a URL of no transport", async () => {
    const h = homes()
    expect(errorLine(await mandate(["yea", "service-id", join(h.root, "nope.key")], h.env))).toMatch(/^error: mandate\/no_key at /)
    const dir = join(h.root, "server")
    writeSeed(dir, "good.key", SUBAGENT)
    writeFileSync(join(dir, "bad.key"), "not a seed\n", { mode: 0o600 })
    const bad = await mandate(["yea", "service-id", join(dir, "bad.key")], h.env)
    expect(bad.status).toBe(1)
    expect(errorLine(bad)).toMatch(/^error: \S+ at .*bad\.key/)
    symlinkSync(join(dir, "good.key"), join(dir, "link.key"))
    expect(errorLine(await mandate(["yea", "service-id", join(dir, "link.key")], h.env))).toMatch(/^error: mandate\/symlink at /)
    expect(errorLine(await mandate(["yea", "service-id", "ftp://localhost:1"], h.env))).toMatch(/^error: bad_frame at ftp:\/\/localhost:1: unknown YEA transport/)
    expect(errorLine(await mandate(["yea", "service-id", "stdio:"], h.env))).toMatch(/^error: bad_frame at stdio:: /)
  })
})
