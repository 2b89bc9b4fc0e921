// `mandate yea mcp --listen` (docs/mcp-gate.md, "Serving remote clients"): the bridge as a real
// process in front of the example shop (itself a process on yea://), served over Streamable HTTP
// by the listener `writ mcp-gate` uses, and the official SDK client: it lists the tools and calls
// one within the grant; no key or a wrong one is refused (401, the protected resource metadata
// discoverable); a body over the cap is 413; off loopback without --keys, and --listen with
// --http, refuse to start.
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { runMandate } from "../support/cli.js"
import { BEARER, httpClient, keysFile, refusals, startListening } from "../support/remote-mcp.js"
import { keyFileOf, principalKey, principalSeed, text } from "./harness.js"

const agentSeed = new Uint8Array(32).fill(2)
const T = { timeout: 180_000 }
const principal = Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([9])))
const grant: string = Effect.runSync(
  issueRootGrant({ sub: keyFromSeed(agentSeed), caveats: [{ svc: ["shop.example"] }, { each: { of: "spend", max: 2000, scale: 2, unit: "USD" } }, { exp: 4102444800 }] }).pipe(Effect.provide(principal))
)
/** The bridge keeps pending proposals and consents in the YEA home: a temp one per bridge. */
const home = () => ({ ...getDefaultEnvironment(), MANDATE_HOME: mkdtempSync(join(tmpdir(), "yea-bridge-remote-")) })

const bridgeArgs = (shop: string, listen: ReadonlyArray<string>) =>
  ["yea", "mcp", shop, "--agent-key", keyFileOf(agentSeed), "--grant", grant, ...listen]

describe("mandate yea mcp --listen", () => {
  it.live("the SDK client over HTTP lists the bridge's tools and calls one within the grant; refusals", () =>
    Effect.gen(function*() {
      const shop = yield* startListening(["yea", "serve", "shop", "--port", "0", "--trust", principalKey], {}, /serving \S+ at (\S+)/)
      const bridge = yield* startListening(bridgeArgs(shop.url, ["--listen", "127.0.0.1:0", "--keys", keysFile()]), home())
      const { client } = yield* httpClient(bridge.url, BEARER)
      const tools = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name).sort()
      expect(tools).toEqual(["shop_order", "shop_search", "yea_consent", "yea_expand", "yea_undo"])
      const order = (yield* Effect.promise(() =>
        client.callTool({ name: "shop_order", arguments: { items: [{ sku: "m01", qty: 1 }], deliver: "2030-01-02" } }, undefined, { timeout: 60_000 }))) as CallToolResult
      expect(text(order)).toMatch(/^✓ /)
      yield* refusals(bridge.url)
    }).pipe(Effect.scoped), T)

  it.live("off loopback without --keys, and --listen with --http, refuse to start (mandate/usage)", () =>
    Effect.gen(function*() {
      const open = yield* Effect.promise(() => runMandate(bridgeArgs("yea://127.0.0.1:1", ["--listen", "0.0.0.0:0"]), 60_000, "SIGKILL"))
      expect(open.status).not.toBe(0)
      expect(open.stderr).toMatch(/^error: mandate\/usage at --listen: refusing to listen on 0\.0\.0\.0 without authentication/m)
      const both = yield* Effect.promise(() => runMandate(bridgeArgs("yea://127.0.0.1:1", ["--listen", "127.0.0.1:0", "--http"]), 60_000, "SIGKILL"))
      expect(both.status).not.toBe(0)
      expect(both.stderr).toContain("give --http or --listen, not both")
    }), T)
})
