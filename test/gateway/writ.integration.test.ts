// Writ-delegated budgets (issue 29): the official openai and @anthropic-ai/sdk clients, unmodified
// but for their `fetch` (writFetch), through the gateway acting as the Writ executor of the leaf
// writ. A `usd` total caps the spend (worst case reserved, actual settled), refusals are
// provider-shaped with the Writ reason code and never reach the fake upstream, and a signed tally
// comes back with `used.usd` the actual cost.
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Either, Layer, ManagedRuntime, Option, Stream } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { gatewayStores } from "../../src/app/gateway.js"
import { sha256Hex } from "../../src/gateway/http.js"
import { type Gateway, type GatewayServices, startGateway } from "../../src/gateway/server.js"
import { Wire } from "../../src/gateway/wire-adapter.js"
import { CALL_HEADER, makeWritExecutor, TALLY_HEADER, type WritExecutor } from "../../src/gateway/writ-budget.js"
import { writFetch } from "../../src/gateway/writ-fetch.js"
import { decodeBase64url, encodeBase64url } from "../../src/kernel/base64url.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { publicKeyFromSeed } from "../../src/kernel/ed25519.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { LedgerStore } from "../../src/ledger/writer.js"
import { delegate, holdChain, issueRoot } from "../../src/writ/issue.js"
import { callIdentity } from "../../src/writ/sign.js"
import { verifyTallyObject } from "../../src/writ/tally.js"
import { Received } from "../../src/writ/verify.js"
import { runCli } from "../support/cli.js"
import { type FakeUpstream, heldBurst, startFake } from "./fake-upstream.js"
import { killAll, startGatewayProcess } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "gw-writ-"))
const MODEL = "gpt-4o-mini"
const CLAUDE = "claude-3-5-haiku-latest"
const seed = (n: number) => new Uint8Array(32).fill(n)
const didOf = (s: Uint8Array) => didKeyFromPublicKey(publicKeyFromSeed(s))
const A = seed(1), B = seed(2), C = seed(3), G = seed(9), STRANGER = seed(7)
const revokedWrits = new Set<string>()

let fake: FakeUpstream
let gw: Gateway
let exec: WritExecutor
let rt: ManagedRuntime.ManagedRuntime<GatewayServices | LedgerStore, unknown>

const nowS = () => Math.floor(Effect.runSync(Clock.currentTimeMillis) / 1000)
const as = <X>(s: Uint8Array, eff: Effect.Effect<X, unknown, Signer | RandomBytes>) =>
  Effect.runPromise(Effect.provide(eff, Layer.merge(Signer.fromSeed(s), RandomBytes.live)))
/** A root writ from A to `hld` for the model routes with a `usd` total, plus `bnd`. */
const rootTo = (hld: string, usd: bigint, bnd: Record<string, unknown> = {}, exp = nowS() + 3600) =>
  as(A, issueRoot({ hld, exp, bnd: { act: { t: "prefix", v: "llm" }, usd: { t: "total", v: Number(usd) }, ...bnd } as never }))

const priced = (provider: "openai" | "anthropic", model: string, input: number, output: number) =>
  Either.getOrThrow(Wire.priceOf(provider, model, { inputTokens: input, outputTokens: output, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: input !== 10 || output !== 5 }, new Date(0)))
const chatBody = { model: MODEL, messages: [{ role: "user" as const, content: "hi" }], max_tokens: 100 }
/** The worst case the gateway reserves for `chatBody` and the actual cost of the fake's answer (10 in, 5 out). */
const WORST = (() => {
  const info = Either.getOrThrow(Wire.readRequest("openai.chat", new TextEncoder().encode(JSON.stringify(chatBody))))
  return priced("openai", MODEL, info.inputTokensEstimate, 100)
})()
const ACTUAL = priced("openai", MODEL, 10, 5)

const openaiWith = (f: typeof fetch, apiKey = "unused") => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: f })
const chat = (client: OpenAI) => client.chat.completions.create(chatBody)
/** The provider-shaped error a refused call raises in the SDK: status and error.code. */
const refusal = async (p: Promise<unknown>) => {
  const e = await p.then(() => undefined, (x: unknown) => x)
  expect(e).toBeInstanceOf(OpenAI.APIError)
  const err = e as InstanceType<typeof OpenAI.APIError>
  return { status: err.status, code: err.code }
}
const upstreamCalls = () => fake.calls.length
const ledgerLines = async () =>
  [...await rt.runPromise(Effect.flatMap(LedgerStore, (s) => Stream.runCollect(s.lines)))].map((l) => JSON.parse(l) as Record<string, any>)

beforeAll(async () => {
  fake = await startFake()
  rt = ManagedRuntime.make(Layer.merge(gatewayStores(join(dir, "gw.db")), RandomBytes.live))
  const runtime = await rt.runtime()
  exec = makeWritExecutor({ seed: G, roots: [didOf(A)], revoked: (writs) => Effect.succeed(writs.some((w) => revokedWrits.has(w))) })
  gw = await startGateway({
    upstreams: { openai: fake.url, anthropic: fake.url },
    upstreamKeys: { openai: "sk-upstream", anthropic: "sk-ant-upstream" },
    lookup: (hash) => Effect.succeed(
      hash === sha256Hex("k-poor") ? { hash, mode: "enforce" as const, levels: [{ level: "key" as const, id: hash, budget: { limit: 1n } }] } : undefined
    ),
    defaultBudget: { limit: 1_000_000_000n },
    writ: exec
  }, runtime, { port: 0 })
})
afterAll(async () => {
  await gw.close()
  await fake.close()
  await rt.dispose()
})

describe("Writ-delegated budgets", () => {
  it("openai: calls pass until the usd total, then total_exhausted with no upstream call; worst case reserved, actual settled", async () => {
    expect(WORST).toBeGreaterThan(2n * ACTUAL)
    // Fits three calls only because each settles to its actual cost: one worst case and two actuals.
    const root = await rootTo(didOf(B), WORST + 2n * ACTUAL)
    const client = openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did }))
    for (let i = 0; i < 3; i++) expect((await chat(client)).choices[0].message.content).toBe("hello")
    const before = upstreamCalls()
    expect(await refusal(chat(client))).toEqual({ status: 402, code: "total_exhausted" })
    expect(upstreamCalls()).toBe(before)
    // The gateway key is not what was charged: the writ stood alone (no Authorization was sent).
    expect(fake.calls.at(-1)!.headers.authorization).toBe("Bearer sk-upstream")
  })

  it("anthropic: the same total binds the Messages API", async () => {
    const body = { model: CLAUDE, max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] }
    const info = Either.getOrThrow(Wire.readRequest("anthropic.messages", new TextEncoder().encode(JSON.stringify(body))))
    const worst = priced("anthropic", CLAUDE, info.inputTokensEstimate, 100)
    const actual = priced("anthropic", CLAUDE, 10, 5)
    const root = await rootTo(didOf(B), worst + actual)
    const client = new Anthropic({ apiKey: "unused", baseURL: gw.url, maxRetries: 0, fetch: writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did }) })
    for (let i = 0; i < 2; i++) expect((await client.messages.create(body)).content[0]).toMatchObject({ type: "text" })
    const before = upstreamCalls()
    const e = await client.messages.create(body).then(() => undefined, (x: unknown) => x)
    expect(e).toBeInstanceOf(Anthropic.APIError)
    expect((e as InstanceType<typeof Anthropic.APIError>).status).toBe(402)
    expect(JSON.stringify((e as InstanceType<typeof Anthropic.APIError>).error)).toContain("total_exhausted")
    expect(upstreamCalls()).toBe(before)
  })

  it("concurrency: 20 concurrent first calls under one writ whose total fits 4: at most 4 reach the upstream", async () => {
    const root = await rootTo(didOf(B), 4n * WORST + WORST / 2n)
    const client = openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did }))
    const reached = await heldBurst(fake, 20, () => chat(client).catch(() => undefined))
    expect(reached).toBe(4)
  })

  it("the tally verifies under the gateway's key and its used.usd is the actual cost", async () => {
    const root = await rootTo(didOf(B), 10n * WORST)
    let sent: string | undefined
    const spy: typeof fetch = (input, init) => {
      sent = new Headers(init?.headers).get(CALL_HEADER) ?? undefined
      return fetch(input, init)
    }
    const { data, response } = await openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did, fetch: spy })).chat.completions.create(chatBody).withResponse()
    expect(data.choices[0].message.content).toBe("hello")
    const bytes = Option.getOrThrow(decodeBase64url(response.headers.get(TALLY_HEADER)!))
    const tally = await Effect.runPromise(verifyTallyObject(new Received(bytes), exec.did))
    const call = JSON.parse(new TextDecoder().decode(Option.getOrThrow(decodeBase64url(sent!))))
    expect(tally.value).toMatchObject({ st: "ok", err: null, op: "llm/openai.chat", call: callIdentity(call), used: { usd: Number(ACTUAL) } })
  })

  it("a streamed call: the tally comes as an HTTP trailer after the stream, used.usd the stream's reported cost", async () => {
    const root = await rootTo(didOf(B), 10n * WORST)
    const body = JSON.stringify({ ...chatBody, stream: true })
    // The signed header writFetch would send, captured; the request itself over node:http, which reads trailers.
    let header = ""
    const capture: typeof fetch = async (_input, init) => {
      header = new Headers(init?.headers).get(CALL_HEADER)!
      return new Response("{}")
    }
    await writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did, fetch: capture })(`${gw.url}/v1/chat/completions`, { method: "POST", body })
    const { text, trailers } = await new Promise<{ text: string; trailers: NodeJS.Dict<string> }>((resolve, reject) => {
      const req = http.request(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", [CALL_HEADER]: header } }, (res) => {
        let t = ""
        res.on("data", (c: Buffer) => (t += c.toString()))
        res.on("end", () => resolve({ text: t, trailers: res.trailers }))
      })
      req.on("error", reject)
      req.end(body)
    })
    expect(text).toContain("data:")
    const tally = await Effect.runPromise(verifyTallyObject(new Received(Option.getOrThrow(decodeBase64url(trailers[TALLY_HEADER]!))), exec.did))
    expect(tally.value).toMatchObject({ st: "ok", used: { usd: Number(ACTUAL) } })
  })

  it("sub-delegation: a narrower child writ caps lower, and its spend draws on the parent's total", async () => {
    const root = await rootTo(didOf(B), WORST + 2n * ACTUAL + ACTUAL / 2n)
    const held = await as(B, holdChain(root.chainJson))
    const child = await as(B, delegate(held, { hld: didOf(C), bnd: { usd: { t: "total", v: Number(WORST + ACTUAL) } } }))
    const sub = openaiWith(writFetch({ chain: child.chainJson, holderKey: C, executor: exec.did }))
    await chat(sub)
    await chat(sub)
    const before = upstreamCalls()
    expect(await refusal(chat(sub))).toEqual({ status: 402, code: "total_exhausted" })
    expect(upstreamCalls()).toBe(before)
    // The root's total counted the child's two calls: its holder has room for one more call, not two
    // (without the child's spend it would have had two).
    const parent = openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did }))
    await chat(parent)
    expect(await refusal(chat(parent))).toEqual({ status: 402, code: "total_exhausted" })
    expect(upstreamCalls()).toBe(before + 1)
  })

  it("a count bound limits the number of calls: count_exhausted, no upstream call", async () => {
    const root = await rootTo(didOf(B), 10n * WORST, { uses: { t: "count", v: 1 } })
    const client = openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did }))
    await chat(client)
    const before = upstreamCalls()
    expect(await refusal(chat(client))).toEqual({ status: 402, code: "count_exhausted" })
    expect(upstreamCalls()).toBe(before)
  })

  it("a model allow list as a set bound on the model argument", async () => {
    const root = await rootTo(didOf(B), 10n * WORST, { model: { t: "set", v: ["gpt-4o"] } })
    const before = upstreamCalls()
    expect(await refusal(chat(openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did }))))).toEqual({ status: 403, code: "out_of_bounds" })
    expect(upstreamCalls()).toBe(before)
  })

  it("refused with no upstream call: wrong signature, bad chain, expired, revoked, unknown root, wrong holder, a replayed call", async () => {
    const good = await rootTo(didOf(B), 10n * WORST)
    const before = upstreamCalls()
    // Wrong signature: the signed call altered in transit (its usd argument).
    const tamper: typeof fetch = (input, init) => {
      const h = new Headers(init?.headers)
      const call = JSON.parse(new TextDecoder().decode(Option.getOrThrow(decodeBase64url(h.get(CALL_HEADER)!))))
      call.args.usd -= 1
      h.set(CALL_HEADER, encodeBase64url(new TextEncoder().encode(JSON.stringify(call))))
      return fetch(input, { ...init, headers: h })
    }
    expect((await refusal(chat(openaiWith(writFetch({ chain: good.chainJson, holderKey: B, executor: exec.did, fetch: tamper }))))).code).toBe("bad_signature")
    // Bad chain: a leaf whose parent is another root (prv mismatch).
    const other = await rootTo(didOf(B), 10n * WORST)
    const leafOfOther = await as(B, Effect.flatMap(holdChain(other.chainJson), (h) => delegate(h, { hld: exec.did })))
    expect((await refusal(chat(openaiWith(writFetch({ chain: [good.chainJson[0], leafOfOther.json], holderKey: B }))))).code).toBe("chain_broken")
    // Expired.
    const old = await rootTo(didOf(B), 10n * WORST, {}, nowS() - 1)
    expect(await refusal(chat(openaiWith(writFetch({ chain: old.chainJson, holderKey: B, executor: exec.did }))))).toEqual({ status: 403, code: "expired" })
    // Revoked (section 7 step 7, by the writ's identity).
    const gone = await rootTo(didOf(B), 10n * WORST)
    revokedWrits.add(gone.id)
    expect(await refusal(chat(openaiWith(writFetch({ chain: gone.chainJson, holderKey: B, executor: exec.did }))))).toEqual({ status: 403, code: "revoked" })
    // A root the gateway does not act under.
    const foreign = await as(STRANGER, issueRoot({ hld: didOf(B), exp: nowS() + 3600, bnd: { act: { t: "prefix", v: "llm" }, usd: { t: "total", v: 1_000_000 } } as never }))
    expect((await refusal(chat(openaiWith(writFetch({ chain: foreign.chainJson, holderKey: B, executor: exec.did }))))).code).toBe("root_not_accepted")
    // A Writ-Call header is no key for GET /v1/models, which is not a Writ operation.
    const models = await fetch(`${gw.url}/v1/models`, { headers: { [CALL_HEADER]: "anything" } })
    expect([models.status, (await models.json()).error.code]).toEqual([401, "gateway/key_missing"])
    // Signed by a key that is not the leaf's issuer.
    const leaf = await as(B, Effect.flatMap(holdChain(good.chainJson), (h) => delegate(h, { hld: exec.did })))
    expect((await refusal(chat(openaiWith(writFetch({ chain: leaf.chainJson, holderKey: C }))))).code).toBe("no_standing")
    expect(upstreamCalls()).toBe(before)
    // The same signed call twice: the second is refused (the (leaf, id) pair is spent), no upstream call.
    let header: string | undefined
    const replay: typeof fetch = (input, init) => {
      const h = new Headers(init?.headers)
      header ??= h.get(CALL_HEADER)!
      h.set(CALL_HEADER, header)
      return fetch(input, { ...init, headers: h })
    }
    const twice = openaiWith(writFetch({ chain: good.chainJson, holderKey: B, executor: exec.did, fetch: replay }))
    await chat(twice)
    const once = upstreamCalls()
    expect(await refusal(chat(twice))).toEqual({ status: 409, code: "gateway/writ_replayed" })
    expect(upstreamCalls()).toBe(once)
  })

  it("a call bound to another body is refused (the req digest), and a refused call gets a signed failed tally", async () => {
    const root = await rootTo(didOf(B), 10n * WORST)
    const swap: typeof fetch = (input, init) => fetch(input, { ...init, body: JSON.stringify({ ...chatBody, max_tokens: 99 }) })
    const before = upstreamCalls()
    const e = await chat(openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did, fetch: swap }))).then(() => undefined, (x: unknown) => x) as InstanceType<typeof OpenAI.APIError>
    expect(e.code).toBe("gateway/writ_mismatch")
    const tallyText = e.headers?.get(TALLY_HEADER)
    const tally = await Effect.runPromise(verifyTallyObject(new Received(Option.getOrThrow(decodeBase64url(tallyText!))), exec.did))
    expect(tally.value).toMatchObject({ st: "failed", err: { code: "gateway/writ_mismatch" }, used: {} })
    expect(upstreamCalls()).toBe(before)
  })

  it("a gateway key beside the writ must hold too (both levels)", async () => {
    const root = await rootTo(didOf(B), 10n * WORST)
    const before = upstreamCalls()
    const poor = openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did, keepKey: true }), "k-poor")
    expect(await refusal(chat(poor))).toEqual({ status: 402, code: "gateway/budget_exhausted" })
    expect(upstreamCalls()).toBe(before)
    const rich = openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did, keepKey: true }), "k-rich")
    expect((await chat(rich)).choices[0].message.content).toBe("hello")
    expect(upstreamCalls()).toBe(before + 1)
  })

  it("the ledger records the Writ decisions beside each call's action", async () => {
    const root = await rootTo(didOf(B), WORST)
    const client = openaiWith(writFetch({ chain: root.chainJson, holderKey: B, executor: exec.did }))
    await chat(client)
    await chat(client).catch(() => undefined)
    const lines = await ledgerLines()
    const writ = lines.filter((l) => l.type === "protocol" && l.decision.protocol === "writ" && l.decision.principal === didOf(B))
    expect(writ.some((l) => l.decision.kind === "consumed" && l.decision.amounts?.[0]?.name === "usd")).toBe(true)
    expect(writ.some((l) => l.decision.kind === "refused" && l.decision.reason === "total_exhausted")).toBe(true)
    // Each forwarded call is still a ledger action with its reservation, which holds the Writ draws.
    const reservations = lines.filter((l) => l.type === "reservation" && l.draws.some((d: { key: string }) => d.key.startsWith("gwrit/")))
    expect(reservations.length).toBeGreaterThan(0)
  })
})

describe("mandate gateway --writ-executor-key --writ-root", () => {
  afterAll(() => killAll())

  it("a gateway process acts as the Writ executor of its key: a writ's total binds, with or without --budget", async () => {
    const keyFile = join(dir, "gw-writ.key")
    writeFileSync(keyFile, `${Buffer.from(G).toString("hex")}\n`, { mode: 0o600 })
    const { url } = await startGatewayProcess(["--upstream", fake.url, "--port", "0", "--store", join(dir, "cli.db"), "--writ-executor-key", keyFile, "--writ-root", didOf(A)])
    const root = await rootTo(didOf(B), WORST + ACTUAL)
    const client = new OpenAI({ apiKey: "unused", baseURL: `${url}/v1`, maxRetries: 0, fetch: writFetch({ chain: root.chainJson, holderKey: B, executor: didOf(G) }) })
    await chat(client)
    await chat(client)
    const before = upstreamCalls()
    expect(await refusal(chat(client))).toEqual({ status: 402, code: "total_exhausted" })
    expect(upstreamCalls()).toBe(before)
    // Without a writ and without --budget, a request is still a key's, and an unknown key is refused.
    expect(await refusal(chat(new OpenAI({ apiKey: "k-none", baseURL: `${url}/v1`, maxRetries: 0 })))).toEqual({ status: 401, code: "gateway/key_unknown" })
  })

  it("a revoke recorded in the store by `mandate gateway writ-revoke` binds the running gateway: the writ and those below it refused revoked, no upstream call; a bad revoke is refused and not recorded", async () => {
    const store = join(dir, "revoke.db")
    const keyFile = join(dir, "gw-revoke.key")
    writeFileSync(keyFile, `${Buffer.from(G).toString("hex")}\n`, { mode: 0o600 })
    const { url } = await startGatewayProcess(["--upstream", fake.url, "--port", "0", "--store", store, "--writ-executor-key", keyFile, "--writ-root", didOf(A)])
    const via = (chain: ReadonlyArray<JsonObject>, holder: Uint8Array) =>
      new OpenAI({ apiKey: "unused", baseURL: `${url}/v1`, maxRetries: 0, fetch: writFetch({ chain, holderKey: holder, executor: didOf(G) }) })
    const root = await rootTo(didOf(B), 10n * (WORST + ACTUAL))
    const child = await as(B, delegate(await as(B, holdChain(root.chainJson)), { hld: didOf(C), bnd: {} }))
    const other = await rootTo(didOf(B), 10n * (WORST + ACTUAL))
    await chat(via(child.chainJson, C))
    // A's revoke of the root writ, signed by the CLI.
    const aKey = join(dir, "a-revoker.key")
    writeFileSync(aKey, `${Buffer.from(A).toString("hex")}\n`, { mode: 0o600 })
    const chainFile = join(dir, "revoked.chain.json")
    writeFileSync(chainFile, JSON.stringify(root.chainJson))
    const revokeFile = join(dir, "root.revoke.json")
    expect((await runCli(["writ", "revoke", "--key", aKey, "--chain", chainFile, "--out", revokeFile])).status).toBe(0)
    // The same revoke claiming another issuer (its signature no longer holds, and that key issued no
    // writ of the chain, section 9.1): refused with its reason, nothing recorded.
    const strangerFile = join(dir, "stranger.revoke.json")
    writeFileSync(strangerFile, JSON.stringify({ ...JSON.parse(readFileSync(revokeFile, "utf8")), iss: didOf(STRANGER) }))
    const refused = await runCli(["gateway", "writ-revoke", "--store", store, strangerFile])
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toMatch(/^error: \S+ at /m)
    // Not JSON at all: a clear error too.
    const garbage = join(dir, "garbage.revoke.json")
    writeFileSync(garbage, "not json")
    const malformed = await runCli(["gateway", "writ-revoke", "--store", store, garbage])
    expect(malformed.status).not.toBe(0)
    expect(malformed.stderr).toMatch(/^error: \S+ at /m)
    await chat(via(child.chainJson, C))
    // Recorded by another process (this test's) in the store: the gateway's next calls read it.
    const recorded = await runCli(["gateway", "writ-revoke", "--store", store, revokeFile])
    expect(recorded.status).toBe(0)
    expect(recorded.stdout).toContain("and every writ below it")
    const before = upstreamCalls()
    expect(await refusal(chat(via(root.chainJson, B)))).toEqual({ status: 403, code: "revoked" })
    expect(await refusal(chat(via(child.chainJson, C)))).toEqual({ status: 403, code: "revoked" })
    expect(upstreamCalls()).toBe(before)
    // Another writ of the same issuer is untouched.
    await chat(via(other.chainJson, B))
    expect(upstreamCalls()).toBe(before + 1)
  })

  it("--writ-root needs --writ-executor-key, and the key needs a root", async () => {
    const store = join(dir, "usage.db")
    const noKey = await runCli(["gateway", "--upstream", fake.url, "--store", store, "--writ-root", didOf(A)])
    expect(noKey.status).not.toBe(0)
    expect(noKey.stderr).toContain("--writ-root needs --writ-executor-key")
    const keyFile = join(dir, "lonely.key")
    writeFileSync(keyFile, `${Buffer.from(G).toString("hex")}\n`, { mode: 0o600 })
    const noRoot = await runCli(["gateway", "--upstream", fake.url, "--store", store, "--writ-executor-key", keyFile])
    expect(noRoot.status).not.toBe(0)
    expect(noRoot.stderr).toContain("needs at least one --writ-root")
  })
})
