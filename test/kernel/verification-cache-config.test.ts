// VerificationCache.layerConfig (src/kernel/verification-cache.ts), the cache `writ serve` uses
// when no --verification-cache-bytes is given: sized by MANDATE_VERIFICATION_CACHE_BYTES through
// Config, the default without it, and a value that is not a byte count a ConfigError (typed, so
// the command reports it) rather than a cache of a surprising size.
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../src/kernel/verification-cache.js"

const sizeWith = (env: Record<string, string>) =>
  Effect.flatMap(VerificationCache, (c) => c.stats).pipe(
    Effect.map((s) => s.maxBytes),
    Effect.provide(VerificationCache.layerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))),
    Effect.either
  )

describe("VerificationCache.layerConfig", () => {
  it.effect("reads MANDATE_VERIFICATION_CACHE_BYTES, else the default", () =>
    Effect.gen(function*() {
      expect(yield* sizeWith({ MANDATE_VERIFICATION_CACHE_BYTES: "4096" })).toEqual(Either.right(4096))
      expect(yield* sizeWith({})).toEqual(Either.right(DEFAULT_VERIFICATION_CACHE_BYTES))
    }))

  it.effect("a negative or non-numeric size is a ConfigError", () =>
    Effect.gen(function*() {
      for (const bad of ["-1", "lots"]) {
        const r = yield* sizeWith({ MANDATE_VERIFICATION_CACHE_BYTES: bad })
        expect(Either.isLeft(r) && r.left._tag).toBe("ConfigError")
      }
    }))
})
