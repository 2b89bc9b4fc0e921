// `npm run bench -- verify [--ms=N]`: Writ chain verification (section 4 as an operation:
// section 6.1 on every writ, links, depth) per second for chains of 1, 2, 4 and 8 writs, beside raw
// node:crypto Ed25519 verifies per second measured in the same run, as a ratio.
//
//   fresh   every verification sees writs it has never seen: the verified-signature cache in
//           the VerificationCache service (keyed by type, identity and signer; the identity is the hash of the
//           canonical object, `sig` included) always misses, so each writ costs a signature check.
//   reused  the same chain again and again: every signature is a cache hit, so what remains is
//           reading each writ (section 6.1 steps 1 to 5), its canonical form and SHA-256 identity,
//           and the links.
//
// Keys recur in both (as they do in practice); chains are built and signed before timing starts,
// from fixed seeds (scripts/conformance.ts), so every run measures the same bytes.
import { createPublicKey, verify as nodeVerify } from "node:crypto"
import { performance } from "node:perf_hooks"
import { Effect } from "effect"
import { child, hashOf, key, signingInput, writ, type Obj } from "../../test/support/writ-builders.js"
import { verifyChain } from "../../src/writ/chain.js"
import type { Json } from "../../src/kernel/json.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../src/kernel/verification-cache.js"

const LENGTHS = [1, 2, 4, 8] as const
const KEYS = Array.from({ length: 9 }, (_, i) => key(`bench-link${i}`))
const BND: Obj = {
  act: { t: "prefix", v: "travel" },
  amount: { t: "max", v: 60000 },
  currency: { t: "set", v: ["USD", "EUR"] },
  uses: { t: "count", v: 3 },
  date: { t: "window", v: [20270101, 20270131] },
  spend: { t: "total", v: 500000 }
}

/** Chain number `c` of length `n`: its own nonces, so no writ is shared with another chain. */
const chainOf = (n: number, c: number): Array<Obj> => {
  const out: Array<Obj> = [writ(`bench/${n}/${c}/0`, { iss: KEYS[0], hld: KEYS[1].did, bnd: BND, exp: 1_900_000_000 })]
  for (let i = 1; i < n; i++) out.push(child(`bench/${n}/${c}/${i}`, out[i - 1], KEYS[i], KEYS[i + 1].did, { amount: { t: "max", v: 60000 - i } }))
  return out
}

// One cache for the run, as an executor owns one (src/kernel/verification-cache.ts).
const cache = VerificationCache.make({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })

const verifyOnce = (chain: ReadonlyArray<Obj>): void => {
  Effect.runSync(Effect.provideService(verifyChain(chain as unknown as ReadonlyArray<Json>), VerificationCache, cache))
}

/** Operations per second of `op`, run until `ms` have passed or `limit` operations are done. */
const rate = (ms: number, op: (i: number) => void, limit = Number.POSITIVE_INFINITY): { perSecond: number; count: number } => {
  const start = performance.now()
  let count = 0
  let now = start
  while (count < limit) {
    op(count)
    count++
    if ((count & 7) === 0) {
      now = performance.now()
      if (now - start >= ms) break
    }
  }
  now = performance.now()
  return { perSecond: (count * 1000) / (now - start), count }
}

/** Raw node:crypto Ed25519 verifies of one writ's signing input, key object parsed once. */
const rawVerifies = (ms: number): number => {
  const w = chainOf(1, -1)[0]
  const { sig, ...rest } = w
  const msg = signingInput("writ", rest)
  const sigBytes = Buffer.from(String(sig), "base64url")
  const pub = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), KEYS[0].pub]), format: "der", type: "spki" })
  if (!nodeVerify(null, msg, pub, sigBytes)) throw new Error("baseline signature does not verify")
  return rate(ms, () => {
    nodeVerify(null, msg, pub, sigBytes)
  }).perSecond
}

const fmt = (x: number, w = 9): string => x.toFixed(x >= 100 ? 0 : 1).padStart(w)

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const msArg = args.find((a) => a.startsWith("--ms="))
  const roundsArg = args.find((a) => a.startsWith("--rounds="))
  const ms = msArg === undefined ? 300 : Number(msArg.slice(5))
  const rounds = roundsArg === undefined ? 3 : Number(roundsArg.slice(9))
  // Enough distinct chains that a fresh measurement never repeats one, in any round.
  const pool = (n: number) => Math.max(100, Math.ceil(1600 / n))
  console.log(`building chains (fixed seeds): ${rounds} rounds of ${LENGTHS.map((n) => `${pool(n)} x ${n}`).join(", ")} writs, plus one reused chain per length`)
  const fresh = new Map(LENGTHS.map((n) => [n, Array.from({ length: rounds }, (_, r) => Array.from({ length: pool(n) }, (_, c) => chainOf(n, r * 100_000 + c)))]))
  const reused = new Map(LENGTHS.map((n) => [n, chainOf(n, 1_000_000)]))

  // Warm up the JIT and the per-key caches (keys recur in practice) on chains not measured below.
  for (let c = 0; c < 50; c++) verifyOnce(chainOf(2, 2_000_000 + c))
  rawVerifies(Math.min(ms, 200))

  // Rounds interleave every measurement with the baseline; each figure is the best of its rounds,
  // the usual way to read a machine shared with other work.
  const best = { base: 0, fresh: new Map<number, number>(), freshCount: new Map<number, number>(), reused: new Map<number, number>() }
  for (let r = 0; r < rounds; r++) {
    best.base = Math.max(best.base, rawVerifies(ms))
    for (const n of LENGTHS) {
      const chains = fresh.get(n)![r]
      const f = rate(ms, (i) => verifyOnce(chains[i]), chains.length)
      if (f.perSecond > (best.fresh.get(n) ?? 0)) {
        best.fresh.set(n, f.perSecond)
        best.freshCount.set(n, f.count)
      }
      const r0 = reused.get(n)!
      verifyOnce(r0) // fills the cache for this chain
      best.reused.set(n, Math.max(best.reused.get(n) ?? 0, rate(ms, () => verifyOnce(r0)).perSecond))
    }
    best.base = Math.max(best.base, rawVerifies(ms))
  }
  const base = best.base

  console.log(`raw node:crypto Ed25519 verify: ${fmt(base)} /s (best of ${rounds * 2}; one writ's signing input, key parsed once)`)
  console.log(`chain  fresh chains/s  fresh writs/s  writs/s : raw   reused chains/s  reused writs/s  reused : fresh`)
  for (const n of LENGTHS) {
    const f = best.fresh.get(n)!
    const r = best.reused.get(n)!
    console.log(
      `${String(n).padStart(5)}  ${fmt(f, 14)}  ${fmt(f * n, 13)}  ${((f * n) / base).toFixed(3).padStart(13)}   ${fmt(r, 15)}  ${fmt(r * n, 14)}  ${(r / f).toFixed(2).padStart(13)}x` +
        (best.freshCount.get(n)! < 16 ? "  (few samples)" : "")
    )
  }
  console.log(`best of ${rounds} rounds of ${ms} ms each; writs/s : raw = share of raw verify speed reached per writ on a fresh chain (1.0 = the signature check is the only cost)`)
}
