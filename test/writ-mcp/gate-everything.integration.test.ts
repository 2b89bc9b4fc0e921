// `writ mcp-gate` in front of @modelcontextprotocol/server-everything, over stdio and over
// Streamable HTTP, with the SDK's Client behind `writ mcp-proxy`: the tools a real client is
// offered, calls that verify, and non-text results (image, resource links, an embedded resource)
// that keep their content types end to end. A grant for tools reads no resource and gets no
// prompt (`method_refused`); a grant naming a prompt and its argument gets that one, counted
// (resources: gate-resources.integration.test.ts). And `--print-pins` pins every tool a real
// client is offered.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { freePort } from "../../src/cli/demo/stage.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { listAllTools, rawPeer } from "../../src/bind/writ-mcp/rpc.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { call, grant, statusOf } from "./support.js"
import { everythingScript, everythingServer, firstText, gateSession, type GateSession } from "./gate-support.js"

const anyTool = () => grant({ act: { t: "prefix", v: "mcp/tools/" }, uses: { t: "count", v: 20 } })

/** The tool names an SDK Client declaring a real client's capabilities is offered, directly. */
const offeredDirectly = Effect.gen(function*() {
  const client = new Client({ name: "direct", version: "0.1.0" }, { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } })
  yield* Effect.acquireRelease(Effect.promise(() => client.connect(everythingServer(), { timeout: 60_000 })), () => Effect.promise(() => client.close()))
  return (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name).sort()
}).pipe(Effect.scoped)

const contentTypes = (o: { readonly _tag: string; readonly result?: JsonObject }) =>
  o._tag === "result" ? (o.result!.content as ReadonlyArray<JsonObject>).map((c) => c.type) : []

const exercise = (s: GateSession) =>
  Effect.gen(function*() {
    const echo = yield* call(s.client, "echo", { message: "hi" })
    expect(statusOf(echo)).toBe("ok")
    expect(echo._tag === "result" && firstText(echo.result)).toBe("Echo: hi")
    const image = yield* call(s.client, "get-tiny-image")
    expect(statusOf(image)).toBe("ok")
    expect(contentTypes(image)).toContain("image")
    const shown = image._tag === "result" ? (image.result.content as ReadonlyArray<JsonObject>).find((c) => c.type === "image") : undefined
    expect(shown?.mimeType).toBe("image/png")
    expect(typeof shown?.data).toBe("string")
    const links = yield* call(s.client, "get-resource-links", { count: 2 })
    expect(contentTypes(links).filter((t) => t === "resource_link")).toHaveLength(2)
    const embedded = yield* call(s.client, "get-resource-reference", { resourceType: "Text", resourceId: 1 })
    expect(contentTypes(embedded)).toContain("resource")
    // Every result verified, and its tally kept.
    expect((yield* s.receipts).map((r) => r.tool)).toEqual(["echo", "get-tiny-image", "get-resource-links", "get-resource-reference"])
  })

describe("writ mcp-gate -- server-everything", () => {
  it.live("stdio: every tool a real client is offered; results keep their content types; a tools grant reads no resource or prompt", () =>
    Effect.gen(function*() {
      const direct = yield* offeredDirectly
      const s = yield* gateSession({ grant: yield* anyTool(), upstream: everythingServer() })
      const listed = (yield* Effect.promise(() => s.client.listTools())).tools.map((t) => t.name).sort()
      expect(listed).toEqual(direct)
      yield* exercise(s)
      // The grant names no resource or prompt: refused as before they were bound, listings empty.
      const read = yield* Effect.either(Effect.tryPromise({ try: () => s.client.readResource({ uri: "demo://resource/static/document/architecture.md" }), catch: (e) => e }))
      expect(read._tag === "Left" && String(read.left)).toContain("method_refused")
      const prompt = yield* Effect.either(Effect.tryPromise({ try: () => s.client.getPrompt({ name: "simple-prompt" }), catch: (e) => e }))
      expect(prompt._tag === "Left" && String(prompt.left)).toContain("method_refused")
      expect((yield* Effect.promise(() => s.client.listPrompts())).prompts).toEqual([])
      expect((yield* Effect.promise(() => s.client.listResources())).resources).toEqual([])
      // Still refused unless allowed: completions and logging.
      const level = yield* Effect.either(Effect.tryPromise({ try: () => s.client.setLoggingLevel("debug"), catch: (e) => e }))
      expect(level._tag === "Left" && String(level.left)).toContain("method_refused")
      // The client is not offered what it would be refused.
      expect(s.client.getServerCapabilities()?.resources).toBeUndefined()
      expect(s.client.getServerCapabilities()?.prompts).toBeUndefined()
      expect((yield* s.receipts)).toHaveLength(4)
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("prompts/get bound: the prompt and the argument the grant names, counted; another refused", () =>
    Effect.gen(function*() {
      const s = yield* gateSession({
        grant: yield* grant({ act: { t: "prefix", v: "mcp/prompts/args-prompt" }, city: { t: "set", v: ["Paris"] }, uses: { t: "count", v: 2 } }),
        upstream: everythingServer()
      })
      expect((yield* Effect.promise(() => s.client.listPrompts())).prompts.map((p) => p.name)).toEqual(["args-prompt"])
      const got = yield* Effect.promise(() => s.client.getPrompt({ name: "args-prompt", arguments: { city: "Paris" } }))
      expect(JSON.stringify(got.messages)).toContain("Paris")
      expect((got._meta?.["io.writ/tally"] as JsonObject).st).toBe("ok")
      const refusedWith = (p: Promise<unknown>) => Effect.map(Effect.either(Effect.tryPromise({ try: () => p, catch: (e) => e })), (r) => r._tag === "Left" ? String(r.left) : "ok")
      expect(yield* refusedWith(s.client.getPrompt({ name: "args-prompt", arguments: { city: "Rome" } }))).toContain("out_of_bounds")
      expect(yield* refusedWith(s.client.getPrompt({ name: "simple-prompt" }))).toContain("method_refused")
      expect(yield* refusedWith(s.client.getPrompt({ name: "args-prompt", arguments: { city: "Paris" } }))).toBe("ok")
      // The third is over the count: the gate's signed tally, verified by the proxy and kept.
      expect(yield* refusedWith(s.client.getPrompt({ name: "args-prompt", arguments: { city: "Paris" } }))).toContain("count_exhausted")
      expect((yield* s.receipts).map((r) => `${String(r.tool)} ${String((r.tally as JsonObject).st)}`)).toEqual([
        "prompts/get args-prompt ok", "prompts/get args-prompt ok", "prompts/get args-prompt failed"
      ])
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("Streamable HTTP: the same calls through the gate to server-everything's HTTP endpoint", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const child = spawn(process.execPath, [everythingScript, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] })
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill()))
      // Listening once it says so on stderr.
      yield* Effect.async<void>((resume) => {
        let seen = ""
        child.stderr.on("data", (d: Buffer) => {
          seen += d.toString()
          if (seen.includes("listening")) resume(Effect.void)
        })
      }).pipe(Effect.timeout("60 seconds"))
      const s = yield* gateSession({ grant: yield* anyTool(), upstream: new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)) })
      expect((yield* Effect.promise(() => s.client.listTools())).tools.map((t) => t.name)).toContain("echo")
      yield* exercise(s)
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("--print-pins pins every tool a real client is offered (not the shorter list of a client with no capabilities)", () =>
    Effect.gen(function*() {
      const direct = yield* offeredDirectly
      const pinned = yield* Effect.scoped(Effect.flatMap(rawPeer(everythingServer()), (p) => listAllTools(p.request)))
      expect(pinned.map((t) => t.name as string).sort()).toEqual(direct)
      expect(direct).toEqual(expect.arrayContaining(["get-roots-list", "trigger-elicitation-request", "trigger-sampling-request"]))
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
