// The MCP Inspector's command-line mode (`@modelcontextprotocol/inspector-cli`) against
// `mandate writ mcp-proxy --listen` over Streamable HTTP, its bearer key in a header: it lists the
// tools and calls `echo` under the grant (the proxy's verified result, with its tally); without the
// key it gets nothing. Each inspector run is one process.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { join } from "node:path"
import { BEARER, keysFile, startListening } from "../support/remote-mcp.js"
import { repoRoot } from "../support/shared.js"
import { anyTool, files, fixture, grant, root, serverKey } from "./support.js"

const inspector = (() => {
  try {
    return join(createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector-cli/package.json"), "..", "build", "index.js")
  } catch {
    return undefined
  }
})()

/** One inspector-cli run: its exit status and output. It looks for its own package.json against the
 * working directory, so it runs one folder below the repository's (as test/yea-mcp/inspector.test.ts). */
const inspect = (args: ReadonlyArray<string>) =>
  Effect.async<{ status: number | null; out: string }>((resume) => {
    const child = spawn(process.execPath, [inspector as string, ...args], { cwd: join(repoRoot, "test"), stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (c: Buffer) => (out += c.toString()))
    child.stderr.on("data", (c: Buffer) => (out += c.toString()))
    child.on("close", (status) => resume(Effect.succeed({ status, out })))
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

const json = (out: string) => JSON.parse(out.slice(out.indexOf("{"))) as Record<string, unknown>

describe("mcp-proxy --listen under @modelcontextprotocol/inspector-cli (Streamable HTTP)", () => {
  if (inspector === undefined) {
    it("skipped: @modelcontextprotocol/inspector-cli is not installed", () => {
      console.log("skipped: @modelcontextprotocol/inspector-cli is not installed")
    })
    return
  }
  it.live("lists the tools and calls echo with the key; without it, refused", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool, uses: { t: "count", v: 5 } }))
      const proxy = yield* startListening([
        "writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--listen", "127.0.0.1:0", "--keys", keysFile(), "--",
        process.execPath, "--import", "tsx", fixture
      ], { WRIT_SEED: serverKey.hex, WRIT_ROOT: root.did })
      const auth = ["--transport", "http", "--header", `Authorization: Bearer ${BEARER}`]
      const list = yield* inspect([proxy.url, ...auth, "--method", "tools/list"])
      expect(list.status, list.out).toBe(0)
      expect((json(list.out).tools as Array<{ name: string }>).map((t) => t.name)).toContain("echo")
      const called = yield* inspect([proxy.url, ...auth, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=inspected"])
      expect(called.status, called.out).toBe(0)
      const result = json(called.out)
      expect(result.structuredContent).toEqual({ text: "inspected" })
      expect(((result._meta as Record<string, { st?: string }>)["io.writ/tally"]).st).toBe("ok")
      const refused = yield* inspect([proxy.url, "--transport", "http", "--method", "tools/list"])
      expect(refused.status).not.toBe(0)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
