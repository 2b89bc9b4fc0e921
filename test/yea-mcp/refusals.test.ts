// The refusals of the MCP binding (SPEC-mcp-ts "Start-up refusals", "Per-call refusals", the
// consent-code result without codes, registration errors), in process: the SDK's Client and
// McpServer joined by its InMemoryTransport.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { z } from "zod"
import { RandomBytes } from "../../src/kernel/services.js"
import { makeApprovals, type YeaMcpOptions } from "../../src/bind/mcp/context.js"
import { guard, job } from "../../src/bind/mcp/job.js"
import { textResult } from "../../src/bind/mcp/render.js"
import { memoryApprovalStore, randomCodecLayer } from "../../src/yea/approval/index.js"
import { principalKey, serverKey, policy } from "./harness.js"
import { text } from "./harness.js"

const services = Layer.mergeAll(memoryApprovalStore, randomCodecLayer, RandomBytes.live).pipe(Layer.provideMerge(RandomBytes.live))
const base: YeaMcpOptions = { name: "billing", transport: "stdio", serviceId: serverKey, principal: principalKey, policy: Effect.succeed(policy) }

const connected = (server: McpServer) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const [a, b] = InMemoryTransport.createLinkedPair()
      const client = new Client({ name: "t", version: "1" })
      await Promise.all([server.connect(a), client.connect(b)])
      return client
    }),
    (c) => Effect.promise(() => c.close())
  )
const call = (c: Client, name: string, args: Record<string, unknown>) => Effect.promise(() => c.callTool({ name, arguments: args }) as Promise<CallToolResult>)

const refund = { inputSchema: { cents: z.number().int() }, risk: "low" as const, plan: async ({ cents }: Record<string, unknown>) => [{ summary: `Refund ${String(cents)}`, effects: [], uses: { spend: { amount: Number(cents), scale: 2, unit: "USD" } }, undoWindow: 60, apply: async () => ({ ok: true }) }], revert: async () => undefined }

describe("start-up refusals", () => {
  it.scoped("an invalid name, HTTP without sub, HTTP on a memory store without singleProcess", () =>
    Effect.gen(function* () {
      expect((yield* Effect.flip(makeApprovals({ ...base, name: "Bad Name" }))).reason).toBe("invalid_name")
      expect((yield* Effect.flip(makeApprovals({ ...base, transport: "http" }))).reason).toBe("no_sub")
      expect((yield* Effect.flip(makeApprovals({ ...base, transport: "http", sub: () => "p" }))).reason).toBe("memory_store_http")
      expect((yield* Effect.flip(makeApprovals({ ...base, serviceId: "nope" }))).reason).toBe("invalid_service_id")
    }).pipe(Effect.provide(services)))
})

describe("per-call refusals and the no-codes result", () => {
  it.scoped("on a memory store or without a pinned principal the consent-code result has no codes and says why", () =>
    Effect.gen(function* () {
      for (const [o, why] of [[base, /in memory/], [{ ...base, principal: undefined }, /no pinned principal/]] as const) {
        const ctx = yield* makeApprovals(o)
        const server = new McpServer({ name: "x", version: "1" })
        job(ctx, server, "refund", refund)
        const c = yield* connected(server)
        const r = yield* call(c, "refund", { cents: 9000 })
        expect(r.isError).toBe(true)
        expect((r.structuredContent as { codes: Array<unknown> }).codes).toEqual([])
        expect(text(r)).toMatch(why)
      }
    }).pipe(Effect.provide(services)), { timeout: 30_000 })

  it.scoped("a denied tool refuses before planning, previews included; a policy file with a bad deny refuses every call; a non-integer input fails closed", () =>
    Effect.gen(function* () {
      let planned = 0
      const counting = { ...refund, plan: async (i: Record<string, unknown>) => (planned++, refund.plan(i)) }
      const denied = yield* makeApprovals({ ...base, tighten: { deny: ["refund"], outOfBand: "high" } })
      const s1 = new McpServer({ name: "x", version: "1" })
      job(denied, s1, "refund", counting)
      const c1 = yield* connected(s1)
      expect(text(yield* call(c1, "refund", { cents: 1, preview: true }))).toBe("✗ denied: your policy never allows refund")
      expect(planned).toBe(0)
      const badFile = yield* makeApprovals({ ...base, policyFile: Effect.succeed({ deny: "refund" }) })
      const s2 = new McpServer({ name: "x", version: "1" })
      job(badFile, s2, "refund", counting)
      const c2 = yield* connected(s2)
      expect(text(yield* call(c2, "refund", { cents: 1 }))).toMatch(/^✗ refused: the policy file can't be used: ignored "deny": bad value/)
      const ok = yield* makeApprovals(base)
      const s3 = new McpServer({ name: "x", version: "1" })
      job(ok, s3, "refund", { ...refund, inputSchema: { cents: z.number() } })
      const c3 = yield* connected(s3)
      expect(text(yield* call(c3, "refund", { cents: 1.5 }))).toMatch(/^✗ invalid input: /)
    }).pipe(Effect.provide(services)), { timeout: 30_000 })

  it.scoped("a plan that throws, an untypeable phrase and an empty plan list are tool errors, never crashes", () =>
    Effect.gen(function* () {
      const ctx = yield* makeApprovals(base)
      const server = new McpServer({ name: "x", version: "1" })
      job(ctx, server, "boom", { inputSchema: {}, plan: async () => { throw new Error("upstream down\n+ forged") } })
      job(ctx, server, "phrase", { ...refund, confirmWith: () => "go\u202e" })
      job(ctx, server, "empty", { inputSchema: {}, plan: async () => [] })
      const c = yield* connected(server)
      expect(text(yield* call(c, "boom", {}))).toBe("✗ the job could not plan: upstream down\\u{a}+ forged")
      expect(text(yield* call(c, "phrase", { cents: 1 }))).toMatch(/^✗ the job's phrase is unusable/)
      expect(text(yield* call(c, "empty", {}))).toBe("✗ nothing to do: the job returned no plans")
    }).pipe(Effect.provide(services)), { timeout: 30_000 })
})

describe("registration errors", () => {
  it.scoped("a schema with preview, guarding twice, guarding a foreign tool and a foreign undo tool all throw", () =>
    Effect.gen(function* () {
      const ctx = yield* makeApprovals(base)
      const server = new McpServer({ name: "x", version: "1" })
      expect(() => job(ctx, server, "j", { ...refund, inputSchema: { preview: z.string() } })).toThrow(/preview/)
      const t = server.registerTool("archive", { inputSchema: { doc: z.string() } }, async () => textResult(["ok"]))
      const describe = () => ({ summary: "s", effects: [] })
      guard(ctx, server, t, { describe })
      expect(() => guard(ctx, server, t, { describe })).toThrow(/already a job/)
      const other = new McpServer({ name: "y", version: "1" })
      expect(() => guard(ctx, other, t, { describe })).toThrow(/not registered/)
      other.registerTool("undo", {}, async () => textResult(["mine"]))
      expect(() => job(ctx, other, "r", refund)).toThrow(/already has a tool named undo/)
    }).pipe(Effect.provide(services)))
})

describe("guard() annotations", () => {
  it.scoped("a guarded tool says destructiveHint: true unless its author set it; the author's other annotations stay", () =>
    Effect.gen(function* () {
      const ctx = yield* makeApprovals(base)
      const server = new McpServer({ name: "x", version: "1" })
      const describe = () => ({ summary: "s", effects: [] })
      const plain = server.registerTool("archive", { inputSchema: { doc: z.string() } }, async () => textResult(["ok"]))
      const hinted = server.registerTool("touch", { inputSchema: { doc: z.string() }, annotations: { openWorldHint: false } }, async () => textResult(["ok"]))
      const authored = server.registerTool("tag", { inputSchema: { doc: z.string() }, annotations: { destructiveHint: false } }, async () => textResult(["ok"]))
      for (const t of [plain, hinted, authored]) guard(ctx, server, t, { describe })
      const c = yield* connected(server)
      const tools = (yield* Effect.promise(() => c.listTools())).tools
      const of = (name: string) => tools.find((t) => t.name === name)?.annotations
      expect(of("archive")).toMatchObject({ destructiveHint: true })
      expect(of("touch")).toMatchObject({ destructiveHint: true, openWorldHint: false })
      expect(of("tag")).toMatchObject({ destructiveHint: false })
    }).pipe(Effect.provide(services)), { timeout: 30_000 })
})

describe("guard() results", () => {
  it.scoped("an original that fails is returned as is, with no receipt; on a tool with an outputSchema the plugin's own results are errors", () =>
    Effect.gen(function* () {
      const ctx = yield* makeApprovals(base)
      const server = new McpServer({ name: "x", version: "1" })
      let ran = 0
      const t = server.registerTool("archive", { inputSchema: { doc: z.string() }, outputSchema: { archived: z.string() } }, async ({ doc }) => {
        ran++
        return doc === "bad" ? { content: [{ type: "text" as const, text: "no such doc" }], isError: true } : { content: [{ type: "text" as const, text: "ok" }], structuredContent: { archived: doc } }
      })
      guard(ctx, server, t, { describe: ({ doc }) => ({ summary: `Archive ${String(doc)}`, effects: [], undoWindow: 60 }), revert: async () => undefined })
      const c = yield* connected(server)
      const failed = yield* call(c, "archive", { doc: "bad" })
      expect(failed.isError).toBe(true)
      expect(text(failed)).toBe("no such doc")
      expect(failed._meta?.["dev.yea/receipt"]).toBeUndefined()
      const preview = yield* call(c, "archive", { doc: "d", preview: true })
      expect(preview.isError).toBe(true) // a success result would fail the client's outputSchema check
      expect(ran).toBe(1)
      const ok = yield* call(c, "archive", { doc: "d" })
      expect(ok.structuredContent).toEqual({ archived: "d" })
      expect((ok._meta as Record<string, { id: string }>)["dev.yea/receipt"].id).toMatch(/^r_/)
    }).pipe(Effect.provide(services)), { timeout: 30_000 })
})
