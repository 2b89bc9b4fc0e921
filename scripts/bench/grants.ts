// `npm run bench -- grants [seconds]`: YEA grant verification per second for chains of 1, 2 and 4
// blocks, beside raw Ed25519 verifies per second (node:crypto) measured in the same run. A chain of
// n blocks costs n signature checks, so the ideal ratio to raw verifies is 1/n; the rest is
// decoding (strict JSON, canonical re-encoding, base64url) and caveat evaluation.
import { Effect, Either, Layer } from "effect"
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify } from "node:crypto"
import { Random, Signer } from "../../src/kernel/services.js"
import { authorize } from "../../src/yea/authorize.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { caveatBlocks, decodeGrant, delegateGrant, issueRootGrant, verifyChain } from "../../src/yea/grant.js"
import { evaluateCaveats } from "../../src/yea/caveat.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { decimal } from "../../src/yea/measure.js"

const NOW = 1_790_000_000
const seed = (b: number) => new Uint8Array(32).fill(b)
const provide = <A, E>(s: Uint8Array, eff: Effect.Effect<A, E, Signer | Random>) =>
  Effect.runSync(eff.pipe(Effect.provide(Layer.merge(Signer.fromSeed(s), Random.seeded(new Uint8Array([1])))), Effect.withClock(fixedClock(NOW))))

const rootCaveats = [
  { svc: ["shop.example"] },
  { can: ["shop.*"] },
  { exp: NOW + 3600 },
  { each: { of: "spend", max: 3000, scale: 2, unit: "USD" } },
  { risk: "medium" }
]

/** A chain of `n` blocks: principal → key 2 → key 3 → ..., each delegation adding one caveat. */
const chain = (n: number) => {
  let token = provide(seed(1), issueRootGrant({ sub: keyFromSeed(seed(2)), caveats: rootCaveats, nonce: "bench" }))
  for (let i = 1; i < n; i++) {
    token = provide(seed(i + 1), delegateGrant(token, { sub: keyFromSeed(seed(i + 2)), caveats: [{ verbs: ["ASK", "COMMIT"] }] }))
  }
  return { token, holder: keyFromSeed(seed(n + 1)) }
}

/** Calls `f` for about `seconds`, returns calls per second. */
const rate = (seconds: number, f: () => void): number => {
  for (let i = 0; i < 200; i++) f() // warm-up
  let calls = 0
  const start = performance.now()
  const until = start + seconds * 1000
  let now = start
  while (now < until) {
    for (let i = 0; i < 50; i++) f()
    calls += 50
    now = performance.now()
  }
  return calls / ((now - start) / 1000)
}

export async function run(args: ReadonlyArray<string>): Promise<void> {
  const seconds = Number(args[0] ?? 1) || 1
  const trusted = [keyFromSeed(seed(1))]
  const request = {
    service: "shop.example",
    verb: "COMMIT" as const,
    capability: "shop.order",
    proposal: { hash: "H", risk: "low", uses: { spend: { amount: 2000, scale: 2, unit: "USD" } } }
  }
  const noTotals = () => Effect.succeed(decimal(0))

  // Baseline: raw Ed25519 verify through node:crypto with a prepared KeyObject.
  const priv = createPrivateKey({ key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed(9)]), format: "der", type: "pkcs8" })
  const pub = createPublicKey(priv)
  const msg = Buffer.from("x".repeat(300))
  const sig = nodeSign(null, msg, priv)
  const raw = rate(seconds, () => {
    if (!nodeVerify(null, msg, pub, sig)) throw new Error("baseline verify failed")
  })
  console.log(`raw Ed25519 verify (node:crypto): ${raw.toFixed(0)}/s`)
  console.log("blocks | full authorize (Effect)/s | ratio to raw | x n | decodeGrant+verifyChain+evaluateCaveats (no authorize wrapper)/s | ratio to raw")
  for (const n of [1, 2, 4]) {
    const { token, holder } = chain(n)
    const input = { grants: [token], proofKey: holder, trusted, request }
    const clock = fixedClock(NOW)
    const full = rate(seconds, () => {
      const r = Effect.runSync(Effect.either(authorize(input, noTotals).pipe(Effect.withClock(clock))))
      if (Either.isLeft(r)) throw new Error(`chain of ${n} refused: ${r.left.message}`)
    })
    const bare = rate(seconds, () => {
      const g = decodeGrant(token)
      if (Either.isLeft(g) || Either.isLeft(verifyChain(g.right, { trusted, proofKey: holder }))) throw new Error("refused")
      const e = Effect.runSync(evaluateCaveats(caveatBlocks(g.right), { ...request, now: NOW }, noTotals))
      if (e.failures.length > 0) throw new Error("caveat refused")
    })
    console.log(
      `${n}      | ${full.toFixed(0).padStart(8)} | ${(full / raw).toFixed(3)} | ${((full / raw) * n).toFixed(2)} | ${bare.toFixed(0).padStart(8)} | ${(bare / raw).toFixed(3)}`
    )
  }
  console.log("(x n = ratio × blocks: 1.00 would mean signature checks are the whole cost)")
}
