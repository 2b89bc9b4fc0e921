// The verification cache is a service, bounded in bytes, whose keys are copies.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { publicKeyFromSeed } from "../../src/kernel/ed25519.js"
import {
  copyString, ENTRY_OVERHEAD_BYTES, KEY_VALUE_BYTES, VerificationCache, verifyingKey
} from "../../src/kernel/verification-cache.js"

const did = (n: number) => didKeyFromPublicKey(publicKeyFromSeed(new Uint8Array(32).fill(n)))

// A collector on demand, to measure what the heap retains (not how long anything takes).
setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const retainedBytes = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

describe("VerificationCache", () => {
  it.effect("its plain form and its Effects share one store (verifiers read it once, then call it plainly)", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      // A check remembered plainly is seen as passed by the Effect, and the other way round.
      cache.sync.remember("writ abc did:key:z6Mk")
      expect(yield* cache.passed("writ abc did:key:z6Mk")).toBe(true)
      yield* cache.remember("call def did:key:z6Mk")
      expect(cache.sync.passed("call def did:key:z6Mk")).toBe(true)
      expect(cache.sync.passed("call xyz did:key:z6Mk")).toBe(false)
      // A value held one way is given back the other way; a key judged plainly is not judged again.
      cache.sync.hold("chain d1", ["w"], 10)
      expect(yield* cache.verified("chain d1")).toEqual(Option.some(["w"]))
      const k = cache.sync.key(did(4))
      expect(Option.isSome(k)).toBe(true)
      expect(Option.map(yield* cache.key(did(4)), (v) => v === Option.getOrThrow(k))).toEqual(Option.some(true))
      expect((yield* cache.stats).keysJudged).toBe(1)
      // Not did:key-shaped: refused plainly too, and nothing is judged.
      expect(Option.isNone(cache.sync.key("did:key:" + "z".repeat(5000)))).toBe(true)
      expect((yield* cache.stats).keysJudged).toBe(1)
    }))

  it.effect("judges a did:key once and remembers the answer, usable or not", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const good = did(1)
      const first = yield* cache.key(good)
      const again = yield* cache.key(good)
      expect(Option.isSome(first) && Option.isSome(again) && first.value === again.value).toBe(true)
      // A did:key that names no usable key (the identity point, of small order) is judged once too.
      const bad = didKeyFromPublicKey(Uint8Array.from(Buffer.from("01" + "00".repeat(31), "hex")))
      expect(Option.isNone(yield* cache.key(bad))).toBe(true)
      expect(Option.isNone(yield* cache.key(bad))).toBe(true)
      expect((yield* cache.stats).keysJudged).toBe(2)
    }))

  it.effect("never decodes, copies or keeps a string that is not did:key-shaped", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const long = "did:key:z" + "6Mk" + "A".repeat(50_000 - 3)
      expect(Option.isNone(yield* cache.key(long))).toBe(true)
      const stats = yield* cache.stats
      expect(stats.keysJudged).toBe(0)
      expect(stats.entries).toBe(0)
    }))

  it.effect("accounts each entry's key, value and overhead, and stays within its bytes under a flood of distinct keys", () =>
    Effect.gen(function* () {
      const maxBytes = 64 * 1024
      const cache = VerificationCache.make({ maxBytes })
      const signer = did(1)
      const check = (i: number) => `writ ${String(i).padStart(43, "x")} ${signer}`
      yield* cache.remember(check(0))
      const one = yield* cache.stats
      expect(one.bytes).toBe(2 * ("s " + check(0)).length + ENTRY_OVERHEAD_BYTES)
      yield* cache.key(did(2))
      expect((yield* cache.stats).bytes).toBe(one.bytes + 2 * ("k " + did(2)).length + ENTRY_OVERHEAD_BYTES + KEY_VALUE_BYTES)
      let most = 0
      for (let i = 1; i <= 20_000; i++) {
        yield* cache.remember(check(i))
        const s = yield* cache.stats
        most = Math.max(most, s.bytes)
      }
      expect(most).toBeLessThanOrEqual(maxBytes)
      // The newest checks are kept, the oldest were evicted first.
      expect(yield* cache.passed(check(20_000))).toBe(true)
      expect(yield* cache.passed(check(1))).toBe(false)
      expect((yield* cache.stats).entries).toBe(Math.floor(maxBytes / (2 * ("s " + check(1)).length + ENTRY_OVERHEAD_BYTES)))
    }))

  it.effect("keeps a recently used entry over an older one (least recently used goes first)", () =>
    Effect.gen(function* () {
      const entry = 2 * "s a0".length + ENTRY_OVERHEAD_BYTES
      const cache = VerificationCache.make({ maxBytes: 3 * entry })
      yield* cache.remember("a0")
      yield* cache.remember("a1")
      yield* cache.remember("a2")
      expect(yield* cache.passed("a0")).toBe(true) // a0 is now the most recent
      yield* cache.remember("a3") // evicts a1
      expect([yield* cache.passed("a0"), yield* cache.passed("a1"), yield* cache.passed("a2"), yield* cache.passed("a3")]).toEqual([true, false, true, true])
    }))

  it.effect("copies its keys: entries keyed by slices of large request bodies do not keep the bodies", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const bodies = 64
      const bodyBytes = 1 << 20
      const before = retainedBytes()
      for (let i = 0; i < bodies; i++) {
        // A fresh 1 MB text per request, and a key taken from the middle of it, as a parser's
        // substring would be.
        const body = Buffer.alloc(bodyBytes, 97 + (i % 26)).toString("latin1") + `#${i}`
        yield* cache.remember(body.slice(bodyBytes - 80))
      }
      const after = retainedBytes()
      expect((yield* cache.stats).entries).toBe(bodies)
      // Retaining the bodies would cost 64 MB; the copies cost a few kilobytes.
      expect(after - before).toBeLessThan((bodies * bodyBytes) / 8)
    }))

  it("copyString returns an equal string, lone surrogates included", () => {
    for (const s of ["", "did:key:z6Mk", "\ud800x\udfff", "é€😀"]) expect(copyString(s)).toBe(s)
  })

  it.effect("is optional: a verifier with no cache in context judges keys afresh, with the same answers", () =>
    Effect.gen(function* () {
      expect(Option.map(yield* verifyingKey(did(3)), (k) => k.publicKey)).toEqual(Option.some(publicKeyFromSeed(new Uint8Array(32).fill(3))))
      expect(Option.isNone(yield* verifyingKey("did:key:z6Mk" + "1".repeat(44)))).toBe(true)
    }))
})
