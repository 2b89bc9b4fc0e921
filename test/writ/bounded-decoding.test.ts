// Every encoded field is bounded by what its type allows before anything is
// decoded. A did:key of 50,000 base58 characters in a call's `from`, a revoke's `iss` or a writ's
// `iss` is refused `bad_key` (sections 1.3, 11) without the did:key decoder ever being reached:
// the verification cache counts every key it decodes, and it counts none.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import { decodeBase58 } from "../../src/kernel/base58.js"
import { DID_KEY_LENGTH, didKeyBytes } from "../../src/kernel/didkey.js"
import { VerificationCache } from "../../src/kernel/verification-cache.js"
import { makeRevoke } from "../../src/writ/issue.js"
import { checkCall, verifyCall } from "../../src/writ/call.js"
import { verifyRevoke } from "../../src/writ/revoke.js"
import { verifyWrit } from "../../src/writ/writ.js"
import { Received } from "../../src/writ/verify.js"
import { as, A, run, world } from "./fixtures.js"

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
/** `did:key:z` and 50,000 base58 characters, starting as a real key does. */
const longKey = "did:key:z6Mk" + Array.from({ length: 50_000 - 3 }, (_, i) => BASE58[(i * 7) % 58]).join("")

const w = world()
const received = (o: JsonObject, member: string, key = longKey) => new Received(JSON.stringify({ ...o, [member]: key }))

/** Runs `check` with a fresh cache; returns the failure's reason and path, and the keys decoded. */
const refusal = <A, E extends { reason: string; path?: string }>(check: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const cache = VerificationCache.make({ maxBytes: 1 << 20 })
    const e = yield* Effect.flip(Effect.provideService(check, VerificationCache, cache))
    return { reason: e.reason, path: e.path, keysDecoded: (yield* cache.stats).keysJudged }
  })

describe("a did:key far longer than any key", () => {
  it("is 50,000 base58 characters after did:key:z", () => expect(longKey.length - "did:key:z".length).toBe(50_000))

  it.effect("in a call's from: bad_key at from, nothing decoded (section 7 step 1)", () =>
    Effect.gen(function* () {
      const input = received(w.call.call.json, "from")
      expect(yield* refusal(checkCall(input))).toEqual({ reason: "bad_key", path: "from", keysDecoded: 0 })
      expect(yield* refusal(verifyCall(input))).toEqual({ reason: "bad_key", path: "from", keysDecoded: 0 })
    }))

  it.effect("in a revoke's iss: bad_key at iss, nothing decoded (section 9.1 step 1)", () =>
    Effect.gen(function* () {
      const revoke = run(as(A)(makeRevoke({ chain: w.child.chain })))
      expect(yield* refusal(verifyRevoke(received(revoke.revoke.json, "iss")))).toEqual({ reason: "bad_key", path: "iss", keysDecoded: 0 })
      const keyWide = run(as(A)(makeRevoke({ writ: "*" })))
      expect(yield* refusal(verifyRevoke(received(keyWide.revoke.json, "iss")))).toEqual({ reason: "bad_key", path: "iss", keysDecoded: 0 })
    }))

  it.effect("in a writ's iss or hld: bad_key, nothing decoded (a writ is at most 4096 bytes, so 3,000 characters)", () =>
    Effect.gen(function* () {
      const writ = w.root.chain[0] as JsonObject
      const key = longKey.slice(0, 3000)
      expect(yield* refusal(verifyWrit(received(writ, "iss", key)))).toEqual({ reason: "bad_key", path: "iss", keysDecoded: 0 })
      // `iss` comes first in the member table and is a real key: that one is decoded, `hld` is not.
      expect(yield* refusal(verifyWrit(received(writ, "hld", key)))).toEqual({ reason: "bad_key", path: "hld", keysDecoded: 1 })
      expect(yield* refusal(verifyWrit(received(writ, "iss")))).toEqual({ reason: "too_large", path: undefined, keysDecoded: 0 })
    }))

  it("never reaches base58: the did:key reader refuses it by length, the decoder by its bound", () => {
    expect(Option.isNone(didKeyBytes(longKey))).toBe(true)
    expect(decodeBase58(longKey.slice(9), DID_KEY_LENGTH - 9)).toBeUndefined()
  })

  it.effect("a genuine call is still verified, decoding each distinct key once", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const verify = Effect.provideService(verifyCall(new Received(JSON.stringify(w.call.call.json))), VerificationCache, cache)
      yield* verify
      const first = (yield* cache.stats).keysJudged
      yield* verify
      expect((yield* cache.stats).keysJudged).toBe(first)
      expect(first).toBeGreaterThan(0)
    }))
})
