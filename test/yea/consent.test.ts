// Consent (SPEC §6.6): the consent request, its check against the shown proposal, consent grants
// with exactly the five scoping caveats, and consent codes.
import { Effect, Either } from "effect"
import { describe, expect, it } from "@effect/vitest"
import {
  checkConsentRequest,
  consentCaveats,
  consentRequestFor,
  decodeConsentCode,
  encodeConsentCode,
  issueConsentGrant
} from "../../src/yea/consent.js"
import { decodeGrant } from "../../src/yea/grant.js"
import { proposalHash, type Proposal } from "../../src/yea/proposal.js"
import { authorize } from "../../src/yea/authorize.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { NOW, PRINCIPAL, agentKey, check, issue, noTotals, principalKey, withSigner } from "./_helpers.js"

const base = {
  id: "p_9",
  capability: "shop.order",
  summary: "Order 2 pizzas",
  effects: [{ op: "create" as const, target: "order/9" }],
  uses: { spend: { amount: 4200, scale: 2, unit: "USD" } },
  risk: "high" as const,
  undo: null,
  expires: NOW + 600
}
const shown: Proposal = { ...base, hash: Either.getOrThrow(proposalHash(base)) }
const request = consentRequestFor(shown, "shop.example", principalKey)

describe("consent request (§6.6)", () => {
  it("is built from the proposal", () =>
    expect(request).toEqual({
      proposal: "p_9",
      hash: shown.hash,
      service: "shop.example",
      capability: "shop.order",
      principal: principalKey,
      summary: "Order 2 pizzas",
      expires: NOW + 600
    }))
  it("is accepted when it matches the shown proposal", () => expect(Either.isRight(checkConsentRequest(request, shown, "shop.example"))).toBe(true))
  for (const [name, patch] of [
    ["proposal", { proposal: "p_1" }],
    ["hash", { hash: "x" }],
    ["service", { service: "evil.example" }],
    ["capability", { capability: "shop.refund" }]
  ] as const) {
    it(`a mismatched ${name} is never shown for signing (conflict)`, () => {
      const r = checkConsentRequest({ ...request, ...patch }, shown, "shop.example")
      expect(Either.isLeft(r) && r.left.reason).toBe("conflict")
    })
  }
  it("the request must come from the service the proposal came from", () => {
    const r = checkConsentRequest(request, shown, "other.example")
    expect(Either.isLeft(r) && r.left.reason).toBe("conflict")
  })
  it("a shown proposal whose hash does not verify is refused", () => {
    const r = checkConsentRequest(request, { ...shown, summary: "Order 20 pizzas" }, "shop.example")
    expect(Either.isLeft(r) && r.left.reason).toBe("conflict")
  })
  it("a malformed request is refused", () => {
    const r = checkConsentRequest({ ...request, expires: "soon" }, shown, "shop.example")
    expect(Either.isLeft(r) && r.left.reason).toBe("bad_frame")
  })
})

describe("consent grant", () => {
  const token = withSigner(PRINCIPAL, issueConsentGrant(request, agentKey))
  const commitReq = (patch: Record<string, unknown> = {}) => ({
    service: "shop.example",
    verb: "COMMIT" as const,
    capability: "shop.order",
    proposal: { hash: shown.hash, risk: "high", uses: shown.uses },
    ...patch
  })
  it("has exactly the five scoping caveats, in order", () => {
    expect(Either.getOrThrow(decodeGrant(token)).root.caveats).toEqual([
      { svc: ["shop.example"] },
      { verbs: ["COMMIT"] },
      { can: ["shop.order"] },
      { only: shown.hash },
      { exp: NOW + 600 }
    ])
    expect(consentCaveats(request).length).toBe(5)
  })
  it("authorizes the COMMIT of that proposal, whatever its risk and uses", () => expect(check({ grants: [token], request: commitReq() }).code).toBe("ok"))
  it("authorizes nothing else", () => {
    expect(check({ grants: [token], request: commitReq({ proposal: { hash: "other", risk: "low" } }) }).code).toBe("forbidden")
    expect(check({ grants: [token], request: { service: "shop.example", verb: "UNDO", capability: "shop.order" } }).code).toBe("forbidden")
    expect(check({ grants: [token], request: { service: "shop.example", verb: "ASK", capability: "shop.order" } }).code).toBe("forbidden")
    expect(check({ grants: [token], request: commitReq({ service: "cal.example" }) }).code).toBe("forbidden")
    expect(check({ grants: [token], request: commitReq({ capability: "shop.refund" }) }).code).toBe("forbidden")
    expect(check({ grants: [token], request: commitReq(), now: NOW + 600 }).code).toBe("forbidden")
  })
  it.effect("consent_required carries the consent request for the principal", () =>
    Effect.gen(function* () {
      const limited = issue([{ risk: "low" }])
      const r = yield* Effect.either(
        authorize(
          {
            grants: [limited],
            proofKey: agentKey,
            trusted: [principalKey],
            request: commitReq(),
            consentFor: (principal) => consentRequestFor(shown, "shop.example", principal)
          },
          noTotals
        ).pipe(Effect.withClock(fixedClock(NOW)))
      )
      expect(Either.isLeft(r) && r.left.reason).toBe("consent_required")
      expect(Either.isLeft(r) && r.left.consent).toEqual(request)
      expect(Either.isLeft(r) && r.left.need).toEqual([{ risk: "low" }])
    }))
})

describe("consent codes (pc1.)", () => {
  it("round-trip, without the proposal's data", () => {
    const code = Either.getOrThrow(encodeConsentCode({ consent: request, detail: { ...shown, data: { n: 1.5 } }, agent: agentKey }))
    expect(code.startsWith("pc1.")).toBe(true)
    const back = Either.getOrThrow(decodeConsentCode(code))
    expect(back.consent).toEqual(request)
    expect(back.agent).toBe(agentKey)
    expect(back.detail).toEqual(shown)
  })
  it("refuse other prefixes and non-canonical encodings", () => {
    const code = Either.getOrThrow(encodeConsentCode({ consent: request, detail: shown, agent: agentKey }))
    expect(Either.isLeft(decodeConsentCode("pg1." + code.slice(4)))).toBe(true)
    expect(Either.isLeft(decodeConsentCode(code + "="))).toBe(true)
    expect(Either.isLeft(decodeConsentCode("pc1." + Buffer.from('{"agent": 1}').toString("base64url")))).toBe(true)
  })
})
