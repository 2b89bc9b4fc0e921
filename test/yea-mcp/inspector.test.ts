// A third-party MCP client against the bridge: `@modelcontextprotocol/inspector-cli` (the MCP
// Inspector's command-line mode) starts `mandate yea mcp URL` over stdio, in front of the example
// shop on yea:// (loopback), and lists its tools, calls an ask and an intent that auto-commits
// inside the grant. Each run is one process, bounded by a timeout.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { repoRoot } from "../support/shared.js"
import { keyFileOf, principalKey, principalSeed } from "./harness.js"
import { cliEntry } from "../support/cli.js"

const inspector = (() => {
  try {
    return join(createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector-cli/package.json"), "..", "build", "index.js")
  } catch {
    return undefined
  }
})()

const agentSeed = new Uint8Array(32).fill(2)
const grant: string = Effect.runSync(
  issueRootGrant({ sub: keyFromSeed(agentSeed), caveats: [{ svc: ["shop.example"] }, { each: { of: "spend", max: 2000, scale: 2, unit: "USD" } }, { exp: 4102444800 }] })
    .pipe(Effect.provide(Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([9])))))
)

const tempHome = mkdtempSync(join(tmpdir(), "yea-inspector-home-"))
const run = (command: string, args: ReadonlyArray<string>, onLine?: (s: string) => boolean, cwd = repoRoot) =>
  new Promise<{ status: number | null; out: string; kill: () => void }>((resolve) => {
    // HOME is a temp folder: the bridge keeps its consents in the YEA home, never the real one.
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HOME: tempHome, YEA_HOME: join(tempHome, ".yea") } })
    let out = ""
    let done = false
    const finish = (status: number | null) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve({ status, out, kill: () => child.kill() })
    }
    const timer = setTimeout(() => { child.kill("SIGKILL"); finish(null) }, 120_000)
    const take = (c: Buffer) => {
      out += c.toString()
      if (onLine?.(out)) finish(0)
    }
    child.stdout.on("data", take)
    child.stderr.on("data", take)
    child.on("close", (status) => finish(status))
  })

const shop = Effect.acquireRelease(
  Effect.promise(() => run(process.execPath, [...cliEntry, "yea", "serve", "shop", "--port", "0", "--trust", principalKey], (s) => /serving \S+ at (\S+)/.test(s))),
  (s) => Effect.sync(() => s.kill())
).pipe(Effect.map((s) => (/serving \S+ at (\S+)/.exec(s.out) as RegExpExecArray)[1]))

/** One inspector-cli run against the bridge; its JSON answer. */
const inspect = (url: string, method: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    // inspector-cli's form: the server's command as its target, the server's own arguments after `--`.
    const bridge = [...cliEntry, "yea", "mcp", url, "--agent-key", keyFileOf(agentSeed), "--grant", grant]
    // It looks for its own package.json with existsSync("../package.json") against the working
    // directory, then imports that path against its module: run it one folder below a package.json.
    const r = await run(process.execPath, [inspector as string, process.execPath, ...method, "--", ...bridge], undefined, join(repoRoot, "test"))
    expect(r.status, r.out).toBe(0)
    return JSON.parse(r.out.slice(r.out.indexOf("{"))) as Record<string, unknown>
  })

describe("the bridge under @modelcontextprotocol/inspector-cli", () => {
  if (inspector === undefined) {
    it("skipped: @modelcontextprotocol/inspector-cli is not installed", () => {
      console.log("skipped: @modelcontextprotocol/inspector-cli is not installed")
    })
    return
  }
  it.live("lists one tool per capability plus the utilities, runs an ask and an auto-committed intent", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* shop
        const list = yield* inspect(url, ["--method", "tools/list"])
        expect((list.tools as Array<{ name: string }>).map((t) => t.name).sort()).toEqual(["shop_order", "shop_search", "yea_consent", "yea_expand", "yea_undo"])
        const search = yield* inspect(url, ["--method", "tools/call", "--tool-name", "shop_search", "--tool-arg", "tag=vegan"])
        expect(search.isError ?? false, JSON.stringify(search)).toBe(false)
        const order = yield* inspect(url, ["--method", "tools/call", "--tool-name", "shop_order", "--tool-arg", 'items=[{"sku":"m01","qty":1}]', "--tool-arg", "deliver=2030-01-02"])
        expect(order.isError ?? false, JSON.stringify(order)).toBe(false)
        // The hardened Lens of a RECEIPT: committed, marked as such.
        const lens = (order.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n")
        expect(lens, lens).toMatch(/^✓ /)
        expect((order.structuredContent as { reply: { kind: string } }).reply.kind).toBe("RECEIPT")
      })
    ), 300_000)
})
