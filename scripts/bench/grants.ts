// `npm run bench -- grants [seconds]`: YEA grant verification per second for chains of 1, 2 and 4
// blocks, beside raw Ed25519 verifies per second (node:crypto) measured in the same run. A chain of
// n blocks costs n signature checks, so the ideal ratio to raw verifies is 1/n; the rest is
// decoding (strict JSON, canonical re-encoding, base64url) and caveat evaluation. One
// VerificationCache serves the run, as a YEA service runtime owns one (src/yea/service/runtime.ts):
// the keys recur (one principal, its agents), so each is decoded and point-checked once; the
// grants are the same tokens again, but no signature check is cached (YEA keeps none), so every
// block's signature is checked on every verification.
import { Effect, Either, Layer } from "effect"
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify } from "node:crypto"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { authorize } from "../../src/yea/authorize.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { caveatBlocks, decodeGrant, delegateGrant, issueRootGrant, verifyChain } from "../../src/yea/grant.js"
import { evaluateCaveats } from "../../src/yea/caveat-evaluation.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../src/kernel/verification-cache.js"
import { decimal } from "../../src/yea/measure.js"

const NOW = 1_790_000_000
const seed = (b: number) => new Uint8Array(32).fill(b)
const provide = <A, E>(s: Uint8Array, eff: Effect.Effect<A, E, Signer | RandomBytes>) =>
  Effect.runSync(eff.pipe(Effect.provide(Layer.merge(Signer.fromSeed(s), RandomBytes.seeded(new Uint8Array([1])))), Effect.withClock(fixedClock(NOW))))

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

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/**
 * `npm run bench -- grants [seconds-per-figure]`. The machine is shared and noisy, so each figure is
 * measured in 5 short rounds interleaved with the baseline, and the median ratio is reported.
 */
export async function run(args: ReadonlyArray<string>): Promise<void> {
  const seconds = Number(args[0] ?? 1) || 1
  const slice = seconds / 5
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
  const raw = () => {
    if (!nodeVerify(null, msg, pub, sig)) throw new Error("baseline verify failed")
  }
  const clock = fixedClock(NOW)
  const cache = VerificationCache.make({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })
  const raws: Array<number> = []
  console.log("grant verification (authorize: decode, chain, trusted root, holder, caveats) vs raw Ed25519 verify, same run")
  console.log("blocks | grants/s | raw verifies/s | ratio (median of 5) | ratio x blocks")
  const summary: Array<string> = []
  for (const n of [1, 2, 4]) {
    const { token, holder } = chain(n)
    const input = { grants: [token], proofKey: holder, trusted, request }
    const grant = () => {
      const r = Effect.runSync(Effect.either(authorize(input, noTotals).pipe(Effect.withClock(clock), Effect.provideService(VerificationCache, cache))))
      if (Either.isLeft(r)) throw new Error(`chain of ${n} refused: ${r.left.message}`)
    }
    const ratios: Array<number> = []
    const grants: Array<number> = []
    for (let round = 0; round < 5; round++) {
      const b = rate(slice, raw)
      const g = rate(slice, grant)
      raws.push(b)
      grants.push(g)
      ratios.push(g / b)
    }
    const ratio = median(ratios)
    summary.push(`b${n} ${(ratio * n).toFixed(2)}`)
    console.log(
      `${n}      | ${median(grants).toFixed(0).padStart(8)} | ${median(raws.slice(-5)).toFixed(0).padStart(8)} | ${ratio.toFixed(3)} | ${(ratio * n).toFixed(2)}`
    )
  }
  // Where the rest of the time goes, for one block (same run).
  const one = chain(1)
  const g = Either.getOrThrow(decodeGrant(one.token, cache.sync))
  const parts: Array<[string, () => void]> = [
    ["decodeGrant (base64url, strict JSON, canonical check, schemas, keys from the cache)", () => void decodeGrant(one.token, cache.sync)],
    ["decodeGrant, keys judged afresh (no cache)", () => void decodeGrant(one.token)],
    ["verifyChain (1 signature, links, root, holder)", () => void verifyChain(g, { trusted, proofKey: one.holder, cache: cache.sync })],
    ["evaluateCaveats (5 caveats)", () => void Effect.runSync(evaluateCaveats(caveatBlocks(g), { ...request, now: NOW }, noTotals))]
  ]
  const base = rate(slice, raw)
  for (const [name, f] of parts) console.log(`  ${name}: ${(rate(slice, f) / base).toFixed(2)}x the raw verify rate`)
  console.log("(ratio x blocks = 1.00 would mean signature checks are the whole cost)")
  console.log(`grants: ${summary.join(" ")} (grant verifies x blocks / raw Ed25519 verifies)`)
}
