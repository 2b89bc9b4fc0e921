// Keys, users and teams from the gateway's store, through the official OpenAI client: a user budget
// shared by two keys and a team budget shared by two users hold under 50 concurrent first requests;
// rotation keeps spend and refuses the old secret; revocation, the model allow list and the per-call
// ceiling refuse with their own codes and no upstream call; the store never holds a secret.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { Reservations } from "../../src/accounting/reservations.js"
import { gatewayStores } from "../../src/app/gateway.js"
import { spentNow } from "../../src/gateway/keys.js"
import {
  createKey, GatewayKeyStore, type GatewayKeysError, listKeys, revokeKey, rotateKey, setTeam, setUser, storeLookup
} from "../../src/gateway/keys.js"
import { type CallRecord, type Gateway, type GatewayServices, startGateway } from "../../src/gateway/server.js"
import { Wire } from "../../src/gateway/wire-adapter.js"
import { RandomBytes } from "../../src/kernel/index.js"
import { type FakeUpstream, heldBurst, startFake } from "./fake-upstream.js"

const dir = mkdtempSync(join(tmpdir(), "gw-keys-"))
const file = join(dir, "gw.db")
const MODEL = "gpt-4o-mini"
const BODY = { model: MODEL, messages: [{ role: "user" as const, content: "hi" }], max_tokens: 100 }
let fake: FakeUpstream
let gw: Gateway
let rt: ManagedRuntime.ManagedRuntime<GatewayServices | GatewayKeyStore, unknown>
const records: Array<CallRecord> = []

const worst = Either.getOrThrow((() => {
  const info = Either.getOrThrow(Wire.readRequest("openai.chat", new TextEncoder().encode(JSON.stringify(BODY))))
  return Wire.priceOf("openai", MODEL, { inputTokens: info.inputTokensEstimate, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: true }, new Date(0))
})())

const run = <A, E>(eff: Effect.Effect<A, E, GatewayServices | GatewayKeyStore>) => rt.runPromise(eff)
const used = (level: "key" | "user" | "team", id: string) =>
  run(spentNow(level, id, null, "UTC"))
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 })
const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>)
const waitFor = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5))
}

beforeAll(async () => {
  fake = await startFake()
  rt = ManagedRuntime.make(Layer.merge(gatewayStores(file), RandomBytes.live))
  const runtime = await rt.runtime()
  const keys = await run(GatewayKeyStore)
  gw = await startGateway({
    upstreams: { openai: fake.url }, upstreamKeys: {}, lookup: storeLookup(keys), onCall: (r) => records.push(r)
  }, runtime, { port: 0 })
})
afterAll(async () => {
  await gw.close()
  await fake.close()
  await rt.dispose()
})

/** 50 concurrent first requests spread over `secrets`, answers held until all have arrived or been refused. */
const burst = async (secrets: ReadonlyArray<string>) => {
  const recordsBefore = records.length
  const statuses: Array<number> = []
  const reached = await heldBurst(fake, 50, (i) =>
    openai(secrets[i % secrets.length]!).chat.completions.create(BODY).then(
      () => statuses.push(200),
      (e: InstanceType<typeof OpenAI.APIError>) => {
        statuses.push(e.status ?? 0)
        expect(e.code).toBe("gateway/budget_exhausted")
      }
    ))
  await waitFor(() => records.length - recordsBefore === 50)
  const mine = records.slice(recordsBefore)
  return { reached, statuses, charged: mine.reduce((a, r) => a + r.charged, 0n) }
}

/** `secret`'s call is refused with `status` and `code`, and the upstream is not called. */
const refusedUnsent = async (secret: string, status: number, code: string, body: object = BODY) => {
  const before = fake.calls.length
  const e = await errorOf(openai(secret).chat.completions.create(body as typeof BODY))
  expect(e?.status).toBe(status)
  expect(e?.code).toBe(code)
  expect(fake.calls.length).toBe(before)
}

describe("gateway keys, users and teams", () => {
  it("a user budget shared by two keys: 50 concurrent first requests, a budget that fits 10, at most 10 reach the upstream", async () => {
    await run(setUser({ name: "ann", team_name: null, budget_micro: worst * 10n + worst / 2n, period: null }))
    const a = await run(createKey({ user: "ann" }))
    const b = await run(createKey({ user: "ann" }))
    const r = await burst([a.secret, b.secret])
    expect(r.reached).toBeLessThanOrEqual(10)
    expect(r.reached).toBeGreaterThan(0)
    expect(r.statuses.filter((s) => s === 402).length).toBe(50 - r.reached)
    expect(await used("user", "ann")).toBe(r.charged)
    expect((await used("key", a.id)) + (await used("key", b.id))).toBe(r.charged)
  })

  it("a team budget shared by two users (each with more than the team): the team's limit holds", async () => {
    await run(setTeam({ name: "eng", budget_micro: worst * 10n + worst / 2n, period: null }))
    await run(setUser({ name: "bo", team_name: "eng", budget_micro: worst * 100n, period: null }))
    await run(setUser({ name: "cy", team_name: "eng", budget_micro: worst * 100n, period: null }))
    const a = await run(createKey({ user: "bo" }))
    const b = await run(createKey({ user: "cy" }))
    const r = await burst([a.secret, b.secret])
    expect(r.reached).toBeLessThanOrEqual(10)
    expect(r.reached).toBeGreaterThan(0)
    expect(await used("team", "eng")).toBe(r.charged)
    expect((await used("user", "bo")) + (await used("user", "cy"))).toBe(r.charged)
  })

  it("another key of the same team cannot bypass the team's limit", async () => {
    // A team with less than one worst case left: a key of its own with a large budget, and a key
    // of a user of the team with a large user budget, are both refused.
    await run(setTeam({ name: "ops", budget_micro: worst - 1n, period: null }))
    await run(setUser({ name: "di", team_name: "ops", budget_micro: worst * 100n, period: null }))
    const viaUser = await run(createKey({ user: "di", budget: { limit: worst * 100n } }))
    const k = await run(createKey({ team: "ops", budget: { limit: worst * 100n } }))
    await refusedUnsent(viaUser.secret, 402, "gateway/budget_exhausted")
    await refusedUnsent(k.secret, 402, "gateway/budget_exhausted")
  })

  it("rotation: the new secret works and keeps the key's spend; the old one is refused as revoked", async () => {
    const k = await run(createKey({ budget: { limit: worst * 3n } }))
    await openai(k.secret).chat.completions.create(BODY)
    const spent = await used("key", k.id)
    expect(spent).toBeGreaterThan(0n)
    const r = await run(rotateKey(k.id))
    expect(r.id).toBe(k.id)
    expect(r.secret).not.toBe(k.secret)
    const old = await errorOf(openai(k.secret).chat.completions.create(BODY))
    expect(old?.status).toBe(401)
    expect(old?.code).toBe("gateway/key_revoked")
    await openai(r.secret).chat.completions.create(BODY)
    expect(await used("key", k.id)).toBeGreaterThan(spent)
  })

  it("revocation: 401 gateway/key_revoked, no upstream call; revoking again is not an error; a revoked key cannot be rotated", async () => {
    const k = await run(createKey({ budget: { limit: worst * 3n } }))
    await run(revokeKey(k.id))
    await run(revokeKey(k.id))
    await refusedUnsent(k.secret, 401, "gateway/key_revoked")
    const rot = await run(Effect.flip(rotateKey(k.id)))
    expect(rot).toMatchObject({ _tag: "GatewayKeysError", code: "gateway/key_revoked" })
  })

  it("a model not on the key's allow list: 403 gateway/model_not_allowed, no upstream call", async () => {
    const k = await run(createKey({ budget: { limit: worst * 3n }, models: ["gpt-4o"] }))
    await refusedUnsent(k.secret, 403, "gateway/model_not_allowed")
  })

  it("a worst case above the per-call ceiling: 402 gateway/call_ceiling, no upstream call; a smaller call passes", async () => {
    const k = await run(createKey({ budget: { limit: worst * 100n }, ceiling: worst - 1n }))
    await refusedUnsent(k.secret, 402, "gateway/call_ceiling")
    const before = fake.calls.length
    await openai(k.secret).chat.completions.create({ ...BODY, max_tokens: 10 })
    expect(fake.calls.length).toBe(before + 1)
  })

  it("a key in shadow mode is never refused but accounted", async () => {
    const k = await run(createKey({ budget: { limit: 1n }, mode: "shadow" }))
    await openai(k.secret).chat.completions.create(BODY)
    expect(await used("key", k.id)).toBeGreaterThan(1n)
  })

  it("administration refusals name their codes", async () => {
    const codes = await Promise.all([
      run(Effect.flip(createKey({}))),
      run(Effect.flip(createKey({ user: "nobody", budget: { limit: 1n } }))),
      run(Effect.flip(createKey({ team: "noteam", budget: { limit: 1n } }))),
      run(Effect.flip(createKey({ user: "bo", team: "other", budget: { limit: 1n } }))),
      run(Effect.flip(setUser({ name: "dee", team_name: "noteam", budget_micro: null, period: null }))),
      run(Effect.flip(rotateKey("gk-none"))),
      run(Effect.flip(revokeKey("gk-none")))
    ])
    expect(codes.map((e) => (e as GatewayKeysError).code)).toEqual([
      "gateway/no_budget", "gateway/user_not_found", "gateway/team_not_found", "gateway/team_conflict",
      "gateway/team_not_found", "gateway/key_not_found", "gateway/key_not_found"
    ])
  })

  it("the store and the list hold no secret", async () => {
    const k = await run(createKey({ name: "secret-check", budget: { limit: 5n } }))
    const listed = JSON.stringify(await run(listKeys()), (_, v) => (typeof v === "bigint" ? v.toString() : v))
    expect(listed).toContain(k.id)
    expect(listed).not.toContain(k.secret)
    expect(listed).not.toContain(k.secret.slice(10))
    await rt.dispose()
    const bytes = ["", "-wal"].map((s) => {
      try {
        return readFileSync(file + s).toString("latin1")
      } catch {
        return ""
      }
    }).join("")
    expect(bytes).toContain(k.id)
    expect(bytes).not.toContain(k.secret.slice(3))
    rt = ManagedRuntime.make(Layer.merge(gatewayStores(file), RandomBytes.live))
  })
})
