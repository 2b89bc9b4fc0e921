// `mandate yea install | setup | uninstall --config FILE` in this process, a temp YEA_HOME and
// client file per case: the bridge's entry written and removed, the client's other entries and
// members untouched, no seed in the file, and the refusals with their reasons.
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AGENT, agentKey } from "../yea/_helpers.js"
import { errorLine, homes, mandate, writeSeed } from "./run.js"

const URL_A = "yea://127.0.0.1:7447"
const URL_B = "https://127.0.0.1:8443"
const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>

describe("mandate yea install and uninstall", () => {
  it("adds the bridge on the saved services beside the client's other entries, then removes only it", async () => {
    const h = homes()
    writeSeed(h.home, "agent.key", AGENT)
    // The saved services as `mandate yea add` writes them (yea-services.ts), without a live service.
    writeFileSync(join(h.home, "services.json"), JSON.stringify([{ url: URL_A, id: "cal", name: "Calendar" }, { url: URL_B, id: "shop", name: "Shop" }]), { mode: 0o600 })
    const file = join(h.root, "claude_desktop_config.json")
    const other = { command: "npx", args: ["-y", "some-server"], env: { TOKEN_FILE: "/x" } }
    writeFileSync(file, JSON.stringify({ theme: "dark", mcpServers: { files: other } }, null, 2), { mode: 0o644 })
    const r = await mandate(["yea", "install", "--config", file], h.env)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain(`agent key: ${agentKey} (exists)`)
    const after = read(file)
    expect(after).toEqual({
      theme: "dark",
      mcpServers: { files: other, yea: { command: "mandate", args: ["yea", "mcp", URL_A, URL_B], env: { YEA_HOME: h.home } } }
    })
    expect(statSync(file).mode & 0o777).toBe(0o644)
    expect(readFileSync(file, "utf8")).not.toContain(Buffer.from(AGENT).toString("hex"))
    const again = await mandate(["yea", "setup", "--config", file, "--service", "cal"], h.env)
    expect(again.stdout).toContain("replaced yea")
    expect((read(file).mcpServers as Record<string, { args: Array<string> }>).yea.args).toEqual(["yea", "mcp", URL_A])
    const gone = await mandate(["yea", "uninstall", "--config", file], h.env)
    expect(gone.status, gone.stderr).toBe(0)
    expect(read(file)).toEqual({ theme: "dark", mcpServers: { files: other } })
    expect(existsSync(join(h.home, "agent.key"))).toBe(true)
    const twice = await mandate(["yea", "uninstall", "--config", file], h.env)
    expect(twice.status).toBe(0)
    expect(twice.stdout).toContain("nothing to remove")
  })

  it("creates a missing client file (0600) and the agent key, never a principal key", async () => {
    const h = homes()
    const file = join(h.root, "mcp.json")
    const r = await mandate(["yea", "install", "--config", file, "--service", URL_A, "--name", "mandate-yea"], h.env)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/agent key: ed25519:\S+ \(created\)/)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(Object.keys(read(file).mcpServers as object)).toEqual(["mandate-yea"])
    expect(existsSync(join(h.principalHome, "principal.key"))).toBe(false)
    const seed = readFileSync(join(h.home, "agent.key"), "utf8").trim()
    expect(readFileSync(file, "utf8")).not.toContain(seed)
  })

  it("refuses no services, an unknown name, and a client file that is not a JSON object with an mcpServers object; the file is left as it was", async () => {
    const h = homes()
    const file = join(h.root, "mcp.json")
    expect(errorLine(await mandate(["yea", "install", "--config", file], h.env))).toMatch(/^error: invalid_params at --service: no services/)
    expect(errorLine(await mandate(["yea", "install", "--config", file, "--service", "nope"], h.env))).toMatch(/^error: mandate\/unknown_service at nope: /)
    expect(existsSync(file)).toBe(false)
    for (const body of ["[]", "{ // comment\n}", `{"mcpServers": []}`, `{"a":1,"a":2}`]) {
      writeFileSync(file, body)
      for (const args of [["install", "--service", URL_A], ["uninstall"]]) {
        const r = await mandate(["yea", ...args, "--config", file], h.env)
        expect(errorLine(r), body).toMatch(/^error: mandate\/bad_client_config at /)
      }
      expect(readFileSync(file, "utf8")).toBe(body)
    }
  })
})
