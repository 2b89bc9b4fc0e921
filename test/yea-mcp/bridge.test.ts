// The bridge (SPEC-bridge) driven by the SDK's own Client over stdio, in front of the example shop
// served on yea:// (loopback): one tool per capability, results as hardened Lens, auto-commit
// within the grant, consent by code (`yea approve` + `yea_consent`), consent by typed phrase with
// --approve-here, undo, and the refusals of `yea_consent`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { decodeConsentCode, issueConsentGrant } from "../../src/yea/consent.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { repoRoot } from "../support/shared.js"
import { startNotes } from "../yea-openapi/rest-server.js"
import { keyFileOf, principalKey, principalSeed, policy, text } from "./harness.js"
import { cliEntry } from "../support/cli.js"

const agentSeed = new Uint8Array(32).fill(2)
/** The bridge keeps pending proposals and consents in the YEA home: a temp one per bridge. */
const bridgeEnv = () => ({ ...getDefaultEnvironment(), MANDATE_HOME: mkdtempSync(join(tmpdir(), "yea-bridge-home-")) })
const agentKey = keyFromSeed(agentSeed)
const T = { timeout: 180_000 }
const principal = Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([9])))

const grant: string = Effect.runSync(
  issueRootGrant({ sub: agentKey, caveats: [{ svc: ["shop.example"] }, { each: { of: "spend", max: 2000, scale: 2, unit: "USD" } }, { exp: 4102444800 }] }).pipe(Effect.provide(principal))
)

const shop = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ url: string; kill: () => void }>((resolve, reject) => {
        const child = spawn(process.execPath, [...cliEntry, "yea", "serve", "shop", "--port", "0", "--trust", principalKey], { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] })
        let err = ""
        const timer = setTimeout(() => reject(new Error(`the shop did not start: ${err}`)), 60_000)
        child.stderr.on("data", (c: Buffer) => {
          err += c.toString()
          const m = /serving \S+ at (\S+)/.exec(err)
          if (m) {
            clearTimeout(timer)
            resolve({ url: m[1], kill: () => child.kill() })
          }
        })
      })
  ),
  (s) => Effect.sync(() => s.kill())
)

const bridge = (url: string, o: { readonly approveHere?: boolean; readonly form?: string } = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "test", version: "1" }, { capabilities: o.form === undefined ? {} : { elicitation: { form: {} } } })
      if (o.form !== undefined) {
        const confirm = o.form
        client.setRequestHandler(ElicitRequestSchema, async (req) => {
          const schema = (req.params as { requestedSchema: { properties: { plan?: { oneOf: Array<{ const: string }> } } } }).requestedSchema
          const plan = schema.properties.plan?.oneOf[0]?.const
          return { action: "accept", content: plan === undefined ? { confirm } : { plan, confirm } }
        })
      }
      const args = [...cliEntry, "yea", "mcp", url, "--agent-key", keyFileOf(agentSeed), "--grant", grant, ...(o.approveHere ? ["--approve-here", keyFileOf(principalSeed)] : [])]
      await client.connect(new StdioClientTransport({ command: process.execPath, args, cwd: repoRoot, stderr: "pipe", env: bridgeEnv() }))
      return client
    }),
    (c) => Effect.promise(() => c.close())
  )

const call = (c: Client, name: string, args: Record<string, unknown>) => Effect.promise(() => c.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }) as Promise<CallToolResult>)
const cheap = { items: [{ sku: "m01", qty: 1 }], deliver: "2030-01-02" }
const dear = { items: [{ sku: "m02", qty: 6 }], deliver: "2030-01-02" }

describe("mandate yea mcp (the bridge)", () => {
  it.live("one tool per capability plus the utilities; ask as hardened Lens; auto-commit within the grant; undo", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { url } = yield* shop
        const c = yield* bridge(url)
        const tools = (yield* Effect.promise(() => c.listTools())).tools
        expect(tools.map((t) => t.name).sort()).toEqual(["shop_order", "shop_search", "yea_consent", "yea_expand", "yea_undo"])
        const order = tools.find((t) => t.name === "shop_order")!
        expect(order._meta).toEqual({ "dev.yea/service": "shop.example", "dev.yea/capability": "shop.order" })
        expect(Object.keys(order.inputSchema.properties ?? {})).toEqual(["items", "deliver", "goal", "preview", "proposal"])
        const search = yield* call(c, "shop_search", { tag: "vegan" })
        expect(search.isError).toBeFalsy()
        const r = yield* call(c, "shop_order", cheap)
        expect(text(r)).toMatch(/^✓ /)
        const receipt = (r.structuredContent as { reply: { receipt: { id: string } } }).reply.receipt.id
        const u = yield* call(c, "yea_undo", { service: "shop.example", receipt })
        expect(text(u)).toMatch(/^↶ undid /)
      })
    ), T)

  it.live("over the grant: proposals and a code; approve + yea_consent + the same call commits it once; yea_consent refuses a policy grant", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { url } = yield* shop
        const c = yield* bridge(url)
        const preview = yield* call(c, "shop_order", { ...dear, preview: true })
        expect(text(preview)).toMatch(/proposal/)
        const first = yield* call(c, "shop_order", dear)
        expect(text(first)).toMatch(/^Nothing ran: the service needs the person's approval/)
        const codes = (first.structuredContent as { codes: Array<{ code: string }> }).codes
        expect(codes.length).toBeGreaterThan(0)
        expect(text(yield* call(c, "yea_consent", { token: policy }))).toMatch(/^✗ refused/)
        expect(text(yield* call(c, "yea_consent", { token: grant }))).toMatch(/^✗ refused/)
        // `yea approve <code>` where the principal key is: check, then sign to the code's agent.
        const decoded = decodeConsentCode(codes[0].code)
        if (decoded._tag === "Left") throw new Error(decoded.left.message)
        expect(decoded.right.agent).toBe(agentKey)
        const consent = yield* issueConsentGrant(decoded.right.consent, decoded.right.agent).pipe(Effect.provide(principal), Effect.orDie)
        expect(text(yield* call(c, "yea_consent", { token: consent }))).toMatch(/^saved a consent for proposal/)
        const done = yield* call(c, "shop_order", dear)
        expect(text(done)).toMatch(/^✓ /)
        // The consent was used: the same call again asks afresh, it never commits twice on it.
        const again = yield* call(c, "shop_order", dear)
        expect(text(again)).toMatch(/^Nothing ran/)
      })
    ), T)

  it.live("--approve-here: the typed phrase in a client with forms commits the shown proposal", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { url } = yield* shop
        const c = yield* bridge(url, { approveHere: true, form: "approve" })
        const r = yield* call(c, "shop_order", { ...dear, items: [{ sku: "m03", qty: 6 }] })
        expect(text(r)).toMatch(/^✓ /)
        const wrong = yield* bridge(url, { approveHere: true, form: "ok" })
        const w = yield* call(wrong, "shop_order", { ...dear, items: [{ sku: "m04", qty: 6 }] })
        expect(text(w)).toBe("✗ refused: not approved after 3 tries; nothing ran")
      })
    ), T)
})


describe("the bridge in front of the OpenAPI adapter", () => {
  it.live("a REST API reaches an MCP client: GET as a read tool, a write as proposals (nothing sent), consent by code, then sent once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const rest = yield* Effect.acquireRelease(Effect.promise(startNotes), (s) => Effect.promise(s.close))
        const api = yield* Effect.acquireRelease(
          Effect.promise(
            () =>
              new Promise<{ url: string; kill: () => void }>((resolve, reject) => {
                const args = [...cliEntry, "yea", "openapi", join(repoRoot, "test/yea-openapi/fixtures/notes.json"), "--base", rest.base, "--port", "0", "--id", "notes.example", "--trust", principalKey]
                const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] })
                let err = ""
                const timer = setTimeout(() => reject(new Error(`did not start: ${err}`)), 60_000)
                child.stderr.on("data", (c: Buffer) => {
                  err += c.toString()
                  const m = / at (yea:\/\/\S+)/.exec(err)
                  if (m) {
                    clearTimeout(timer)
                    resolve({ url: m[1], kill: () => child.kill() })
                  }
                })
              })
          ),
          (s) => Effect.sync(() => s.kill())
        )
        const notesGrant = yield* issueRootGrant({ sub: agentKey, caveats: [{ svc: ["notes.example"] }, { risk: "low" }] }).pipe(Effect.provide(principal))
        const c = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new Client({ name: "test", version: "1" })
            const args = [...cliEntry, "yea", "mcp", api.url, "--agent-key", keyFileOf(agentSeed), "--grant", notesGrant]
            await client.connect(new StdioClientTransport({ command: process.execPath, args, cwd: repoRoot, stderr: "pipe", env: bridgeEnv() }))
            return client
          }),
          (cl) => Effect.promise(() => cl.close())
        )
        const names = (yield* Effect.promise(() => c.listTools())).tools.map((t) => t.name)
        expect(names).toContain("notes_list_notes")
        expect(names).toContain("notes_delete_note")
        expect(text(yield* call(c, "notes_list_notes", {}))).toContain("buy milk")
        const first = yield* call(c, "notes_delete_note", { id: 1 })
        expect(text(first)).toMatch(/^Nothing ran/)
        expect(text(first)).toContain("DELETE /api/notes/1")
        expect(rest.requests.filter((r) => r.startsWith("DELETE")).length).toBe(0)
        const code = (first.structuredContent as { codes: Array<{ code: string }> }).codes[0].code
        const decoded = decodeConsentCode(code)
        if (decoded._tag === "Left") throw new Error(decoded.left.message)
        const consent = yield* issueConsentGrant(decoded.right.consent, decoded.right.agent).pipe(Effect.provide(principal), Effect.orDie)
        expect(text(yield* call(c, "yea_consent", { token: consent }))).toMatch(/^saved a consent/)
        expect(text(yield* call(c, "notes_delete_note", { id: 1 }))).toMatch(/^✓ /)
        expect(rest.requests.filter((r) => r.startsWith("DELETE")).length).toBe(1)
        expect(rest.notes.has(1)).toBe(false)
      })
    ), T)
})
