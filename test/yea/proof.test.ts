// Keys (SPEC §6.1) and proofs of possession (§6.5): canonical encodings only, the target per verb,
// the audience, and the ±300 s window against the service's Clock.
import { Effect, Either, Option } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { Signer } from "../../src/kernel/services.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { decodeKey, decodeSeed, decodeSignature, encodeKey, keyFromSeedText } from "../../src/yea/keys.js"
import { proofTarget, signProof, subjectOfFrame, verifyProof, type ProofSubject } from "../../src/yea/proof.js"
import { AGENT, MALLORY, NOW, agentKey } from "./_helpers.js"

const sign = (subject: ProofSubject, aud = "shop.example", at = NOW, seed = AGENT) =>
  signProof(aud, subject).pipe(Effect.provideService(Signer, Signer.make(seed)), Effect.withClock(fixedClock(at)))

const verifyAt = (proof: unknown, subject: ProofSubject, now = NOW, aud = "shop.example") =>
  Effect.map(Effect.either(verifyProof(proof, aud, subject).pipe(Effect.withClock(fixedClock(now)))), (r) =>
    Either.isRight(r) ? "ok" : r.left.reason
  )

/** Same bytes, different spelling: bump the last character (non-zero trailing bits). */
const twin = (s: string) => s.slice(0, -1) + String.fromCharCode(s.charCodeAt(s.length - 1) + 1)

describe("keys (§6.1)", () => {
  it("ed25519: + canonical base64url of 32 bytes", () => {
    expect(Option.isSome(decodeKey(agentKey))).toBe(true)
    expect(encodeKey(Option.getOrThrow(decodeKey(agentKey)))).toBe(agentKey)
  })
  const bad: ReadonlyArray<[string, unknown]> = [
    ["non-zero trailing bits", twin(agentKey)],
    ["padding", agentKey + "="],
    ["standard alphabet", "ed25519:" + Buffer.from(Option.getOrThrow(decodeKey(agentKey))).toString("base64").replace(/=+$/, "")],
    ["another prefix", agentKey.replace("ed25519:", "x25519:")],
    ["did:key", "did:key:z6Mk"],
    ["31 bytes", "ed25519:" + encodeBase64url(new Uint8Array(31).fill(9))],
    ["33 bytes", "ed25519:" + encodeBase64url(new Uint8Array(33).fill(9))],
    ["a small-order point (the identity)", "ed25519:" + encodeBase64url(Uint8Array.from([1, ...new Array(31).fill(0)]))],
    ["not a string", 7]
  ]
  for (const [name, k] of bad) it(`refuses ${name}`, () => expect(Option.isNone(decodeKey(k))).toBe(true))
  it("the standard-alphabet case really differs from the base64url spelling", () => expect(bad[2][1]).not.toBe(agentKey))
  it("seeds and signatures are canonical too", () => {
    const seed = encodeBase64url(AGENT)
    expect(Option.isSome(decodeSeed(seed))).toBe(true)
    expect(Option.isNone(decodeSeed(twin(seed)))).toBe(true)
    expect(Option.isNone(decodeSeed(seed + "="))).toBe(true)
    expect(Option.getOrThrow(keyFromSeedText(seed))).toBe(agentKey)
    expect(Option.isNone(keyFromSeedText(encodeBase64url(new Uint8Array(16))))).toBe(true)
    const sig = encodeBase64url(new Uint8Array(64).fill(3))
    expect(Option.isSome(decodeSignature(sig))).toBe(true)
    expect(Option.isNone(decodeSignature(twin(sig)))).toBe(true)
    expect(Option.isNone(decodeSignature(encodeBase64url(new Uint8Array(63))))).toBe(true)
  })
})

describe("proof targets (§6.5)", () => {
  it("per verb", () => {
    expect(proofTarget({ verb: "COMMIT", hash: "h" })).toBe("h")
    expect(proofTarget({ verb: "UNDO", receipt: "r_1" })).toBe("r_1")
    expect(proofTarget({ verb: "ASK", capability: "c" })).toBe("c")
    expect(proofTarget({ verb: "INTENT", capability: "c" })).toBe("c")
    expect(proofTarget({ verb: "INTENT", capability: "c", auto: true, frameId: "f9" })).toBe("auto:c:f9")
    expect(proofTarget({ verb: "EXPAND", handle: "h_3" })).toBe("h_3")
  })
  it("read from a request frame", () => {
    expect(subjectOfFrame({ verb: "COMMIT", hash: "h", proposal: "p" })).toEqual(Option.some({ verb: "COMMIT", hash: "h" }))
    expect(subjectOfFrame({ verb: "INTENT", capability: "c", auto: true, id: "f" })).toEqual(
      Option.some({ verb: "INTENT", capability: "c", auto: true, frameId: "f" })
    )
    expect(subjectOfFrame({ verb: "INTENT", capability: "c", auto: "yes", id: "f" })).toEqual(Option.some({ verb: "INTENT", capability: "c" }))
    expect(Option.isNone(subjectOfFrame({ verb: "HELLO" }))).toBe(true)
    expect(Option.isNone(subjectOfFrame({ verb: "COMMIT" }))).toBe(true)
  })
})

describe("proof verification (§6.5)", () => {
  const commit: ProofSubject = { verb: "COMMIT", hash: "h1" }
  // Describe-level fixture: the malformed cases below are built from it while tests are collected.
  const proof = Effect.runSync(sign(commit))
  it.effect("a fresh proof verifies and yields the holder key", () =>
    Effect.gen(function* () {
      expect(proof.key).toBe(agentKey)
      expect(yield* verifyAt(proof, commit)).toBe("ok")
    }))
  it.effect("is bound to the target, the verb and the audience", () =>
    Effect.gen(function* () {
      expect(yield* verifyAt(proof, { verb: "COMMIT", hash: "h2" })).toBe("unauthorized")
      expect(yield* verifyAt(yield* sign({ verb: "UNDO", receipt: "h1" }), commit)).toBe("unauthorized")
      expect(yield* verifyAt(proof, commit, NOW, "evil.example")).toBe("unauthorized")
      const plain = yield* sign({ verb: "INTENT", capability: "c" })
      expect(yield* verifyAt(plain, { verb: "INTENT", capability: "c", auto: true, frameId: "f" })).toBe("unauthorized")
    }))
  it.effect("the window is ±300 s of the service's clock, inclusive", () =>
    Effect.gen(function* () {
      expect(yield* verifyAt(proof, commit, NOW + 300)).toBe("ok")
      expect(yield* verifyAt(proof, commit, NOW - 300)).toBe("ok")
      expect(yield* verifyAt(proof, commit, NOW + 301)).toBe("unauthorized")
      expect(yield* verifyAt(proof, commit, NOW - 301)).toBe("unauthorized")
    }))
  it.effect("a proof by another key does not verify under the claimed key", () =>
    Effect.gen(function* () {
      const m = yield* sign(commit, "shop.example", NOW, MALLORY)
      expect(yield* verifyAt({ ...m, key: agentKey }, commit)).toBe("unauthorized")
      expect(yield* verifyAt(m, commit)).toBe("ok")
    }))
  const malformed: ReadonlyArray<[string, unknown]> = [
    ["missing", undefined],
    ["not an object", "proof"],
    ["no key", { ts: NOW, sig: proof.sig }],
    ["ts not an integer", { ...proof, ts: NOW + 0.5 }],
    ["ts a string", { ...proof, ts: String(NOW) }],
    ["key non-canonical", { ...proof, key: twin(proof.key) }],
    ["sig non-canonical", { ...proof, sig: twin(proof.sig) }],
    ["sig padded", { ...proof, sig: proof.sig + "==" }],
    ["sig tampered", { ...proof, sig: proof.sig.slice(0, 10) + (proof.sig[10] === "A" ? "B" : "A") + proof.sig.slice(11) }]
  ]
  for (const [name, p] of malformed)
    it.effect(`refuses a proof with ${name}`, () =>
      Effect.gen(function* () {
        expect(yield* verifyAt(p, commit)).toBe("unauthorized")
      }))
})
