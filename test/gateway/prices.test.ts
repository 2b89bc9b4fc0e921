// The user price file: its entries override @pydantic/genai-prices and add models it does not know
// (a model only the file prices is served and charged at the file's price); a bad file stops
// `mandate gateway` with gateway/bad_price_file before it serves.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Reservations } from "../../src/accounting/reservations.js"
import { gatewayStores } from "../../src/app/gateway.js"
import { spentNow } from "../../src/gateway/keys.js"
import { sha256Hex } from "../../src/gateway/http.js"
import { decodePriceFile, withPriceFile } from "../../src/gateway/prices.js"
import { type Gateway, type GatewayServices, startGateway } from "../../src/gateway/server.js"
import { Wire } from "../../src/gateway/wire-adapter.js"
import { RandomBytes } from "../../src/kernel/index.js"
import { est } from "../../src/yea/lens/estimate.js"
import { runCli } from "../support/cli.js"
import { type FakeUpstream, startFake } from "./fake-upstream.js"

const dir = mkdtempSync(join(tmpdir(), "gwprices-"))
const u = (i: number, o: number, cached = 0) => ({ inputTokens: i, outputTokens: o, cacheReadTokens: cached, cacheWriteTokens: 0, estimated: false })
const file = Either.getOrThrow(decodePriceFile(JSON.stringify({
  models: [
    { provider: "openai", model: "gpt-4o-mini", input: 100, output: 200, cached_input: 10 },
    { provider: "openai", model: "house-model", input: 1, output: 2 }
  ]
})))
const priceOf = withPriceFile(file)
const at = new Date()

describe("price file", () => {
  it("overrides a known model, adds an unknown one, leaves the others", () => {
    expect(priceOf("openai", "gpt-4o-mini", u(1000, 10, 500), at)).toEqual(Either.right(100n * 500n + 10n * 500n + 200n * 10n))
    expect(priceOf("openai", "house-model", u(10, 5), at)).toEqual(Either.right(20n))
    expect(Either.isLeft(Wire.priceOf("openai", "house-model", u(10, 5), at))).toBe(true)
    expect(priceOf("openai", "gpt-4o", u(10, 5), at)).toEqual(Wire.priceOf("openai", "gpt-4o", u(10, 5), at))
    expect(priceOf("anthropic", "house-model", u(10, 5), at)._tag).toBe("Left")
  })

  it("input tokens are YEA's shared regex estimate of the request's text as JSON", () => {
    const messages = [{ role: "user", content: "Count these words, 123456 and all!" }]
    const info = Either.getOrThrow(Wire.readRequest("openai.chat", new TextEncoder().encode(JSON.stringify({ model: "m", messages }))))
    expect(info.inputTokensEstimate).toBe(est(JSON.stringify([messages, null, null, null, null])))
    expect(info.inputTokensEstimate).not.toBe(Math.ceil(JSON.stringify([messages, null, null, null, null]).length / 4))
  })

  for (const [name, text, says] of [
    ["not JSON", "{nope", "JSON"],
    ["a negative price", JSON.stringify({ models: [{ provider: "openai", model: "m", input: -1, output: 1 }] }), "input"],
    ["an unknown provider", JSON.stringify({ models: [{ provider: "acme", model: "m", input: 1, output: 1 }] }), "provider"]
  ] as const) {
    it(`a bad file (${name}) stops the gateway with gateway/bad_price_file`, async () => {
      expect(Either.isLeft(decodePriceFile(text))).toBe(true)
      const path = join(dir, `${name.replace(/ /g, "-")}.json`)
      writeFileSync(path, text)
      const r = await runCli(["gateway", "--upstream", "http://127.0.0.1:9", "--port", "0", "--store", join(dir, "bad.db"), "--prices", path])
      expect(r.status).toBe(1)
      expect(r.stderr).toContain("gateway/bad_price_file")
      expect(r.stderr).toContain(says)
      expect(r.stdout).toBe("")
    })
  }
})

describe("the gateway with a price file", () => {
  let fake: FakeUpstream
  let gw: Gateway
  let rt: ManagedRuntime.ManagedRuntime<GatewayServices, unknown>
  beforeAll(async () => {
    fake = await startFake()
    rt = ManagedRuntime.make(Layer.merge(gatewayStores(join(dir, "gw.db")), RandomBytes.live))
    gw = await startGateway({ upstreams: { openai: fake.url }, upstreamKeys: {}, lookup: () => Effect.succeed(undefined), defaultBudget: { limit: 1_000_000n }, priceOf }, await rt.runtime(), { port: 0 })
  })
  afterAll(async () => {
    await gw.close()
    await fake.close()
    await rt.dispose()
  })

  it("a model only the file prices is served and charged at the file's price", async () => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: "Bearer k-house", "content-type": "application/json" },
      body: JSON.stringify({ model: "house-model", messages: [{ role: "user", content: "hi" }], max_tokens: 10 })
    })
    expect(r.status).toBe(200)
    await r.text()
    const used = () => rt.runPromise(spentNow("key", sha256Hex("k-house"), null, "UTC"))
    // The fake answers 10 tokens in, 5 out: 10 x 1 + 5 x 2 micro-USD.
    while ((await used()) !== 20n) await new Promise((res) => setTimeout(res, 5))
    expect(await used()).toBe(20n)
  })
})
