// Appendix D, the JWS profile: what we wrap, an unrelated JOSE implementation (panva/jose)
// verifies as an ordinary EdDSA JWS; what it signs with exactly our header, we unwrap; and every
// envelope rule is a refusal with its own code.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { base64url, CompactSign, compactVerify, decodeProtectedHeader, importJWK } from "jose"
import { publicKeyFromSeed } from "../../src/kernel/ed25519.js"
import { Signer } from "../../src/kernel/services.js"
import { makeAck, makeRevoke } from "../../src/writ/issue.js"
import { unwrap, wrap } from "../../src/writ/jws.js"
import { canonicalText, revokeIdentity } from "../../src/writ/sign.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { A, B, C, X, as, keyOf, resign, run, seed, tallyFor, world } from "../writ/fixtures.js"

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64url")
const jwkOf = (n: number, priv: boolean) => ({
  kty: "OKP",
  crv: "Ed25519",
  x: b64(publicKeyFromSeed(seed(n))),
  ...(priv ? { d: b64(seed(n)) } : {})
})

const wrapAs = (n: number, o: JsonObject) => Effect.provide(wrap(o), Signer.fromSeed(seed(n)))
const reasonOf = <A>(eff: Effect.Effect<A, { reason: string }>) =>
  Effect.map(Effect.either(eff), (r) => (Either.isLeft(r) ? r.left.reason : "accept"))

/** A compact JWS signed by jose with any header and payload text. */
const joseSign = async (n: number, header: Record<string, unknown>, payload: string) =>
  new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader(header as never)
    .sign(await importJWK(jwkOf(n, true), "EdDSA"))

const w = world()
const objects = (): ReadonlyArray<readonly [string, number, JsonObject]> => {
  const revoke = run(as(A)(makeRevoke({ chain: w.root.chain }))).revoke.json
  const ack = run(Effect.provide(makeAck({ revoke: revokeIdentity(revoke), rcv: 5, body: { held: [], open: [] } }), Signer.fromSeed(seed(C)))).ack.json
  return [
    ["writ", A, w.root.writ as unknown as JsonObject],
    ["call", B, w.call.call.json],
    ["tally", C, tallyFor(w).json],
    ["revoke", A, revoke],
    ["ack", C, ack]
  ]
}

describe("JWS profile (Appendix D)", () => {
  for (const [typ, signer, object] of objects()) {
    it.effect(`a ${typ}: jose verifies our JWS as ordinary EdDSA, and we unwrap it to the same object`, () =>
      Effect.gen(function*() {
        const jws = yield* wrapAs(signer, object)
        expect(decodeProtectedHeader(jws)).toEqual({ alg: "EdDSA", typ: `writ-${typ}+jws`, kid: keyOf(signer) })
        const key = yield* Effect.promise(() => importJWK(jwkOf(signer, false), "EdDSA"))
        const verified = yield* Effect.promise(() => compactVerify(jws, key, { algorithms: ["EdDSA"] }))
        // The payload is the object in canonical form, sig included.
        expect(new TextDecoder().decode(verified.payload)).toBe(canonicalText(object))
        const out = yield* unwrap(jws)
        expect(out.type).toBe(typ)
        expect(out.object).toEqual(object)
        // And jose refuses it under another key: the envelope really is signed by the object's key.
        const other = yield* Effect.promise(() => importJWK(jwkOf(X, false), "EdDSA"))
        const r = yield* Effect.promise(() => compactVerify(jws, other).then(() => "verified", () => "refused"))
        expect(r).toBe("refused")
      }))
  }

  it.effect("unwraps a JWS that jose signed with exactly the profile's header", () =>
    Effect.gen(function*() {
      const writ = w.root.writ as unknown as JsonObject
      const jws = yield* Effect.promise(() => joseSign(A, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }, canonicalText(writ)))
      expect((yield* unwrap(jws)).object).toEqual(writ)
    }))

  it.effect("refuses a header with any other member, a missing member, another alg, or another typ", () =>
    Effect.gen(function*() {
      const writ = canonicalText(w.root.writ as unknown as JsonObject)
      const base = { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }
      const sign = (h: Record<string, unknown>) => Effect.promise(() => joseSign(A, h, writ))
      expect(yield* reasonOf(unwrap(yield* sign({ ...base, cty: "json" })))).toBe("jws/bad_header")
      expect(yield* reasonOf(unwrap(yield* sign({ ...base, crit: ["b64"], b64: true })))).toBe("jws/bad_header")
      expect(yield* reasonOf(unwrap(yield* sign({ alg: "EdDSA", typ: "writ-writ+jws" })))).toBe("jws/bad_header")
      expect(yield* reasonOf(unwrap(yield* sign({ ...base, alg: "Ed25519" })))).toBe("jws/bad_alg")
      expect(yield* reasonOf(unwrap(yield* sign({ ...base, typ: "JWT" })))).toBe("jws/bad_header")
      expect(yield* reasonOf(unwrap(yield* sign({ ...base, kid: "did:web:example.com" })))).toBe("jws/bad_header")
      // A header naming another object type than the payload's: a header fault (Appendix D, `typ`
      // is the carried object's), with kid the object's own signer.
      expect(yield* reasonOf(unwrap(yield* sign({ ...base, typ: "writ-call+jws" })))).toBe("jws/bad_header")
      // A header made by hand with alg "none" and no signature: refused on alg, the header being
      // read before the other segments.
      const none = `${base64url.encode(JSON.stringify({ alg: "none", typ: "writ-writ+jws", kid: keyOf(A) }))}.${base64url.encode(writ)}.`
      expect(yield* reasonOf(unwrap(none))).toBe("jws/bad_alg")
      const noneSigned = `${base64url.encode(JSON.stringify({ alg: "none", typ: "writ-writ+jws", kid: keyOf(A) }))}.${base64url.encode(writ)}.AAAA`
      expect(yield* reasonOf(unwrap(noneSigned))).toBe("jws/bad_alg")
      // A header repeating a member (strict JSON, section 1.1 rule 4 applied to the envelope too).
      const dup = `${base64url.encode(`{"alg":"EdDSA","alg":"EdDSA","typ":"writ-writ+jws","kid":"${keyOf(A)}"}`)}.${base64url.encode(writ)}.AAAA`
      expect(yield* reasonOf(unwrap(dup))).toBe("jws/malformed")
    }))

  it.effect("refuses a kid that is not the object's signer, a bad JWS signature, and a broken envelope", () =>
    Effect.gen(function*() {
      const writ = w.root.writ as unknown as JsonObject
      // Wrapping: B cannot wrap A's writ.
      expect(yield* reasonOf(wrapAs(B, writ))).toBe("jws/kid_mismatch")
      // A JWS whose envelope B signed correctly, with kid B, around A's writ.
      const byB = yield* Effect.promise(() => joseSign(B, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(B) }, canonicalText(writ)))
      expect(yield* reasonOf(unwrap(byB))).toBe("jws/kid_mismatch")
      // A tally names no signer: kid must be the key it verifies under (section 6.1 step 6).
      const tally = tallyFor(w).json
      const tallyByB = yield* Effect.promise(() => joseSign(B, { alg: "EdDSA", typ: "writ-tally+jws", kid: keyOf(B) }, canonicalText(tally)))
      expect(yield* reasonOf(unwrap(tallyByB))).toBe("bad_signature")
      // kid A, but the envelope signed by X.
      const forged = yield* Effect.promise(() => joseSign(X, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }, canonicalText(writ)))
      expect(yield* reasonOf(unwrap(forged))).toBe("jws/bad_signature")
      const good = yield* wrapAs(A, writ)
      const [h, p, s] = good.split(".")
      expect(yield* reasonOf(unwrap(`${h}.${p}`))).toBe("jws/malformed")
      expect(yield* reasonOf(unwrap(`${h}.${p}.${s}.x`))).toBe("jws/malformed")
      expect(yield* reasonOf(unwrap(`${h}.${p}.${s.slice(0, -2)}AA`))).toBe("jws/bad_signature")
      expect(yield* reasonOf(unwrap(`${h}=.${p}.${s}`))).toBe("jws/malformed")
    }))

  it.effect("verifies the object inside as section 6.1 does, ignoring the envelope, and wants its canonical form", () =>
    Effect.gen(function*() {
      const writ = w.root.writ as unknown as JsonObject
      // A writ altered after signing, in an envelope correctly signed by its issuer.
      const altered = { ...writ, exp: (writ.exp as number) - 1 }
      const env = yield* Effect.promise(() => joseSign(A, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }, canonicalText(altered)))
      expect(yield* reasonOf(unwrap(env))).toBe("bad_signature")
      // The object re-signed correctly but sent in non-canonical form (whitespace).
      const spaced = yield* Effect.promise(() => joseSign(A, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }, JSON.stringify(writ, null, 1)))
      expect(yield* reasonOf(unwrap(spaced))).toBe("jws/malformed")
      // A payload with a repeated member: the object's own reading refuses it (section 1.1).
      const text = canonicalText(writ).replace('"v":1', '"v":1,"v":1')
      const dup = yield* Effect.promise(() => joseSign(A, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }, text))
      expect(yield* reasonOf(unwrap(dup))).toBe("noncanonical")
      // A payload that is JSON but not an object, or not JSON: the object's own reading names it.
      const arr = yield* Effect.promise(() => joseSign(A, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }, "[1]"))
      expect(yield* reasonOf(unwrap(arr))).toBe("malformed")
      const junk = yield* Effect.promise(() => joseSign(A, { alg: "EdDSA", typ: "writ-writ+jws", kid: keyOf(A) }, "{"))
      expect(yield* reasonOf(unwrap(junk))).toBe("noncanonical")
      // Wrapping refuses an object a verifier would refuse.
      expect(yield* reasonOf(wrapAs(A, resign("writ", { ...writ, v: 2 }, A)))).toBe("unsupported_version")
      expect(yield* reasonOf(wrapAs(A, { typ: "note" }))).toBe("jws/malformed")
    }))
})
