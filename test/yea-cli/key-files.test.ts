// Key material on the command line in one form: key files (64 hex digits, mode 0600, as
// `mandate keygen` writes them). `yea mcp` and `yea mcp-example` take key files (mcp-example's
// default, the home's server/billing.key, is in server-key.test.ts); the seed options
// they replace still work with a deprecation line; `--approve-here` takes the principal's key file
// and warns that a client which fills forms by itself approves by itself. No command asks for a
// seed on its command line (src/cli/key-options.ts).
import { describe, expect, it } from "@effect/vitest"
import { afterAll } from "vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { select } from "../../src/cli/help.js"
import { isGroup, tree } from "../../src/cli/tree.js"
import { runCli } from "../support/cli.js"

const root = mkdtempSync(join(tmpdir(), "mandate-key-files-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const keyFile = (name: string, fill: number, mode = 0o600): string => {
  const path = join(root, name)
  writeFileSync(path, Buffer.alloc(32, fill).toString("hex") + "\n", { mode })
  return path
}

const home = join(root, "home")
mkdirSync(home, { mode: 0o700 })
const env = { ...process.env, NO_COLOR: "1", YEA_HOME: home, YEA_PRINCIPAL_HOME: home }
const run = (args: ReadonlyArray<string>) => runCli(args, { env })

/** Nothing listens on loopback port 1: the bridge gets as far as connecting, after reading its keys. */
const NOWHERE = "yea://127.0.0.1:1"
const DEPRECATED = /warning: --(agent|server)-seed is deprecated|warning: --approve-here SEED is deprecated/

describe("key files on the command line", () => {
  it("yea mcp reads the agent's key file and connects; without one it names the default key it looked for", async () => {
    const ok = await run(["yea", "mcp", NOWHERE, "--agent-key", keyFile("agent.key", 2)])
    expect(ok.stderr).toMatch(/^error: yea\/unavailable at mandate yea mcp: /)
    expect(ok.stderr).not.toMatch(DEPRECATED)
    const none = await run(["yea", "mcp", NOWHERE])
    expect(none.status).toBe(1)
    expect(none.stderr).toBe(`error: mandate/no_key at ${join(home, "agent.key")}: no key here; run \`mandate yea init\`\n`)
  })

  it("refuses a key file others can read, and one that is not a key file, naming the file", async () => {
    const open = keyFile("open.key", 3, 0o644)
    const r = await run(["yea", "mcp", NOWHERE, "--agent-key", open])
    expect(r.stderr).toMatch(new RegExp(`^error: mandate/key_permissions at ${open}: `))
    const b64 = join(root, "b64.key")
    writeFileSync(b64, encodeBase64url(new Uint8Array(32).fill(3)) + "\n", { mode: 0o600 })
    const s = await run(["yea", "mcp-example", "--server-key", b64])
    expect(s.stderr).toBe(`error: mandate/bad_key_file at ${b64}: a key file holds 64 lowercase hex digits\n`)
    const missing = await run(["yea", "mcp", NOWHERE, "--agent-key", join(root, "nope.key")])
    expect(missing.stderr).toMatch(new RegExp(`^error: mandate/unreadable at ${join(root, "nope.key")}: ENOENT`))
    expect(missing.stderr).not.toContain("FileSystem")
  })

  it("still reads a seed given the old way, with a deprecation line, and refuses both ways at once", async () => {
    const seed = encodeBase64url(new Uint8Array(32).fill(4))
    const agent = await run(["yea", "mcp", NOWHERE, "--agent-seed", seed])
    expect(agent.stderr.split("\n")[0]).toBe("yea mcp: warning: --agent-seed is deprecated (a seed on the command line is visible to every user of this machine); give --agent-key FILE, a key file as `mandate keygen FILE` writes it")
    expect(agent.stderr).toContain("error: yea/unavailable")
    const bad = await run(["yea", "mcp-example", "--server-seed", "AAAA"])
    expect(bad.stderr).toMatch(/warning: --server-seed is deprecated[^\n]*\nerror: mandate\/bad_key at mandate yea mcp-example: --server-seed is not a base64url 32-byte seed\n$/)
    const both = await run(["yea", "mcp", NOWHERE, "--agent-seed", seed, "--agent-key", keyFile("both.key", 4)])
    expect(both.stderr).toBe("error: mandate/usage at mandate yea mcp: give --agent-key or --agent-seed, not both\n")
    const here = await run(["yea", "mcp", NOWHERE, "--agent-key", keyFile("a2.key", 2), "--approve-here", seed])
    expect(here.stderr).toMatch(/warning: --approve-here SEED is deprecated/)
  })

  it("--approve-here takes the principal's key file and warns that a form-filling client approves by itself", async () => {
    const r = await run(["yea", "mcp", NOWHERE, "--agent-key", keyFile("a3.key", 2), "--approve-here", keyFile("principal.key", 1)])
    expect(r.stderr).toContain("yea mcp: warning: --approve-here signs a consent with the principal's key")
    expect(r.stderr).toContain("a client that fills forms automatically (or lets its model answer them) approves by itself")
    expect(r.stderr).not.toMatch(DEPRECATED)
    const none = await run(["yea", "mcp", NOWHERE, "--agent-key", keyFile("a4.key", 2)])
    expect(none.stderr).not.toContain("--approve-here")
  })

  it("no command requires a seed or secret on its command line: such options are optional and deprecated", async () => {
    const secretish = /seed|secret|password|passphrase|private/
    let seen = 0
    for (const e of tree) {
      for (const path of isGroup(e) ? e.subcommands.map((s) => [e.name, s.name]) : [[e.name]]) {
        for (const o of (await select(path)).options) {
          if (!secretish.test(o.names[0])) continue
          seen++
          expect(o.optional, `${path.join(" ")} ${o.names[0]}`).toBe(true)
          expect(o.description, `${path.join(" ")} ${o.names[0]}`).toMatch(/^Deprecated: /)
        }
      }
    }
    // --agent-seed and --server-seed, still read.
    expect(seen).toBe(2)
  })
})

describe("upstream credentials in a header file (yea openapi --header-file)", () => {
  const spec = join(root, "spec.json")
  writeFileSync(spec, JSON.stringify({ openapi: "3.0.0", info: { title: "t", version: "1" }, paths: {} }))
  const headers = (name: string, text: string, mode = 0o600): string => {
    const path = join(root, name)
    writeFileSync(path, text, { mode })
    return path
  }

  it("refuses a header file others can read, and a line that is not a header, naming the file and line", async () => {
    const open = headers("open.headers", "Authorization: Bearer t\n", 0o644)
    const a = await run(["yea", "openapi", spec, "--header-file", open])
    expect(a.status).toBe(1)
    expect(a.stderr).toMatch(new RegExp(`^error: mandate/key_permissions at ${open}: header file mode 644 lets others read it; chmod 600\n$`))
    const bad = headers("bad.headers", "# token\n\nAuthorization: Bearer t\nnot a header\n")
    const b = await run(["yea", "openapi", spec, "--header-file", bad])
    expect(b.stderr).toBe(`error: mandate/usage at ${bad} line 4: not a \`Name: value\` header\n`)
    const missing = await run(["yea", "openapi", spec, "--header-file", join(root, "none.headers")])
    expect(missing.stderr).toMatch(/^error: mandate\/unreadable at .*none\.headers: ENOENT/)
  })
})
