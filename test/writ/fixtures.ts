// Deterministic Writ objects for tests: keys from fixed seeds, nonces from a seeded RandomBytes, all
// made through the issuing API (src/writ/issue.ts). `resign` re-signs a deliberately altered
// object with a seed, to build objects whose only fault is the one a test is about.
import { Effect, Layer } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { publicKeyFromSeed, sign } from "../../src/kernel/ed25519.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import type { Bounds } from "../../src/writ/bound.js"
import { delegate, holdChain, issueRoot, makeCall, signTally, type Issued } from "../../src/writ/issue.js"
import { signingInput, type ObjectType } from "../../src/writ/sign.js"

export const seed = (n: number): Uint8Array => new Uint8Array(32).fill(n)
export const keyOf = (n: number): string => didKeyFromPublicKey(publicKeyFromSeed(seed(n)))

export const A = 1 // root issuer
export const B = 2 // holder of the root, issuer of the child
export const C = 3 // holder of the child (the executor)
export const X = 9 // a stranger

/** Provide Signer for seed `n` and a seeded RandomBytes. */
export const as = (n: number, randomSeed = n) => <A, E>(eff: Effect.Effect<A, E, Signer | RandomBytes>): Effect.Effect<A, E> =>
  Effect.provide(eff, Layer.merge(Signer.fromSeed(seed(n)), RandomBytes.seeded(new Uint8Array([randomSeed, 7]))))

export const run = <A, E>(eff: Effect.Effect<A, E>): A => Effect.runSync(eff)

/** Re-sign an object with seed `n` (tests only: builds objects with one deliberate fault). */
export const resign = (typ: ObjectType, o: JsonObject, n: number): JsonObject => ({
  ...o,
  sig: encodeBase64url(sign(seed(n), signingInput(typ, 1, o)))
})

export const EXP = 1_800_000_000
export const rootBnd: Bounds = {
  act: { t: "prefix", v: "travel" },
  amount: { t: "max", v: 60000 },
  spend: { t: "total", v: 100000 },
  currency: { t: "set", v: ["USD", "EUR"] },
  date: { t: "window", v: [20261015, 20261019] },
  uses: { t: "count", v: 3 }
}

/** A -> B root and B -> C child narrowed to travel/charge. */
export const world = () => {
  const root: Issued = run(as(A)(issueRoot({ hld: keyOf(B), bnd: rootBnd, exp: EXP })))
  const heldByB = run(as(B)(holdChain(root.chain)))
  const child: Issued = run(
    as(B)(delegate(heldByB, { hld: keyOf(C), exp: EXP - 100, bnd: { act: { t: "prefix", v: "travel/charge" }, amount: { t: "max", v: 58900 } } }))
  )
  const args = { amount: 58900, spend: 58900, currency: "USD", date: 20261015 }
  const call = run(as(B)(makeCall({ chain: child.chain, op: "travel/charge", args })))
  return { root, heldByB, child, call, args }
}


/** C's tally for the world's call. */
export const tallyFor = (w: ReturnType<typeof world>, over: Partial<Parameters<typeof signTally>[0]> = {}) =>
  run(
    Effect.provide(
      signTally({
        call: w.call.call.id,
        writ: w.child.id,
        op: "travel/charge",
        acc: EXP - 1000,
        st: "ok",
        body: { charge: "ch_1" },
        used: { amount: 58900 },
        rev: { until: EXP + 1000 },
        ...over
      }),
      Signer.fromSeed(seed(C))
    )
  )
