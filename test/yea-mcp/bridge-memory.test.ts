// The bridge's pending proposals and consents kept in `consents/` of the YEA home (SPEC-bridge
// "Start-up limits": consents stay in ~/.yea/consents): a bridge restarted between the proposal
// and the consent, or between the consent and the retried call, still commits exactly once; a
// tampered pending file is dropped, never acted on. In process: the example shop, the SDK's
// Client on an in-memory transport, a temp home.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileBridgeMemory } from "../../src/bind/mcp/bridge-memory.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { decodeConsentCode, issueConsentGrant } from "../../src/yea/consent.js"
import { shopService } from "../../src/examples/shop.js"
import { bridgeOver, grantOf, principalKey, principalSeed, runtimeOf, text } from "./inproc-bridge.js"

const principal = Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.live)
const dear = { items: [{ sku: "m01", qty: 6 }], deliver: "2030-01-02" }
const memoryAt = (dir: string) => fileBridgeMemory(dir).pipe(Effect.provide(Layer.merge(NodeContext.layer, RandomBytes.live)))

const consentFor = (result: { structuredContent?: unknown }) =>
  Effect.gen(function* () {
    const codes = (result.structuredContent as { codes: Array<{ code: string }> }).codes
    const decoded = decodeConsentCode(codes[0].code)
    if (decoded._tag === "Left") throw new Error(decoded.left.message)
    return yield* issueConsentGrant(decoded.right.consent, decoded.right.agent).pipe(Effect.provide(principal), Effect.orDie)
  })

describe("the bridge's memory in the YEA home", () => {
  it.scoped("restarted after the proposal: yea_consent finds it, the call commits once; restarted after the consent: the call still commits once", () =>
    Effect.gen(function* () {
      const dir = join(mkdtempSync(join(tmpdir(), "yea-bridge-")), "consents")
      const grant = yield* grantOf([{ svc: ["shop.example"] }, { each: { of: "spend", max: 2000, scale: 2, unit: "USD" } }])
      const shop = yield* runtimeOf(shopService([principalKey]))
      const start = () => Effect.flatMap(memoryAt(dir), (memory) => bridgeOver([shop], [grant], { memory }))

      const first = yield* start()
      const asked = yield* first.call("shop_order", dear)
      expect(text(asked)).toMatch(/^Nothing ran: the service needs the person's approval/)
      expect(readdirSync(join(dir, "pending")).length).toBe(1)
      const consent = yield* consentFor(asked)

      const second = yield* start()
      expect(text(yield* second.call("yea_consent", { token: consent }))).toMatch(/^saved a consent for proposal/)
      expect(readdirSync(dir).filter((n) => n !== "pending").length).toBe(1)

      const third = yield* start()
      expect(text(yield* third.call("shop_order", dear))).toMatch(/^✓ /)
      // Used once: the same call asks afresh, and no consent is left behind.
      expect(text(yield* third.call("shop_order", dear))).toMatch(/^Nothing ran/)
      expect(readdirSync(dir).filter((n) => n !== "pending")).toEqual([])
    }))

  it.scoped("a pending file whose proposal was changed is dropped: a consent for it is refused", () =>
    Effect.gen(function* () {
      const dir = join(mkdtempSync(join(tmpdir(), "yea-bridge-")), "consents")
      const grant = yield* grantOf([{ svc: ["shop.example"] }, { each: { of: "spend", max: 2000, scale: 2, unit: "USD" } }])
      const shop = yield* runtimeOf(shopService([principalKey]))
      const b = yield* Effect.flatMap(memoryAt(dir), (memory) => bridgeOver([shop], [grant], { memory }))
      const asked = yield* b.call("shop_order", dear)
      const consent = yield* consentFor(asked)
      const [file] = readdirSync(join(dir, "pending"))
      const path = join(dir, "pending", file)
      writeFileSync(path, readFileSync(path, "utf8").replace(/"summary":"/, '"summary":"FREE '))
      expect(text(yield* b.call("yea_consent", { token: consent }))).toBe("✗ refused: the consent is not for any pending proposal")
      expect(readdirSync(join(dir, "pending"))).toEqual([])
    }))
})
