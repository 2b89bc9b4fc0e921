// The gateway between the official OpenAI and Anthropic clients (unmodified but for baseURL) and a
// loopback fake upstream: every endpoint streamed and not, refusals in the provider's shape with no
// upstream call, 50 concurrent first requests against a budget that fits 10, and bad input.
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, ManagedRuntime, Stream } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { Reservations } from "../../src/accounting/reservations.js"
import { gatewayStores } from "../../src/app/gateway.js"
import { RandomBytes } from "../../src/kernel/index.js"
import { spentNow } from "../../src/gateway/keys.js"
import { sha256Hex } from "../../src/gateway/http.js"
import { type CallRecord, type Gateway, type GatewayServices, startGateway } from "../../src/gateway/server.js"
import { Wire } from "../../src/gateway/wire-adapter.js"
import { runOf } from "../../src/gateway/guarded-call.js"
import { toNanos } from "../../src/ledger/usd.js"
import { LedgerStore } from "../../src/ledger/writer.js"
import { type FakeUpstream, heldBurst, startFake } from "./fake-upstream.js"

const dir = mkdtempSync(join(tmpdir(), "gw-"))
let fake: FakeUpstream
let evil: FakeUpstream
let gw: Gateway
let records: Array<CallRecord> = []
let rt: ManagedRuntime.ManagedRuntime<GatewayServices | LedgerStore, unknown>
const MODEL = "gpt-4o-mini"
const CLAUDE = "claude-3-5-haiku-latest"

const used = (keyText: string) =>
  rt.runPromise(spentNow("key", sha256Hex(keyText), null, "UTC"))
const settledFor = (keyText: string) => records.filter((r) => r.keyHash === sha256Hex(keyText))
const waitFor = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5))
}
const charged = (keyText: string) => settledFor(keyText).reduce((a, r) => a + r.charged, 0n)

/** The worst case the gateway reserves for a chat request (the adapter's own reading of it). */
const worstOfChat = (body: unknown) => {
  const info = Either.getOrThrow(Wire.readRequest("openai.chat", new TextEncoder().encode(JSON.stringify(body))))
  return Either.getOrThrow(Wire.priceOf("openai", info.model, { inputTokens: info.inputTokensEstimate, outputTokens: info.maxOutputTokens ?? 4096, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: true }, new Date(0)))
}

beforeAll(async () => {
  fake = await startFake()
  evil = await startFake()
  rt = ManagedRuntime.make(Layer.merge(gatewayStores(join(dir, "gw.db")), RandomBytes.live))
  const runtime = await rt.runtime()
  gw = await startGateway({
    upstreams: { openai: fake.url, anthropic: fake.url },
    upstreamKeys: { openai: "sk-upstream", anthropic: "sk-ant-upstream" },
    lookup: (hash) => Effect.succeed(
      hash === sha256Hex("revoked-key") ? "revoked"
        : hash === sha256Hex("k-poor") ? { hash, mode: "enforce" as const, levels: [{ level: "key" as const, id: hash, budget: { limit: 1n } }] }
        : undefined
    ),
    defaultBudget: { limit: 1_000_000n },
    onCall: (r) => records.push(r),
    maxBodyBytes: 64 * 1024
  }, runtime, { port: 0 })
})
afterAll(async () => {
  await gw.close()
  await fake.close()
  await evil.close()
  await rt.dispose()
})

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 })
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 })

describe("gateway with the official clients", () => {
  it("chat completions, not streamed: answered, settled on usage, upstream key forwarded, gateway key not", async () => {
    const before = fake.calls.length
    const r = await openai("k-chat").chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 100 })
    expect(r.choices[0].message.content).toBe("hello")
    expect(fake.calls.length).toBe(before + 1)
    const call = fake.calls[fake.calls.length - 1]
    expect(call.headers.authorization).toBe("Bearer sk-upstream")
    expect(JSON.stringify(call.headers)).not.toContain("k-chat")
    await waitFor(() => settledFor("k-chat").length === 1)
    const rec = settledFor("k-chat")[0]
    const price = Either.getOrThrow(Wire.priceOf("openai", MODEL, { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false }, new Date(0)))
    expect(rec).toMatchObject({ decision: "allowed", settlement: "committed", charged: price, estimated: false, inputTokens: 10, outputTokens: 5 })
    expect(rec.reserved).toBeGreaterThan(price)
    expect(await used("k-chat")).toBe(price)
  })

  it("chat completions streamed: the gateway asks for usage and charges it", async () => {
    const s = await openai("k-chat-s").chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 100, stream: true })
    let text = ""
    for await (const c of s) text += c.choices[0]?.delta?.content ?? ""
    expect(text).toContain("word")
    expect(JSON.parse(fake.calls[fake.calls.length - 1].body).stream_options.include_usage).toBe(true)
    await waitFor(() => settledFor("k-chat-s").length === 1)
    expect(settledFor("k-chat-s")[0]).toMatchObject({ estimated: false, outputTokens: 5 })
    expect(await used("k-chat-s")).toBe(charged("k-chat-s"))
  })

  it("responses, streamed and not", async () => {
    const r = await openai("k-resp").responses.create({ model: MODEL, input: "hi", max_output_tokens: 50 })
    expect(r.output_text).toBe("hello")
    const s = await openai("k-resp").responses.create({ model: MODEL, input: "hi", max_output_tokens: 50, stream: true })
    let text = ""
    for await (const e of s) if (e.type === "response.output_text.delta") text += e.delta
    expect(text).toContain("word")
    await waitFor(() => settledFor("k-resp").length === 2)
    expect(settledFor("k-resp").every((x) => x.outputTokens === 5 && !x.estimated)).toBe(true)
    expect(await used("k-resp")).toBe(charged("k-resp"))
  })

  it("models is forwarded", async () => {
    const list = await openai("k-models").models.list()
    expect(list.data.map((m) => m.id)).toEqual(["gpt-4o-mini"])
  })

  it("anthropic messages, streamed and not, the key in x-api-key; the upstream gets the configured key", async () => {
    const m = await anthropic("k-ant").messages.create({ model: CLAUDE, max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
    expect(m.content[0]).toMatchObject({ type: "text", text: "hello" })
    expect(fake.calls[fake.calls.length - 1].headers["x-api-key"]).toBe("sk-ant-upstream")
    const s = anthropic("k-ant").messages.stream({ model: CLAUDE, max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
    const final = await s.finalMessage()
    expect(final.usage.output_tokens).toBe(5)
    await waitFor(() => settledFor("k-ant").length === 2)
    expect(settledFor("k-ant").every((x) => x.settlement === "committed" && x.outputTokens === 5)).toBe(true)
    expect(await used("k-ant")).toBe(charged("k-ant"))
  })

  it("refusal on budget: provider-shaped 402 with the reason code, no upstream call (both clients)", async () => {
    // A key whose budget (1 micro-USD) is below any call's worst case.
    const before = fake.calls.length
    const big = { model: MODEL, messages: [{ role: "user" as const, content: "hi" }], max_tokens: 100 }
    const e = await openai("k-poor").chat.completions.create(big).then(() => undefined, (x: unknown) => x)
    expect(e).toBeInstanceOf(OpenAI.APIError)
    expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(402)
    expect((e as InstanceType<typeof OpenAI.APIError>).code).toBe("gateway/budget_exhausted")
    const a = await anthropic("k-poor").messages.create({ model: CLAUDE, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).then(() => undefined, (x: unknown) => x)
    expect(a).toBeInstanceOf(Anthropic.APIError)
    expect((a as InstanceType<typeof Anthropic.APIError>).status).toBe(402)
    expect(JSON.stringify((a as InstanceType<typeof Anthropic.APIError>).error)).toContain("gateway/budget_exhausted")
    expect(fake.calls.length).toBe(before)
    expect(await used("k-poor")).toBe(0n)
  })
})

describe("gateway budgets under concurrency and real spend", () => {
  it("50 concurrent first requests of one new key, a budget that fits 10: at most 10 reach the upstream; spent = settlements", async () => {
    const body = { model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 100 }
    const worst = worstOfChat(body)
    const rt2 = await rt.runtime()
    const records2: Array<CallRecord> = []
    const g2 = await startGateway({
      upstreams: { openai: fake.url }, upstreamKeys: {}, lookup: () => Effect.succeed(undefined),
      defaultBudget: { limit: worst * 10n + worst / 2n }, onCall: (r) => records2.push(r)
    }, rt2, { port: 0 })
    const statuses: Array<number> = []
    const reached = await heldBurst(fake, 50, () =>
      fetch(`${g2.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer k-conc", "content-type": "application/json" }, body: JSON.stringify(body) })
        .then(async (r) => {
          statuses.push(r.status)
          await r.text()
        }))
    expect(reached).toBeLessThanOrEqual(10)
    expect(reached).toBeGreaterThan(0)
    expect(statuses.filter((s) => s === 402).length).toBe(50 - reached)
    await waitFor(() => records2.length === 50)
    const spent = records2.reduce((a, r) => a + r.charged, 0n)
    expect(await used("k-conc")).toBe(spent)
    await g2.close()
  })

  it("a stream longer than max_tokens suggests is charged in full, as overrun", async () => {
    fake.behaviour.chunks = 50
    fake.behaviour.outputTokens = 100_000
    try {
      const s = await openai("k-over").chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 10, stream: true })
      for await (const _ of s) void _
    } finally {
      fake.behaviour.chunks = 3
      fake.behaviour.outputTokens = 5
    }
    await waitFor(() => settledFor("k-over").length === 1)
    const rec = settledFor("k-over")[0]
    expect(rec.charged).toBeGreaterThan(rec.reserved)
    expect(await used("k-over")).toBe(rec.charged)
  })

  it("an upstream that never sends usage: charged on the estimate from the relayed text, marked estimated", async () => {
    fake.behaviour.usage = false
    try {
      const s = await openai("k-nousage").chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 100, stream: true })
      for await (const _ of s) void _
    } finally {
      fake.behaviour.usage = true
    }
    await waitFor(() => settledFor("k-nousage").length === 1)
    const rec = settledFor("k-nousage")[0]
    expect(rec).toMatchObject({ estimated: true, settlement: "committed" })
    expect(rec.outputTokens).toBeGreaterThan(0)
    expect(rec.charged).toBeGreaterThan(0n)
    expect(await used("k-nousage")).toBe(rec.charged)
  })

  it("an upstream failing after partial output: the partial output is billed (failed settlement)", async () => {
    fake.behaviour.chunks = 10
    fake.behaviour.failAfter = 4
    try {
      const s = await openai("k-fail").chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 100, stream: true })
      await (async () => {
        for await (const _ of s) void _
      })().catch(() => undefined)
    } finally {
      fake.behaviour.chunks = 3
      fake.behaviour.failAfter = undefined
    }
    await waitFor(() => settledFor("k-fail").length === 1)
    const rec = settledFor("k-fail")[0]
    expect(rec).toMatchObject({ settlement: "failed", estimated: true })
    expect(rec.charged).toBeGreaterThan(0n)
    expect(await used("k-fail")).toBe(rec.charged)
  })

  it("a client leaving mid-stream is charged for what was relayed", async () => {
    fake.behaviour.chunks = 40
    try {
      const ac = new AbortController()
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST", signal: ac.signal, headers: { authorization: "Bearer k-leave", "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 1000, stream: true })
      })
      const reader = r.body!.getReader()
      await reader.read()
      ac.abort()
    } finally {
      fake.behaviour.chunks = 3
    }
    await waitFor(() => settledFor("k-leave").length === 1)
    const rec = settledFor("k-leave")[0]
    expect(rec.settlement).toBe("committed")
    expect(rec.charged).toBeGreaterThan(0n)
    expect(rec.charged).toBeLessThan(rec.reserved)
    expect(await used("k-leave")).toBe(rec.charged)
  })
})

describe("gateway bad input: a clear error, no upstream call", () => {
  const post = (path: string, headers: Record<string, string>, body: string) =>
    fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })
  const ok = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 10 })
  const cases: Array<[string, () => Promise<Response>, number, string]> = [
    ["malformed JSON", () => post("/v1/chat/completions", { authorization: "Bearer k-bad" }, "{nope"), 400, "gateway/malformed_request"],
    ["no model", () => post("/v1/chat/completions", { authorization: "Bearer k-bad" }, "{}"), 400, "gateway/malformed_request"],
    ["huge body", () => post("/v1/chat/completions", { authorization: "Bearer k-bad" }, "x".repeat(65 * 1024)), 413, "gateway/body_too_large"],
    ["unknown model", () => post("/v1/chat/completions", { authorization: "Bearer k-bad" }, JSON.stringify({ model: "no-such-model-xyz", messages: [] })), 403, "gateway/no_price"],
    ["missing key", () => post("/v1/chat/completions", {}, ok), 401, "gateway/key_missing"],
    ["revoked key", () => post("/v1/chat/completions", { authorization: "Bearer revoked-key" }, ok), 401, "gateway/key_revoked"],
    ["unknown route", () => post("/v1/../admin", { authorization: "Bearer k-bad" }, ok), 404, "gateway/not_found"]
  ]
  for (const [name, send, status, code] of cases) {
    it(name, async () => {
      const before = fake.calls.length
      const r = await send()
      expect(r.status).toBe(status)
      const j = await r.json() as { error: { code: string } }
      expect(j.error.code).toBe(code)
      expect(fake.calls.length).toBe(before)
    })
  }

  it("headers cannot choose another upstream host", async () => {
    const before = fake.calls.length
    const u = new URL(evil.url)
    const r = await post("/v1/chat/completions", {
      authorization: "Bearer k-host", "x-forwarded-host": u.host, "x-forwarded-proto": "http", "x-forwarded-for": "1.2.3.4", forwarded: `host=${u.host}`, "x-original-url": `${evil.url}/v1/chat/completions`, "x-upstream": evil.url
    }, ok)
    expect(r.status).toBe(200)
    await r.text()
    expect(evil.calls.length).toBe(0)
    expect(fake.calls.length).toBe(before + 1)
    const h = fake.calls[fake.calls.length - 1].headers
    expect(h.host).toBe(new URL(fake.url).host)
    expect(Object.keys(h).filter((k) => k.startsWith("x-forwarded") || k === "forwarded" || k === "x-upstream")).toEqual([])
  })
})


describe("every call is a ledger action (seed 003)", () => {
  it("the ledger's settled sum equals each key's spent amount to the micro-dollar, across every spend case above", async () => {
    const lines = await rt.runPromise(Effect.flatMap(LedgerStore, (s) => Stream.runCollect(s.lines)))
    const events = [...lines].map((l) => JSON.parse(l) as Record<string, any>)
    const keys = ["k-chat", "k-chat-s", "k-resp", "k-ant", "k-conc", "k-over", "k-nousage", "k-fail", "k-leave"]
    for (const k of keys) {
      const run = runOf({ keyId: sha256Hex(k) })
      const settled = events.filter((e) => e.type === "settlement" && e.run_id === run)
      const actions = events.filter((e) => e.type === "action" && e.run_id === run)
      // One action line per call the key made, one settlement per call that reserved.
      // (k-conc's 50 calls went through a second gateway on the same store, recorded apart.)
      expect(actions.length, k).toBe(k === "k-conc" ? 50 : records.filter((r) => r.keyHash === sha256Hex(k) && r.route !== "openai.models").length)
      if (k !== "k-conc") expect(settled.length, k).toBe(settledFor(k).filter((r) => r.settlement !== "none").length)
      const nanos = settled.reduce((a, e) => a + toNanos(e.kept_usd), 0n)
      expect(nanos % 1000n, k).toBe(0n)
      expect(nanos / 1000n, k).toBe(await used(k))
      expect(actions.every((e) => e.action.kind === "llm_call" && e.action.metadata.model !== undefined), k).toBe(true)
    }
    // The estimated cases say so on their settlement line; the overrun is recorded as the ledger does.
    const of = (k: string) => events.filter((e) => e.type === "settlement" && e.run_id === runOf({ keyId: sha256Hex(k) }))
    expect(of("k-nousage")[0]).toMatchObject({ state: "committed", estimated: true })
    expect(of("k-fail")[0]).toMatchObject({ state: "failed", reason: "failure_settled", estimated: true })
    // Past its reservation (not past its $1 budget): charged in full, what it really cost.
    const overRun = runOf({ keyId: sha256Hex("k-over") })
    const drawn = events.find((e) => e.type === "reservation" && e.run_id === overRun)!.draws[0].amount as string
    expect(of("k-over")[0]).toMatchObject({ state: "committed", reason: "committed" })
    expect(toNanos(of("k-over")[0].kept_usd)).toBeGreaterThan(BigInt(drawn))
    expect(of("k-chat")[0].estimated).toBeUndefined()
    // A refusal is a recorded decision too: the key whose budget was spent.
    const poor = events.filter((e) => e.type === "decision" && e.run_id === runOf({ keyId: sha256Hex("k-poor") }))
    expect(poor.length).toBeGreaterThan(0)
    expect(poor.every((e) => e.decision.allowed === false && e.decision.reason === "usd_budget_exhausted")).toBe(true)
  })
})
