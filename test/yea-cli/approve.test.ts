// The approve library (src/yea/approve.ts; SPEC §6.6, docs/cli.md `approve`): what is checked
// before a principal signs a `pc1.` consent code, one test per refusal, and what is signed.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { reviewConsentCode, signConsentCode } from "../../src/yea/approve.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { decodeGrant } from "../../src/yea/grant.js"
import { AGENT, MALLORY, NOW, PRINCIPAL, agentKey, malloryKey, subagentKey } from "../yea/_helpers.js"
import { LATER, codeOf, proposalOf } from "./codes.js"

const at = <A, E, R>(eff: Effect.Effect<A, E, R>, now = NOW) => eff.pipe(Effect.withClock(fixedClock(now)))
const reasonOf = <R>(eff: Effect.Effect<unknown, { readonly reason: string }, R>, now = NOW) =>
  at(Effect.flip(eff), now).pipe(Effect.map((e) => e.reason))
const signer = (seed: Uint8Array) => Layer.merge(Signer.fromSeed(seed), RandomBytes.seeded(new Uint8Array([9])))

describe("approve: review of a pc1. code", () => {
  it.effect("shows every hashed field and signs exactly the five consent caveats", () =>
    Effect.gen(function* () {
      const review = yield* at(reviewConsentCode(codeOf(), { localAgent: agentKey }))
      const text = review.lines.join("\n")
      for (const s of ["shop.example", "Order 4 meals", "+ create order — 4× Pad Thai", "spend 43.95 USD", "risk:       low", "within 2h", review.proposal.hash]) {
        expect(text).toContain(s)
      }
      const token = yield* at(signConsentCode(review)).pipe(Effect.provide(signer(PRINCIPAL)))
      const g = Either.getOrThrow(decodeGrant(token))
      expect(g.holder).toBe(agentKey)
      expect(g.root.caveats).toEqual([{ svc: ["shop.example"] }, { verbs: ["COMMIT"] }, { can: ["shop.order"] }, { only: review.proposal.hash }, { exp: LATER }])
    }))

  it.effect("renders control characters from the service visibly (hardened Lens)", () =>
    Effect.gen(function* () {
      const review = yield* at(reviewConsentCode(codeOf({ proposal: proposalOf({ summary: "ok\u202eevil\u0007" }) }), { localAgent: agentKey }))
      expect(review.lines.join("\n")).not.toMatch(/[\u202e\u0007]/)
    }))

  it.effect("malformed code: invalid_params", () =>
    Effect.gen(function* () {
      expect(yield* reasonOf(reviewConsentCode("pc1.%%%"))).toBe("invalid_params")
      expect(yield* reasonOf(reviewConsentCode("pg1.abc"))).toBe("invalid_params")
    }))

  it.effect("a code without its proposal (a summary only): invalid_params", () =>
    Effect.gen(function* () {
      expect(yield* reasonOf(reviewConsentCode(codeOf({ detail: { summary: "trust me" } }), { localAgent: agentKey }))).toBe("invalid_params")
    }))

  it.effect("a proposal that does not match its hash: conflict", () =>
    Effect.gen(function* () {
      const p = proposalOf()
      const tampered = { ...p, effects: [{ op: "create", target: "order", detail: "400× Pad Thai" }] }
      expect(yield* reasonOf(reviewConsentCode(codeOf({ detail: tampered }), { localAgent: agentKey }))).toBe("conflict")
      // A consent request whose hash names another proposal.
      expect(yield* reasonOf(reviewConsentCode(codeOf({ consent: { hash: proposalOf({ id: "p_other" }).hash } }), { localAgent: agentKey }))).toBe("conflict")
    }))

  it.effect("a consent request describing another proposal (friendly summary): conflict", () =>
    Effect.gen(function* () {
      expect(yield* reasonOf(reviewConsentCode(codeOf({ consent: { summary: "Order 1 meal" } }), { localAgent: agentKey }))).toBe("conflict")
      expect(yield* reasonOf(reviewConsentCode(codeOf({ consent: { capability: "shop.refund" } }), { localAgent: agentKey }))).toBe("conflict")
    }))

  it.effect("an expired proposal: expired", () =>
    Effect.gen(function* () {
      expect(yield* reasonOf(reviewConsentCode(codeOf(), { localAgent: agentKey }), LATER)).toBe("expired")
    }))

  it.effect("a code for another agent key needs --to; a bad --to is invalid_params", () =>
    Effect.gen(function* () {
      expect(yield* reasonOf(reviewConsentCode(codeOf({ agent: malloryKey }), { localAgent: agentKey }))).toBe("invalid_params")
      expect(yield* reasonOf(reviewConsentCode(codeOf(), {}))).toBe("invalid_params")
      expect(yield* reasonOf(reviewConsentCode(codeOf(), { to: "ed25519:nope" }))).toBe("invalid_params")
      const review = yield* at(reviewConsentCode(codeOf({ agent: malloryKey }), { localAgent: agentKey, to: subagentKey }))
      expect(review.agent).toBe(subagentKey)
    }))

  it.effect("signing with a key other than the principal asked: unauthorized", () =>
    Effect.gen(function* () {
      const review = yield* at(reviewConsentCode(codeOf(), { localAgent: agentKey }))
      expect(yield* reasonOf(signConsentCode(review).pipe(Effect.provide(signer(MALLORY))))).toBe("unauthorized")
      expect(yield* reasonOf(signConsentCode(review).pipe(Effect.provide(signer(AGENT))))).toBe("unauthorized")
    }))
})
