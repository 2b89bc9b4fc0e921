// YEA keys (SPEC §6.1) judged once per key through the VerificationCache (a proof key and
// a principal recur on every request, and decoding a point costs more than the signature check),
// with the same refusals as without it: a key that is not a usable point is `unauthorized`
// wherever it stands, the first time and every time after.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { Signer } from "../../src/kernel/services.js"
import { VerificationCache } from "../../src/kernel/verification-cache.js"
import { authorize } from "../../src/yea/authorize.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { decodeGrant } from "../../src/yea/grant.js"
import { decodeKeyText, verifyingKeyOf } from "../../src/yea/keys.js"
import { signProof, verifyProof } from "../../src/yea/proof.js"
import {
  AGENT, NOW, PRINCIPAL, SUBAGENT, agentKey, ask, blockId, delegate, issue, noTotals, principalKey, rawBlock, rawToken, rootPayload, subagentKey
} from "./_helpers.js"

/** The identity point, a small-order point: a well-formed key text that names no usable key. */
const smallOrderKey = "ed25519:" + encodeBase64url(Uint8Array.from([1, ...new Array(31).fill(0)]))
/** y = p: canonical base64url, 32 bytes, but not the canonical encoding of a point. */
const offCurveKey = "ed25519:" + encodeBase64url(Buffer.from("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", "hex"))
const base = [{ svc: ["shop.example"] }, { can: ["shop.*"] }]

const authorizeWith = (cache: VerificationCache["Type"] | undefined, grants: ReadonlyArray<unknown>, proofKey = agentKey) => {
  const run = authorize({ grants, proofKey, trusted: [principalKey], request: ask() }, noTotals).pipe(Effect.withClock(fixedClock(NOW)))
  return Effect.map(Effect.either(cache === undefined ? run : Effect.provideService(run, VerificationCache, cache)), (r) =>
    Either.isRight(r) ? "ok" : r.left.reason)
}

describe("YEA keys through the VerificationCache", () => {
  it.effect("every key of a grant and the proof is judged once, however often they recur", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const root = issue(base)
      const delegated = delegate(root, AGENT, [{ verbs: ["ASK"] }])
      for (let i = 0; i < 5; i++) {
        expect(yield* authorizeWith(cache, [root])).toBe("ok")
        expect(yield* authorizeWith(cache, [delegated], subagentKey)).toBe("ok")
      }
      // Three keys in all: the principal, the agent, the sub-agent.
      expect((yield* cache.stats).keysJudged).toBe(3)
      // The proof key is the agent's: found, not judged again.
      const subject = { verb: "ASK", capability: "shop.search" } as const
      const proof = yield* signProof("shop.example", subject).pipe(Effect.provideService(Signer, Signer.make(AGENT)), Effect.withClock(fixedClock(NOW)))
      const verified = yield* verifyProof(proof, "shop.example", subject).pipe(Effect.withClock(fixedClock(NOW)), Effect.provideService(VerificationCache, cache))
      expect(verified.key).toBe(agentKey)
      expect((yield* cache.stats).keysJudged).toBe(3)
    }))

  it.effect("a key that is no usable point is unauthorized as root iss, root sub or delegation sub, cached or not, every time", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const rootBlock = rawBlock(rootPayload(base), PRINCIPAL)
      const grants = [
        // root sub: the principal signs a grant to a small-order key
        rawToken([rawBlock(rootPayload(base, { sub: smallOrderKey }), PRINCIPAL)]),
        // root iss: off the curve (whoever signed it)
        rawToken([rawBlock(rootPayload(base, { iss: offCurveKey }), PRINCIPAL)]),
        // delegation sub: the agent delegates to a small-order key (delegateGrant would refuse to)
        rawToken([rootBlock, rawBlock({ caveats: [], iat: NOW - 50, prev: blockId(rootBlock.s), sub: smallOrderKey }, AGENT)])
      ]
      for (const g of grants) {
        expect(Either.getLeft(decodeGrant(g)).pipe(Option.map((e) => e.reason))).toEqual(Option.some("unauthorized"))
        for (let i = 0; i < 3; i++) {
          expect(Either.getLeft(decodeGrant(g, cache.sync)).pipe(Option.map((e) => e.reason))).toEqual(Option.some("unauthorized"))
          expect(yield* authorizeWith(cache, [g], smallOrderKey)).toBe("unauthorized")
          expect(yield* authorizeWith(undefined, [g], smallOrderKey)).toBe("unauthorized")
        }
      }
      // A refusal is remembered as one: the bad keys were judged once each, like the good ones.
      expect(Option.isNone(verifyingKeyOf(smallOrderKey, cache.sync))).toBe(true)
      expect(Option.isNone(verifyingKeyOf(offCurveKey, cache.sync))).toBe(true)
      expect((yield* cache.stats).keysJudged).toBe(4) // principal, agent, small order, off curve
    }))

  it.effect("a proof under a small-order key is refused with the cache and without", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const subject = { verb: "ASK", capability: "shop.search" } as const
      const proof = yield* signProof("shop.example", subject).pipe(Effect.provideService(Signer, Signer.make(SUBAGENT)), Effect.withClock(fixedClock(NOW)))
      const forged = { ...proof, key: smallOrderKey }
      for (const withCache of [true, false, true]) {
        const run = verifyProof(forged, "shop.example", subject).pipe(Effect.withClock(fixedClock(NOW)))
        const r = yield* Effect.either(withCache ? Effect.provideService(run, VerificationCache, cache) : run)
        expect(Either.getLeft(r).pipe(Option.map((e) => [e.reason, e.path]))).toEqual(Option.some(["unauthorized", "proof.key"]))
      }
    }))

  it("names longer than a key are never looked up or kept; a name is judged by its owner's decoding", () => {
    const cache = VerificationCache.make({ maxBytes: 1 << 20 })
    const long = agentKey + "A".repeat(40)
    expect(Option.isNone(cache.sync.named(long, () => Option.some(new Uint8Array(32))))).toBe(true)
    expect(Option.isNone(verifyingKeyOf(long, cache.sync))).toBe(true)
    expect(Option.isNone(verifyingKeyOf(42, cache.sync))).toBe(true)
    expect(Effect.runSync(cache.stats).entries).toBe(0)
    // The key text's form: prefix, length, canonical base64url.
    expect(Option.isSome(decodeKeyText(agentKey))).toBe(true)
    expect(Option.isNone(decodeKeyText("ed25519:" + agentKey.slice(8, -1)))).toBe(true)
    expect(Option.isNone(decodeKeyText("x25519:" + agentKey.slice(8)))).toBe(true)
    // Judged with and without the cache alike.
    expect(Option.map(verifyingKeyOf(agentKey, cache.sync), (k) => encodeBase64url(k.publicKey))).toEqual(Option.some(agentKey.slice(8)))
    expect(Option.map(verifyingKeyOf(agentKey, undefined), (k) => encodeBase64url(k.publicKey))).toEqual(Option.some(agentKey.slice(8)))
  })
})
