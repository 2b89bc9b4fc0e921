// The bridge on Streamable HTTP (SPEC-bridge beside stdio; the front end of serve.ts): the SDK's
// Client over HTTP on loopback reaches the same tools, a session per client over one bridge state
// (a proposal left pending by one session is committed by a consent handed in through another),
// and a request without the token is 401. In process: the example shop in memory.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { serveHttp } from "../../src/bind/mcp/serve.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { decodeConsentCode, issueConsentGrant } from "../../src/yea/consent.js"
import { shopService } from "../../src/examples/shop.js"
import { runCli } from "../support/cli.js"
import { bridgeOver, grantOf, principalKey, principalSeed, text } from "./inproc-bridge.js"

const TOKEN = "b".repeat(40)
const dear = { items: [{ sku: "m01", qty: 6 }], deliver: "2030-01-02" }

const session = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const c = new Client({ name: "t", version: "1" })
      await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }))
      return c
    }),
    (c) => Effect.promise(() => c.close())
  )
const call = (c: Client, name: string, args: Record<string, unknown>) => Effect.promise(() => c.callTool({ name, arguments: args }) as Promise<CallToolResult>)

describe("the bridge on Streamable HTTP", () => {
  it.scoped("two sessions share the bridge: tools, a proposal in one, its consent and commit in the other; no token is 401", () =>
    Effect.gen(function* () {
      const grant = yield* grantOf([{ svc: ["shop.example"] }, { each: { of: "spend", max: 2000, scale: 2, unit: "USD" } }])
      const b = yield* bridgeOver([shopService([principalKey])], [grant])
      const { url } = yield* serveHttp({ port: 0, token: TOKEN, sub: "bridge" }, b.built.newServer).pipe(Effect.provide(RandomBytes.live))
      const one = yield* session(url)
      expect((yield* Effect.promise(() => one.listTools())).tools.map((t) => t.name).sort()).toEqual(["shop_order", "shop_search", "yea_consent", "yea_expand", "yea_undo"])
      expect(text(yield* call(one, "shop_search", { tag: "vegan" }))).toMatch(/^items\[\d+\]/)
      const asked = yield* call(one, "shop_order", dear)
      const codes = (asked.structuredContent as { codes: Array<{ code: string }> }).codes
      const decoded = decodeConsentCode(codes[0].code)
      if (decoded._tag === "Left") throw new Error(decoded.left.message)
      const consent = yield* issueConsentGrant(decoded.right.consent, decoded.right.agent).pipe(Effect.provide(Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.live)), Effect.orDie)
      const two = yield* session(url)
      expect(text(yield* call(two, "yea_consent", { token: consent }))).toMatch(/^saved a consent/)
      expect(text(yield* call(two, "shop_order", dear))).toMatch(/^✓ /)
      const res = yield* Effect.promise(() => fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" }))
      expect(res.status).toBe(401)
    }))

  it("`mandate yea mcp --http` without a token of 32 characters or more is refused before connecting anything", async () => {
    const r = await runCli(["yea", "mcp", "yea://127.0.0.1:1", "--agent-seed", "A".repeat(43), "--http"], { env: { NO_COLOR: "1", YEA_HTTP_TOKEN: "short" } })
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/^error: mandate\/usage at mandate yea mcp: --http needs YEA_HTTP_TOKEN/m)
  })
})
