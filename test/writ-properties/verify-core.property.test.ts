// The `verify_call` core (`verifyCallEither`, issue 30) against the step Effects an executor
// composes in section 7's order (checkCall, verifyCallSignatures, checkCallChain, checkCallExpiry,
// checkForward or checkStanding), on generated call bytes: a valid call under a chain of 1 to 4
// writs, then one mutation (a byte changed, a span cut out, the text truncated, `now` moved past
// `exp`, a standing op). Both must give the same verdict: the same call and leaf identities, or the
// same reason code at the same path. The Effect API (`verifyCall`) must agree with the core too.
import { Effect, Either, FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { call, canon, child, key, writ, type Obj } from "../support/writ-builders.js"
import { checkCall, checkCallChain, checkCallExpiry, checkForward, checkStanding, isStandingOp, verifyCall, verifyCallEither, verifyCallSignatures, verifyCallStepsEither } from "../../src/writ/call.js"
import { DEFAULT_ROOT_LIFETIME_SECONDS } from "../../src/writ/chain.js"
import { Received } from "../../src/writ/verify.js"
import { depth } from "../support/depth.js"

const RUNS = depth(300)
const KEYS = Array.from({ length: 5 }, (_, i) => key(`core-link${i}`))
const EXP = 1_900_000_000
const NOW = EXP - 3600
const BND: Obj = { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 500 }, currency: { t: "set", v: ["USD", "EUR"] } }

const chainOf = (n: number, seed: number): Array<Obj> => {
  const out: Array<Obj> = [writ(`core/${seed}/0`, { iss: KEYS[0], hld: KEYS[1].did, bnd: BND, exp: EXP })]
  for (let i = 1; i < n; i++) out.push(child(`core/${seed}/${i}`, out[i - 1], KEYS[i], KEYS[i + 1].did, { amount: { t: "max", v: 500 - i } }))
  return out
}

/** The verdict a verifier gives, as data: identities when it accepts, reason and path when not. */
type Verdict = { readonly ok: readonly [string, string] } | { readonly reason: string; readonly path: string | undefined }
const verdictOf = (r: Either.Either<{ readonly call: { readonly id: string }; readonly chain: ReadonlyArray<{ readonly id: string }> }, { readonly reason: string; readonly path?: string }>): Verdict =>
  Either.isRight(r) ? { ok: [r.right.call.id, r.right.chain[r.right.chain.length - 1].id] } : { reason: r.left.reason, path: r.left.path }

/** Section 7 steps 1 to 3 as the executor composed them before its admission called the core:
 * the step that failed (1, 2 or 3), its reason and path, or the identities. */
const composedOneToThree = (bytes: Uint8Array) =>
  Effect.gen(function* () {
    const c = yield* Effect.mapError(checkCall(new Received(bytes)), (error) => ({ step: 1, error }))
    const chain = yield* Effect.mapError(verifyCallSignatures(c), (error) => ({ step: 2, error }))
    yield* Effect.mapError(checkCallChain(chain), (error) => ({ step: 3, error }))
    return { call: c, chain }
  })
type StepVerdict = { readonly ok: readonly [string, string] } | { readonly step: number; readonly reason: string; readonly path: string | undefined }
const stepVerdictOf = (r: Either.Either<{ readonly call: { readonly id: string }; readonly chain: ReadonlyArray<{ readonly id: string }> }, { readonly step: number; readonly error: { readonly reason: string; readonly path?: string } }>): StepVerdict =>
  Either.isRight(r) ? { ok: [r.right.call.id, r.right.chain[r.right.chain.length - 1].id] } : { step: r.left.step, reason: r.left.error.reason, path: r.left.error.path }

/** Section 7 steps 1 to 4 and 8 composed from the separate step Effects. */
const composed = (bytes: Uint8Array, now: number) =>
  Effect.gen(function* () {
    const c = yield* checkCall(new Received(bytes))
    const chain = yield* verifyCallSignatures(c)
    yield* checkCallChain(chain)
    if (isStandingOp(c.value.op)) yield* checkStanding(c, chain)
    else {
      yield* checkCallExpiry(chain, now)
      yield* checkForward(c, chain)
    }
    return { call: c, chain }
  })

const mutation = fc.oneof(
  fc.constant({ kind: "none" as const }),
  fc.record({ kind: fc.constant("byte" as const), at: fc.nat(), to: fc.integer({ min: 0x20, max: 0x7e }) }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.constant({ kind: "expired" as const }),
  fc.constant({ kind: "standing" as const })
)

describe("verify_call core", () => {
  it.effect("gives the verdict of the composed step Effects and of verifyCall, on valid and mutated calls", () =>
    Effect.sync(() => {
      const seen = new Set<string>()
      const seenSteps = new Set<number>()
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 4 }), fc.nat({ max: 3 }), mutation, (n, seed, m) => {
          const chain = chainOf(n, seed)
          const op = m.kind === "standing" ? "sys/tallies" : "travel/book"
          const text = canon(call(`core/${n}/${seed}`, KEYS[n - 1], chain, op, { amount: 100, currency: "USD" }))
          const mutated = m.kind === "byte"
            ? text.slice(0, m.at % text.length) + String.fromCharCode(m.to) + text.slice((m.at % text.length) + 1)
            : m.kind === "cut"
            ? text.slice(0, m.at % text.length) + text.slice((m.at % text.length) + m.length)
            : m.kind === "truncate"
            ? text.slice(0, m.at % text.length)
            : text
          const bytes = Buffer.from(mutated, "utf8")
          const now = m.kind === "expired" ? EXP + 1 : NOW
          const core = verdictOf(verifyCallEither(new Received(bytes), { now, maxSeconds: DEFAULT_ROOT_LIFETIME_SECONDS, cache: undefined }))
          const steps = verdictOf(Effect.runSync(Effect.either(composed(bytes, now))))
          const api = verdictOf(Effect.runSync(Effect.either(verifyCall(new Received(bytes), { now }))))
          expect(core).toEqual(steps)
          expect(api).toEqual(core)
          // The executor's steps 1 to 3 core (admission.ts) against the step Effects it replaced.
          const oneToThree = verifyCallStepsEither(new Received(bytes), undefined)
          expect(stepVerdictOf(oneToThree)).toEqual(stepVerdictOf(Effect.runSync(Effect.either(composedOneToThree(bytes)))))
          if (Either.isLeft(oneToThree)) seenSteps.add(oneToThree.left.step)
          seen.add("ok" in core ? "ok" : core.reason)
        }),
        { numRuns: RUNS, seed: 30 }
      )
      // The generated inputs reach acceptances and several distinct refusals, or the property says little.
      expect(seen.has("ok")).toBe(true)
      expect(seen.size).toBeGreaterThanOrEqual(4)
      expect(seenSteps.has(1) && seenSteps.has(2)).toBe(true)
    }))
})
