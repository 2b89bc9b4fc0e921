import { ed25519 } from "@noble/curves/ed25519.js"
import { sha512 } from "@noble/hashes/sha2.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Option } from "effect"
import {
  decodeBase58, decodeBase64url, DID_KEY_LENGTH, didKeyFromPublicKey, encodeBase58, hasDidKeyShape, encodeBase64url, hashB64, isAcceptablePublicKey, isSmallOrderPoint,
  publicKeyFromDidKey, publicKeyFromSeed, RandomBytes, sign, SMALL_ORDER_ENCODINGS, verify
} from "../../src/kernel/index.js"
import { depth } from "../support/depth.js"

const hex = (s: string) => Uint8Array.from(Buffer.from(s, "hex"))
const pubOf = (n: number) => publicKeyFromSeed(new Uint8Array(32).fill(n))

describe("base64url (Writ section 1.1 rule 5)", () => {
  it.prop("round-trips", [fc.uint8Array({ minLength: 1, maxLength: 80 })], ([b]) => {
    expect(Option.getOrThrow(decodeBase64url(encodeBase64url(b)))).toEqual(b)
  }, { fastCheck: { numRuns: depth(1000) } })
  it.each([["", "empty"], ["AA==", "padding"], ["A+B/", "standard alphabet"], ["AAAAA", "length 1 mod 4"], ["AB", "trailing bits"], ["A A", "space"]])(
    "refuses %j (%s)", (s) => expect(Option.isNone(decodeBase64url(s))).toBe(true))
})

describe("base58btc (did:key, section 1.3)", () => {
  it.prop("round-trips, leading zero bytes included", [fc.uint8Array({ maxLength: 40 })], ([b]) => {
    const s = encodeBase58(b)
    expect(decodeBase58(s, s.length)).toEqual(b)
  }, { fastCheck: { numRuns: depth(1000) } })
  it("refuses a string longer than its bound before reading it, and a character outside the alphabet", () => {
    expect(decodeBase58("2".repeat(48), 47)).toBeUndefined()
    expect(decodeBase58("0OIl", 10)).toBeUndefined()
    expect(decodeBase58("", 0)).toEqual(new Uint8Array())
  })
  it("did:key is 56 characters for every Ed25519 key, and any other length is refused before decoding", () => {
    for (const b of [0x00, 0x7f, 0xff]) expect(didKeyFromPublicKey(new Uint8Array(32).fill(b)).length).toBe(DID_KEY_LENGTH)
    expect(hasDidKeyShape(didKeyFromPublicKey(pubOf(1)) + "1")).toBe(false)
    expect(hasDidKeyShape("did:key:z6Mk" + "1".repeat(44))).toBe(true)
  })
})

describe("Ed25519 and did:key (section 1.3, small-order rules of 2026-10-04)", () => {
  // RFC 8032 section 7.1, test 1.
  const seed = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
  const pub = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
  const sig = hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
  it("matches RFC 8032 test 1", () => {
    expect(publicKeyFromSeed(seed)).toEqual(pub)
    expect(sign(seed, new Uint8Array())).toEqual(sig)
    expect(verify(pub, new Uint8Array(), sig)).toBe(true)
    expect(verify(pub, Uint8Array.of(1), sig)).toBe(false)
  })
  it("lists exactly 14 small-order encodings, each of small order", () => {
    expect(SMALL_ORDER_ENCODINGS.size).toBe(14)
    for (const h of SMALL_ORDER_ENCODINGS) {
      expect(ed25519.Point.fromBytes(hex(h), true).isSmallOrder()).toBe(true)
      expect(isAcceptablePublicKey(hex(h))).toBe(false)
    }
    expect(isSmallOrderPoint(pub)).toBe(false)
  })
  it("refuses a forged signature under a small-order key", () => {
    const identity = hex("0100000000000000000000000000000000000000000000000000000000000000")
    const forged = new Uint8Array(64)
    forged.set(identity, 0)
    expect(verify(identity, Uint8Array.of(1, 2, 3), forged)).toBe(false)
  })
  it("refuses a signature whose R is small order (nonce r = 0)", () => {
    // With r = 0, R is the identity and S = k*a mod L; the equation holds, the rule refuses it.
    const a = ed25519.utils.getExtendedPublicKey(seed)
    const msg = Uint8Array.of(7)
    const R = hex("0100000000000000000000000000000000000000000000000000000000000000")
    const k = BigInt("0x" + Buffer.from(sha512(new Uint8Array([...R, ...pub, ...msg])).reverse()).toString("hex")) % ed25519.Point.Fn.ORDER
    const S = (k * a.scalar) % ed25519.Point.Fn.ORDER
    const sBytes = hex(S.toString(16).padStart(64, "0")).reverse()
    const forged = new Uint8Array([...R, ...sBytes])
    expect(ed25519.verify(forged, msg, pub, { zip215: true })).toBe(true) // mathematically valid
    expect(verify(pub, msg, forged)).toBe(false)
  })
  it("encodes did:key with the z6Mk prefix and round-trips", () => {
    const d = didKeyFromPublicKey(pub)
    expect(d.startsWith("did:key:z6Mk")).toBe(true)
    expect(Option.getOrThrow(publicKeyFromDidKey(d))).toEqual(pub)
  })
  it.each([
    "did:web:example.com", "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2do", "did:key:6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
    "did:key:z0OIl", ""
  ])("refuses %j", (s) => expect(Option.isNone(publicKeyFromDidKey(s))).toBe(true))
  it("refuses every small-order key as a did:key", () => {
    for (const h of SMALL_ORDER_ENCODINGS) expect(Option.isNone(publicKeyFromDidKey(didKeyFromPublicKey(hex(h))))).toBe(true)
  })
  it("hashes to 43 characters", () => expect(hashB64(new Uint8Array())).toBe("47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"))
})

describe("RandomBytes", () => {
  it.effect("is deterministic for a seed", () =>
    Effect.gen(function* () {
      const take = Effect.gen(function* () {
        const r = RandomBytes.deterministic(Uint8Array.of(1, 2, 3))
        return [yield* r.bytes(40), yield* r.bytes(5)]
      })
      expect(yield* take).toEqual(yield* take)
    }))
  it.effect("a seeded Layer gives the same stream as the deterministic shape", () =>
    Effect.gen(function* () {
      const fromLayer = yield* Effect.flatMap(RandomBytes, (r) => r.bytes(48))
      expect(fromLayer).toEqual(yield* RandomBytes.deterministic(Uint8Array.of(9)).bytes(48))
    }).pipe(Effect.provide(RandomBytes.seeded(Uint8Array.of(9)))))
  it.effect("the live pool hands out every byte once, as copies, across refills and past its size", () =>
    Effect.gen(function* () {
      // A pool of 64 bytes: 9-byte draws cross a refill every 7 draws, and a 100-byte draw
      // bypasses it. No two draws are equal (72 random bits each), and each is a copy: changing
      // one changes no other.
      const r = RandomBytes.pooled(64)
      const draws: Array<Uint8Array> = []
      for (let i = 0; i < 40; i++) draws.push(yield* r.bytes(9))
      const big = yield* r.bytes(100)
      expect(big.length).toBe(100)
      expect(draws.every((d) => d.length === 9)).toBe(true)
      expect(new Set(draws.map((d) => Buffer.from(d).toString("hex"))).size).toBe(draws.length)
      const before = Buffer.from(draws[1]).toString("hex")
      draws[0].fill(0)
      expect(Buffer.from(draws[1]).toString("hex")).toBe(before)
      // The Layer gives each build its own pool.
      const a = yield* Effect.flatMap(RandomBytes, (x) => x.bytes(16)).pipe(Effect.provide(RandomBytes.live))
      const b = yield* Effect.flatMap(RandomBytes, (x) => x.bytes(16)).pipe(Effect.provide(RandomBytes.live))
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false)
    }))
})

