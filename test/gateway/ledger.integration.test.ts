// The gateway's calls in the decision ledger (seed 003): refusals by the key's checks recorded as
// decisions with their own reasons, shadow recording what enforce would have refused while the call
// runs, safe_telemetry holding no prompt, key or user id in the clear, and `mandate ledger replay`
// over a gateway run telling what a lower budget would have refused.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, ManagedRuntime, Stream } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { gatewayStores } from "../../src/app/gateway.js"
import type { Level } from "../../src/gateway/budget.js"
import { runOf } from "../../src/gateway/guarded-call.js"
import { sha256Hex } from "../../src/gateway/http.js"
import { type CallRecord, type Gateway, type GatewayServices, type KeyInfo, startGateway } from "../../src/gateway/server.js"
import { Wire } from "../../src/gateway/wire-adapter.js"
import { LedgerStore } from "../../src/ledger/writer.js"
import { readLedger } from "../../src/ledger/chain.js"
import { toNanos } from "../../src/ledger/usd.js"
import { showDec } from "../../src/console/decimal.js"
import { ledgerSpend } from "../../src/console/spend.js"
import { runCli } from "../support/cli.js"
import { type FakeUpstream, startFake } from "./fake-upstream.js"

const dir = mkdtempSync(join(tmpdir(), "gw-ledger-"))
const MODEL = "gpt-4o-mini"
const PROMPT = "PROMPT-TEXT-THAT-MUST-NOT-LEAK"
const BODY = { model: MODEL, messages: [{ role: "user" as const, content: PROMPT }], max_tokens: 100 }
const worst = Either.getOrThrow((() => {
  const info = Either.getOrThrow(Wire.readRequest("openai.chat", new TextEncoder().encode(JSON.stringify(BODY))))
  return Wire.priceOf("openai", MODEL, { inputTokens: info.inputTokensEstimate, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: true }, new Date(0))
})())

type Rt = ManagedRuntime.ManagedRuntime<GatewayServices | LedgerStore, unknown>
interface Running { readonly rt: Rt; readonly gw: Gateway; readonly records: Array<CallRecord> }

const keyLevel = (hash: string, limit: bigint): Level => ({ level: "key", id: hash, budget: { limit } })
/** Keys by their text: what the lookup answers for each. */
const KEYS: Record<string, (hash: string) => KeyInfo> = {
  "k-models": (hash) => ({ hash, mode: "enforce", levels: [keyLevel(hash, 10n ** 9n)], models: ["gpt-4o"] }),
  "k-ceiling": (hash) => ({ hash, mode: "enforce", levels: [keyLevel(hash, 10n ** 9n)], ceiling: 1n }),
  "k-poor": (hash) => ({ hash, mode: "enforce", levels: [keyLevel(hash, 1n)] }),
  "k-shadow": (hash) => ({ hash, mode: "shadow", levels: [keyLevel(hash, 1n)], models: ["gpt-4o"] }),
  "k-user": (hash) => ({ hash, mode: "enforce", levels: [keyLevel(hash, 10n ** 9n), { level: "user", id: "ann-private-user", budget: { limit: 10n ** 9n } }], user: "ann-private-user" })
}

let fake: FakeUpstream
const started: Array<Running> = []
const start = async (file: string, mode: "local_full" | "safe_telemetry"): Promise<Running> => {
  const rt: Rt = ManagedRuntime.make(gatewayStores(file, { ledgerMode: mode }))
  const records: Array<CallRecord> = []
  const gw = await startGateway({
    upstreams: { openai: fake.url }, upstreamKeys: {},
    lookup: (hash) => Effect.succeed(Object.entries(KEYS).find(([k]) => sha256Hex(k) === hash)?.[1](hash)),
    defaultBudget: { limit: 10n ** 9n },
    onCall: (r) => records.push(r)
  }, await rt.runtime(), { port: 0 })
  const r = { rt, gw, records }
  started.push(r)
  return r
}
const eventsOf = async (r: Running) =>
  [...await r.rt.runPromise(Effect.flatMap(LedgerStore, (s) => Stream.runCollect(s.lines)))].map((l) => JSON.parse(l) as Record<string, any>)
const call = (r: Running, key: string, body: object = BODY) =>
  new OpenAI({ apiKey: key, baseURL: `${r.gw.url}/v1`, maxRetries: 0 }).chat.completions.create(body as typeof BODY)
    .then(() => undefined, (e: InstanceType<typeof OpenAI.APIError>) => e)

beforeAll(async () => {
  fake = await startFake()
})
afterAll(async () => {
  for (const r of started) {
    await r.gw.close()
    await r.rt.dispose()
  }
  await fake.close()
})

describe("gateway calls in the ledger", () => {
  let main: Running
  beforeAll(async () => {
    main = await start(join(dir, "full.db"), "local_full")
  })

  it("each key check refuses with its own code and is recorded as a decision with its own reason; no upstream call", async () => {
    const cases: Array<[string, string, string]> = [
      ["k-models", "gateway/model_not_allowed", "model_not_allowed"],
      ["k-ceiling", "gateway/call_ceiling", "call_ceiling_exceeded"],
      ["k-poor", "gateway/budget_exhausted", "usd_budget_exhausted"],
      ["k-unpriced", "gateway/no_price", "price_unknown"]
    ]
    const before = fake.calls.length
    for (const [key, code] of cases) {
      const e = await call(main, key, key === "k-unpriced" ? { ...BODY, model: "no-such-model-anywhere" } : BODY)
      expect(e?.code, key).toBe(code)
    }
    expect(fake.calls.length).toBe(before)
    const events = await eventsOf(main)
    for (const [key, , reason] of cases) {
      const ds = events.filter((e) => e.type === "decision" && e.run_id === runOf({ keyId: sha256Hex(key) }))
      expect(ds.map((d) => [d.decision.allowed, d.decision.recommended, d.decision.reason]), key).toEqual([[false, false, reason]])
      // Refused before any reservation: nothing is held or settled for it.
      expect(events.some((e) => (e.type === "reservation" || e.type === "settlement") && e.run_id === runOf({ keyId: sha256Hex(key) })), key).toBe(false)
    }
  })

  it("shadow: the call runs and is charged, and the ledger keeps what enforce would have refused (the first check that fails)", async () => {
    const before = fake.calls.length
    expect(await call(main, "k-shadow")).toBeUndefined()
    expect(fake.calls.length).toBe(before + 1)
    const events = await eventsOf(main)
    const run = runOf({ keyId: sha256Hex("k-shadow") })
    const d = events.find((e) => e.type === "decision" && e.run_id === run)!
    expect(d.decision).toMatchObject({ mode: "shadow", allowed: true, recommended: false, reason: "model_not_allowed" })
    expect(events.find((e) => e.type === "settlement" && e.run_id === run)).toMatchObject({ state: "committed" })
  })

  it("mandate ledger replay over the gateway's run: a budget below one call's worst case would have refused every call that ran", async () => {
    const runs = 3
    for (let i = 0; i < runs; i++) expect(await call(main, "k-replay")).toBeUndefined()
    const low = join(dir, "low.json")
    // Per key (each key's run replays in its own namespace): less than one call's worst case.
    writeFileSync(low, JSON.stringify({ version: 1, policies: [{ type: "usd_budget", usd: (Number(worst - 1n) / 1e6).toFixed(6) }] }))
    const r = await runCli(["ledger", "replay", join(dir, "full.db"), "--policy", low])
    expect(r.status, r.stderr).toBe(0)
    // The k-replay calls; the shadow call was recorded as not recommended already, so it is unchanged.
    expect(r.stdout).toContain(`would deny ${runs} that ran`)
    const high = join(dir, "high.json")
    writeFileSync(high, JSON.stringify({ version: 1, policies: [{ type: "usd_budget", usd: "1000" }] }))
    const h = await runCli(["ledger", "replay", join(dir, "full.db"), "--policy", high])
    expect(h.status, h.stderr).toBe(0)
    expect(h.stdout).toContain("would deny 0 that ran")
    // The chain of the ledger the gateway wrote verifies.
    const v = await runCli(["ledger", "verify", join(dir, "full.db")])
    expect(v.status, v.stderr).toBe(0)
    expect(v.stdout).toMatch(/^ok: ledger default \(local_full\)/)
  })

  it("the console's spend view shows the gateway's spend per principal and per model, key, user and team, once per call", async () => {
    expect(await call(main, "k-user")).toBeUndefined()
    const entries = await main.rt.runPromise(Effect.flatMap(LedgerStore, (s) => ledgerSpend(readLedger(s.lines))))
    const events = await eventsOf(main)
    const gatewayUsd = entries.filter((e) => e.protocol === "gateway" && e.unit === "USD")
    // As many entries as charged settlements, and the same sum, to the nano-dollar.
    const charged = events.filter((e) => e.type === "settlement" && toNanos(e.kept_usd) > 0n)
    expect(gatewayUsd.length).toBe(charged.length)
    const sum = (xs: ReadonlyArray<bigint>) => xs.reduce((a, b) => a + b, 0n)
    expect(sum(gatewayUsd.map((e) => toNanos(showDec(e.amount))))).toBe(sum(charged.map((e) => toNanos(e.kept_usd))))
    const ann = gatewayUsd.filter((e) => e.principal === "ann-private-user")
    expect(ann.length).toBe(1)
    expect(ann[0]!.budget).toBe(`model ${MODEL} · key ${sha256Hex("k-user")} · user ann-private-user`)
  })
})

describe("a safe_telemetry gateway ledger", () => {
  it("holds no prompt, no key (nor its hash), no user id and no model name in the clear", async () => {
    const file = join(dir, "safe.db")
    const safe = await start(file, "safe_telemetry")
    expect(await call(safe, "k-user")).toBeUndefined()
    expect((await call(safe, "k-models"))?.code).toBe("gateway/model_not_allowed")
    const events = await eventsOf(safe)
    expect(events[0]).toMatchObject({ type: "ledger", mode: "safe_telemetry" })
    expect(events.filter((e) => e.type === "action").length).toBe(2)
    const text = JSON.stringify(events)
    for (const secret of [PROMPT, "k-user", sha256Hex("k-user"), sha256Hex("k-models"), "ann-private-user", MODEL]) {
      expect(text, secret).not.toContain(secret)
    }
    // Its key is beside the store, not in it; the stored lines are what was checked.
    expect(readFileSync(`${file}.key`).length).toBeGreaterThan(0)
  })
})
