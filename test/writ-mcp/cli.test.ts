// `mandate writ mcp-proxy` in front of `mandate writ mcp-echo`, both as a user runs them (child
// processes on stdio), with the SDK's Client as the MCP client: a grant of two uses gives ok, ok,
// count_exhausted, and the receipts file holds the three verified tallies. Also `--print-pins` and
// the one-line failures.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { cliEntry, runMandate } from "../support/cli.js"
import { anyTool, call, files, grant, repo, root, statusOf } from "./support.js"

const mandateArgs = (...args: ReadonlyArray<string>) => [...cliEntry, ...args]

/** The SDK Client on `mandate writ mcp-proxy OPTIONS -- mandate writ mcp-echo`, closed with the scope. */
const proxyClient = (options: ReadonlyArray<string>, serverKeyFile: string, echoOptions: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: mandateArgs(
        "writ", "mcp-proxy", ...options, "--",
        process.execPath, ...mandateArgs("writ", "mcp-echo", "--key", serverKeyFile, "--root", root.did, ...echoOptions)
      ),
      cwd: repo,
      env: { ...(process.env as Record<string, string>), NO_COLOR: "1" },
      stderr: "inherit"
    })
    const client = new Client({ name: "writ-mcp-cli-test", version: "0.1.0" })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport, { timeout: 120_000 })),
      () => Effect.promise(() => client.close().catch(() => undefined))
    )
    return client
  })

describe("mandate writ mcp-proxy -- mandate writ mcp-echo", () => {
  it.live("ok, ok, count_exhausted through the command line, receipts as JSON lines", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool, uses: { t: "count", v: 2 } }))
      const receipts = join(f.dir, "receipts.jsonl")
      const client = yield* proxyClient(["--key", f.agentKey, "--grant", f.grantFile, "--receipts", receipts], f.serverKey)
      expect((yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)).toEqual(["echo"])
      const outcomes = [
        yield* call(client, "echo", { text: "a" }),
        yield* call(client, "echo", { text: "b" }),
        yield* call(client, "echo", { text: "c" })
      ]
      expect(outcomes.map(statusOf)).toEqual(["ok", "ok", "count_exhausted"])
      const lines = readFileSync(receipts, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { tally: { st: string; err?: { code: string } } })
      expect(lines.map((l) => l.tally.err?.code ?? l.tally.st)).toEqual(["ok", "ok", "count_exhausted"])
    }).pipe(Effect.scoped), { timeout: 240_000 })

  it.live("mcp-echo --store: the count survives a restart of the server (spec section 9)", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool, uses: { t: "count", v: 2 } }))
      const store = ["--store", join(f.dir, "echo.sqlite")]
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* proxyClient(["--key", f.agentKey, "--grant", f.grantFile], f.serverKey, store)
        return [yield* call(client, "echo", { text: "a" }), yield* call(client, "echo", { text: "b" })].map(statusOf)
      }))
      expect(first).toEqual(["ok", "ok"])
      // A new proxy and a new server process on the same store file: the grant's two uses are gone.
      const second = yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* proxyClient(["--key", f.agentKey, "--grant", f.grantFile], f.serverKey, store)
        return statusOf(yield* call(client, "echo", { text: "c" }))
      }))
      expect(second).toBe("count_exhausted")
    }), { timeout: 240_000 })

  it.live("a client that pipelines its calls behind initialize and then closes its input: every call answered, stdout JSON-RPC only, clean exit", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool, uses: { t: "count", v: 2 } }))
      const receipts = join(f.dir, "receipts.jsonl")
      const lines = [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "sh", version: "1" } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        ...["one", "two", "three"].map((text, i) => ({ jsonrpc: "2.0", id: i + 2, method: "tools/call", params: { name: "echo", arguments: { text } } }))
      ].map((m) => JSON.stringify(m) + "\n").join("")
      const r = yield* Effect.promise(() => new Promise<{ status: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, mandateArgs(
          "writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--receipts", receipts, "--",
          process.execPath, ...mandateArgs("writ", "mcp-echo", "--key", f.serverKey, "--root", root.did)
        ), { cwd: repo, stdio: ["pipe", "pipe", "inherit"] })
        let stdout = ""
        child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
        const timer = setTimeout(() => child.kill("SIGKILL"), 200_000)
        child.on("close", (status) => {
          clearTimeout(timer)
          resolve({ status, stdout })
        })
        child.stdin.end(lines)
      }))
      expect(r.status).toBe(0)
      const answers = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean; content?: Array<{ text: string }> } })
      expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3, 4])
      const byId = new Map(answers.map((a) => [a.id, a]))
      // The server may admit concurrent calls in any order: each is answered with its own body or
      // the refusal, and exactly one is refused.
      const texts = [2, 3, 4].map((id) => byId.get(id)?.result?.content?.[0]?.text)
      const own = ["one", "two", "three"].map((t) => JSON.stringify({ text: t }))
      texts.forEach((t, i) => expect([own[i], "Writ refused this call: count_exhausted"]).toContain(t))
      expect(texts.filter((t) => t === "Writ refused this call: count_exhausted").length).toBe(1)
      expect(readFileSync(receipts, "utf8").trim().split("\n").length).toBe(3)
    }), { timeout: 240_000 })

  it.live("--print-pins writes the pin file on stdout and each definition on stderr; the proxy accepts it", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool }))
      const r = yield* Effect.promise(() => runMandate(
        ["writ", "mcp-proxy", "--print-pins", "--", process.execPath, ...mandateArgs("writ", "mcp-echo", "--key", f.serverKey, "--root", root.did)],
        200_000, "SIGKILL"
      ))
      expect(r.status).toBe(0)
      const pins = JSON.parse(r.stdout) as Record<string, string>
      expect(Object.keys(pins)).toEqual(["echo"])
      expect(r.stderr).toContain("Runs only under a Writ call")
      writeFileSync(join(f.dir, "pins.json"), r.stdout)
      const client = yield* proxyClient(["--key", f.agentKey, "--grant", f.grantFile, "--pins", join(f.dir, "pins.json")], f.serverKey)
      expect((yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)).toEqual(["echo"])
      expect(statusOf(yield* call(client, "echo", { text: "pinned" }))).toBe("ok")
    }).pipe(Effect.scoped), { timeout: 240_000 })

  it.live("failures are one line naming the reason", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool }))
      const noServer = yield* Effect.promise(() => runMandate(["writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile], 200_000, "SIGKILL"))
      expect(noServer.status).toBe(1)
      expect(noServer.stderr).toMatch(/^error: mandate\/usage at mandate writ mcp-proxy: give the server's command after --/m)
      // A grant whose leaf the key does not hold (the server's key signing as the agent).
      const notHeld = yield* Effect.promise(() => runMandate(["writ", "mcp-proxy", "--key", f.serverKey, "--grant", f.grantFile, "--", "true"], 200_000, "SIGKILL"))
      expect(notHeld.status).toBe(1)
      expect(notHeld.stderr).toMatch(/^error: wrong_executor at chain: /m)
      const badRoot = yield* Effect.promise(() => runMandate(["writ", "mcp-echo", "--key", f.serverKey, "--root", "did:key:nope"], 200_000, "SIGKILL"))
      expect(badRoot.status).toBe(1)
      expect(badRoot.stderr).toMatch(/^error: bad_key at --root: /m)
      const noSuchServer = yield* Effect.promise(() => runMandate(["writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--", join(f.dir, "no-such-server")], 200_000, "SIGKILL"))
      expect(noSuchServer.status).toBe(1)
      expect(noSuchServer.stderr).toMatch(/^error: mandate\/server at mandate writ mcp-proxy: cannot start the server: .*ENOENT/m)
      writeFileSync(join(f.dir, "pins.json"), "{\"echo\": 5}")
      const badPins = yield* Effect.promise(() => runMandate(["writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--pins", join(f.dir, "pins.json"), "--", "true"], 200_000, "SIGKILL"))
      expect(badPins.stderr).toMatch(/^error: malformed at .*pins.json: /m)
    }), { timeout: 240_000 })
})
