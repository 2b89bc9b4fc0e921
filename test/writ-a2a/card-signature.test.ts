// Agent Card signatures (A2A 1.0 section 8.4, src/bind/writ-a2a/card-signature.ts), both ways with
// the A2A JS SDK (`@a2a-js/sdk`, newest): the canonical form is the SDK's `canonicalizeAgentCard`
// byte for byte for every card this endpoint publishes; a card signed here verifies with the SDK's
// `verifyAgentCardSignature`, and one the SDK's `generateAgentCardSignature` signs with the same key
// verifies here; a card changed after signing, or signed by another key, is refused by both.
import { AgentCard as SdkAgentCard, canonicalizeAgentCard, generateAgentCardSignature, verifyAgentCardSignature } from "@a2a-js/sdk"
import { beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import fc from "fast-check"
import { canonicalCard, signCard, signedCardContent, verifyCard } from "../../src/bind/writ-a2a/card-signature.js"
import { agentCard } from "../../src/bind/writ-a2a/http.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { publicKeyFromDidKey } from "../../src/kernel/didkey.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Signer } from "../../src/kernel/services.js"
import { B, C, keyOf, seed } from "../writ/fixtures.js"

const card = (o: { readonly pushNotifications?: boolean; readonly bounds?: ReadonlyArray<string>; readonly name?: string } = {}) =>
  agentCard(keyOf(C), { url: "http://127.0.0.1:8070/a2a", ...o })
const signedBy = (n: number, c: JsonObject) => Effect.runSync(Effect.provideService(signCard(c), Signer, Signer.make(seed(n))))
const reason = (c: JsonObject) => {
  const r = Effect.runSync(Effect.either(verifyCard(c)))
  return Either.isLeft(r) ? r.left.reason : r.right._tag
}
/** The public key of a did:key as the JWK the SDK's verifier takes. */
const publicJwk = (did: string) => ({ kty: "OKP", crv: "Ed25519", x: encodeBase64url(Option.getOrThrow(publicKeyFromDidKey(did))) })
const sdkVerifier = verifyAgentCardSignature(async (kid) => publicJwk(kid))
const asSdk = (c: JsonObject) => SdkAgentCard.fromJSON(c)
const sdkAccepts = (c: JsonObject) => sdkVerifier(asSdk(c)).then(() => true, () => false)

describe("Agent Card signatures (A2A 1.0 section 8.4)", () => {
  // The SDK's verifier logs each signature it cannot verify; the refusals here are on purpose.
  beforeAll(() => void vi.spyOn(console, "debug").mockImplementation(() => undefined))
  it("canonicalizes every card this endpoint publishes as the A2A SDK does (fast-check, fixed seed)", () => {
    fc.assert(fc.property(
      fc.boolean(),
      fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }),
      fc.string({ maxLength: 12 }),
      (push, bounds, name) => {
        const c = card({ pushNotifications: push, bounds, ...(name === "" ? {} : { name }) })
        expect(canonicalCard(c)).toBe(canonicalizeAgentCard(asSdk(c)))
      }
    ), { seed: 31, numRuns: 60 })
  })

  it("leaves the unsigned 0.3 members and the signatures out of what is signed", () => {
    const content = signedCardContent(signedBy(C, card()))
    expect(Object.keys(content)).not.toContain("signatures")
    expect(Object.keys(content)).not.toContain("url")
    expect(Object.keys(content)).not.toContain("preferredTransport")
    // An extension's `required: false` is its proto default, so omitted; `pushNotifications: false` is set, so kept.
    expect(JSON.stringify(content)).not.toContain("\"required\"")
    expect((content.capabilities as JsonObject).pushNotifications).toBe(false)
  })

  it("signs with the executor's key: EdDSA, typ JOSE, kid its did:key; verified here and by the SDK", async () => {
    const signed = signedBy(C, card({ bounds: ["amount"] }))
    const sig = (signed.signatures as ReadonlyArray<JsonObject>)[0]
    expect(JSON.parse(Buffer.from(sig.protected as string, "base64url").toString("utf8"))).toEqual({ alg: "EdDSA", kid: keyOf(C), typ: "JOSE" })
    expect(Effect.runSync(verifyCard(signed))).toEqual({ _tag: "signed", kid: keyOf(C) })
    expect(await sdkAccepts(signed)).toBe(true)
    // Unsigned, the card is read as such (0.3 agents sign none); the SDK refuses to call it verified.
    expect(reason(card())).toBe("unsigned")
    expect(await sdkAccepts(card())).toBe(false)
  })

  it("verifies a card the SDK signed with the executor's key (JWS flattened, payload detached)", async () => {
    const pub = Option.getOrThrow(publicKeyFromDidKey(keyOf(C)))
    const privateJwk = { kty: "OKP", crv: "Ed25519", x: encodeBase64url(pub), d: encodeBase64url(seed(C)) }
    const sdkSigned = await generateAgentCardSignature(privateJwk, { alg: "EdDSA", kid: keyOf(C), typ: "JOSE" })(asSdk(card()))
    // The SDK's card as JSON, with the 0.3 members (outside its schema) put back as served.
    const served = { ...card(), signatures: (SdkAgentCard.toJSON(sdkSigned) as JsonObject).signatures } as JsonObject
    expect(Effect.runSync(verifyCard(served))).toEqual({ _tag: "signed", kid: keyOf(C) })
  })

  it("refuses a card changed after it was signed (here and in the SDK): an endpoint, the executor key, a skill", async () => {
    const signed = signedBy(C, card({ bounds: ["amount"] }))
    const interfaces = signed.supportedInterfaces as ReadonlyArray<JsonObject>
    const tampered: ReadonlyArray<JsonObject> = [
      { ...signed, supportedInterfaces: [{ ...interfaces[0], url: "http://evil.invalid/a2a" }, ...interfaces.slice(1)] },
      { ...signed, name: "Another agent" },
      { ...signed, skills: [{ id: "writ-call", name: "Writ call", description: "changed", tags: ["writ"] }] },
      { ...signed, capabilities: { ...(signed.capabilities as JsonObject), pushNotifications: true } }
    ]
    for (const t of tampered) {
      expect(reason(t)).toBe("mandate/a2a_card_signature")
      expect(await sdkAccepts(t)).toBe(false)
    }
    // The unsigned 0.3 `url` is outside the signature: changing it breaks nothing, and a client
    // that verified the card never reads it (test: resolvePeer in http.integration.test.ts).
    expect(reason({ ...signed, url: "http://elsewhere.invalid/a2a" })).toBe("signed")
  })

  it("refuses a signature by a key other than the one the card's Writ extension names, and malformed signatures", () => {
    // B signs C's card: a valid JWS, but not by the executor the card names.
    expect(reason(signedBy(B, card()))).toBe("mandate/a2a_card_signature")
    const good = (signedBy(C, card()).signatures as ReadonlyArray<JsonObject>)[0]
    const header = (h: object) => Buffer.from(JSON.stringify(h)).toString("base64url")
    const bad: ReadonlyArray<unknown> = [
      "not an array",
      [{ protected: good.protected }],
      [{ ...good, protected: "!!" }],
      [{ ...good, protected: header({ alg: "ES256", kid: keyOf(C), typ: "JOSE" }) }],
      [{ ...good, protected: header({ alg: "EdDSA", kid: keyOf(C) }) }],
      [{ ...good, protected: header({ alg: "EdDSA", kid: "key-1", typ: "JOSE" }) }],
      [{ ...good, protected: header({ alg: "EdDSA", kid: keyOf(C), typ: "JOSE", crit: ["b64"] }) }],
      [{ ...good, signature: encodeBase64url(new Uint8Array(64)) }]
    ]
    for (const signatures of bad) expect(reason({ ...card(), signatures } as JsonObject)).toBe("mandate/a2a_card_signature")
    // One good signature among bad ones is enough (section 8.4.3: several, for key rotation).
    expect(reason({ ...card(), signatures: [{ ...good, signature: encodeBase64url(new Uint8Array(64)) }, good] })).toBe("signed")
  })
})
