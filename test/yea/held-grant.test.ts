// Decoded grants held in the VerificationCache (grant.ts `readGrant`, `holdVerifiedGrant`): an
// agent sends the same grant with every request, so §6.4 step 1 (decoding) runs for a token until
// its chain has verified twice, and then the decoded grant is found by the SHA-256 of the token.
// Only decoding is skipped: a held grant is still checked against the request's trusted
// principals, proof key and bound principal every time, and a token that never verified is
// never held.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { hashTextB64 } from "../../src/kernel/hash.js"
import { VerificationCache } from "../../src/kernel/verification-cache.js"
import { authorize, type AuthorizeInput } from "../../src/yea/authorize.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { AGENT, NOW, PRINCIPAL, agentKey, ask, issue, noTotals, principalKey, rawBlock, rawToken, rootPayload, subagentKey } from "./_helpers.js"

const base = [{ svc: ["shop.example"] }, { can: ["shop.*"] }]

const authorizeWith = (cache: VerificationCache["Type"], input: Partial<AuthorizeInput> & { readonly grants: ReadonlyArray<unknown> }) =>
  authorize({ proofKey: agentKey, trusted: [principalKey], request: ask(), ...input }, noTotals).pipe(
    Effect.withClock(fixedClock(NOW)),
    Effect.provideService(VerificationCache, cache),
    Effect.either,
    Effect.map((r) => (Either.isRight(r) ? "ok" : r.left.reason))
  )

const held = (cache: VerificationCache["Type"], token: string) => Option.isSome(cache.sync.verified(`yea-grant ${hashTextB64(token)}`))

describe("YEA grants held decoded in the VerificationCache", () => {
  it.effect("a grant is held after its chain verified twice, and then answers as before", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const token = issue(base)
      expect(yield* authorizeWith(cache, { grants: [token] })).toBe("ok")
      expect(held(cache, token)).toBe(false)
      expect(yield* authorizeWith(cache, { grants: [token] })).toBe("ok")
      expect(held(cache, token)).toBe(true)
      expect(yield* authorizeWith(cache, { grants: [token] })).toBe("ok")
    }))

  it.effect("a held grant is still refused for another proof key, an untrusted root and another bound principal", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const token = issue(base)
      yield* authorizeWith(cache, { grants: [token] })
      yield* authorizeWith(cache, { grants: [token] })
      expect(held(cache, token)).toBe(true)
      expect(yield* authorizeWith(cache, { grants: [token], proofKey: subagentKey })).toBe("unauthorized")
      expect(yield* authorizeWith(cache, { grants: [token], trusted: [agentKey] })).toBe("unauthorized")
      expect(yield* authorizeWith(cache, { grants: [token], principal: agentKey })).toBe("forbidden")
      expect(yield* authorizeWith(cache, { grants: [token], request: ask("calendar.book") })).toBe("forbidden")
    }))

  it.effect("a token whose signature does not verify is refused every time and never held", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      // Signed by the agent, not by the principal its `iss` names.
      const forged = rawToken([rawBlock(rootPayload(base), AGENT)])
      for (let i = 0; i < 3; i++) expect(yield* authorizeWith(cache, { grants: [forged] })).toBe("unauthorized")
      expect(held(cache, forged)).toBe(false)
      // The same payload signed by its `iss` verifies: a different token, held on its own merits.
      const genuine = rawToken([rawBlock(rootPayload(base), PRINCIPAL)])
      for (let i = 0; i < 2; i++) expect(yield* authorizeWith(cache, { grants: [genuine] })).toBe("ok")
      expect(held(cache, genuine)).toBe(true)
      expect(yield* authorizeWith(cache, { grants: [forged] })).toBe("unauthorized")
    }))

  it.effect("a token refused as untrusted is never held", () =>
    Effect.gen(function* () {
      const cache = VerificationCache.make({ maxBytes: 1 << 20 })
      const token = issue(base)
      for (let i = 0; i < 3; i++) expect(yield* authorizeWith(cache, { grants: [token], trusted: [agentKey] })).toBe("unauthorized")
      expect(held(cache, token)).toBe(false)
    }))
})
