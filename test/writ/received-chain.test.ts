// A chain as received is verified once and then held by the VerificationCache
// under a hash of its exact bytes. A hit may only repeat an acceptance of the very same bytes: any
// changed byte misses and is refused exactly as a verifier without the cache refuses it, with the
// same reason and path. The held chains stay within the cache's byte bound, and what the bound
// counts is what the heap keeps (never the request they came in).
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, Option } from "effect"
import fc from "fast-check"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { VerificationCache, type VerificationCacheShape } from "../../src/kernel/verification-cache.js"
import { checkCall, verifyCall } from "../../src/writ/call.js"
import { HELD_CHAIN_BYTES_PER_UNIT } from "../../src/writ/chain.js"
import { WritError } from "../../src/writ/reason.js"
import { Received } from "../../src/writ/verify.js"
import { call, canon, child, key, type Obj, writ } from "../support/writ-builders.js"

const KEYS = Array.from({ length: 5 }, (_, i) => key(`held-chain-${i}`))
const EXP = 1_900_000_000
const BND: Obj = { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 }, uses: { t: "count", v: 3 } }

const chainOf = (n: number, label: string): Array<Obj> => {
  const out: Array<Obj> = [writ(`${label}/0`, { iss: KEYS[0], hld: KEYS[1].did, bnd: BND, exp: EXP })]
  for (let i = 1; i < n; i++) out.push(child(`${label}/${i}`, out[i - 1], KEYS[i], KEYS[i + 1].did, { amount: { t: "max", v: 60000 - i } }))
  return out
}
const callText = (chain: ReadonlyArray<Obj>, label: string, args: Obj = { amount: 10 }): string =>
  canon(call(label, KEYS[chain.length - 1], chain, "travel/book", args))

/** A cache that counts the held chains it gave back. */
const counting = (maxBytes: number): { readonly cache: VerificationCacheShape; readonly hits: () => number } => {
  const inner = VerificationCache.make({ maxBytes })
  let hits = 0
  return {
    cache: {
      ...inner,
      // The verifier reads held chains through the plain form: count there.
      sync: {
        ...inner.sync,
        verified: (k) => {
          const v = inner.sync.verified(k)
          if (Option.isSome(v) && k.startsWith("chain ")) hits++
          return v
        }
      }
    },
    hits: () => hits
  }
}

/** `accept`, or the reason and path of the WritError; never a defect. */
const outcome = (bytes: Uint8Array, cache: VerificationCacheShape | undefined): string => {
  const eff = verifyCall(new Received(bytes), { now: EXP - 7200 })
  const exit = Effect.runSyncExit(cache === undefined ? eff : Effect.provideService(eff, VerificationCache, cache))
  if (Exit.isSuccess(exit)) return "accept"
  const f = Cause.failureOption(exit.cause)
  if (Option.isNone(f) || !(f.value instanceof WritError)) throw new Error(`defect: ${Cause.pretty(exit.cause)}`)
  return `${f.value.reason} ${f.value.path ?? ""}`
}

const bytesOf = (s: string) => Buffer.from(s, "utf8")

describe("a chain as received, held by the VerificationCache", () => {
  const chain = chainOf(3, "held/a")
  const first = bytesOf(callText(chain, "held/a/call0"))
  const chainStart = first.indexOf('"chain":') + '"chain":'.length
  const chainEnd = first.indexOf(',"from":')

  it("reads received bytes once: a binding that read them to dispatch and the verifier share the reading", () => {
    const received = new Received(first)
    const reading = received.reading
    expect(received.reading).toBe(reading)
    const checked = Effect.runSync(checkCall(received))
    expect(Either.isRight(reading) && checked.reading === reading.right).toBe(true)
  })

  it("is held once seen twice, and then given back for the same bytes under a new call", () => {
    const { cache, hits } = counting(1 << 20)
    expect(outcome(first, cache)).toBe("accept")
    expect(outcome(bytesOf(callText(chain, "held/a/call1")), cache)).toBe("accept")
    expect(hits()).toBe(0)
    for (let i = 2; i < 6; i++) expect(outcome(bytesOf(callText(chain, `held/a/call${i}`)), cache)).toBe("accept")
    expect(hits()).toBe(4)
    // A chain seen once is not held.
    const other = chainOf(2, "held/once")
    expect(outcome(bytesOf(callText(other, "held/once/call0")), cache)).toBe("accept")
    expect(outcome(bytesOf(callText(other, "held/once/call1")), cache)).toBe("accept")
    expect(hits()).toBe(4)
  })

  it("takes a held chain by the hash of its text while the call is read: its writs are not read again", () => {
    const cache = VerificationCache.make({ maxBytes: 1 << 20 })
    const verify = (r: Received) => Effect.runSync(Effect.provideService(verifyCall(r, { now: EXP - 7200 }), VerificationCache, cache))
    // Seen once, then twice: held from the second sighting on.
    const seen = [new Received(bytesOf(callText(chain, "held/take/0"))), new Received(bytesOf(callText(chain, "held/take/1")))]
    const early = seen.map(verify)
    const later = [new Received(bytesOf(callText(chain, "held/take/2"))), new Received(bytesOf(callText(chain, "held/take/3")))]
    const verified = later.map(verify)
    // The calls read before the hold each have their own chain values; the later ones share the
    // held chain's array and writs, taken as the call was read.
    expect(early[0].call.value.chain).not.toBe(early[1].call.value.chain)
    expect(verified[0].call.value.chain).toBe(verified[1].call.value.chain)
    expect(verified[0].chain).toBe(verified[1].chain)
    const reading = Either.getOrThrow(later[0].reading)
    expect(reading.spans.get(verified[0].call.value.chain)?.canonical).toBe(true)
    // What the taken chain checks to is what a verifier without the cache finds.
    const plain = Effect.runSync(verifyCall(new Received(bytesOf(callText(chain, "held/take/2"))), { now: EXP - 7200 }))
    expect(verified[0].chain.map((w) => [w.id, w.canonical, w.withoutSig])).toEqual(plain.chain.map((w) => [w.id, w.canonical, w.withoutSig]))
    expect(verified[0].call.id).toBe(plain.call.id)
    expect(verified[0].call.canonical).toBe(plain.call.canonical)
    expect(verified[0].call.withoutSig).toBe(plain.call.withoutSig)
    // A reading made before the verifier (a binding dispatching) is kept, and the chain is then
    // found by the hash of its span, as before.
    const dispatched = new Received(bytesOf(callText(chain, "held/take/4")))
    const first = dispatched.reading
    expect(verify(dispatched).chain).toBe(verified[0].chain)
    expect(dispatched.reading).toBe(first)
  })

  it("refuses a chain with a tampered byte with its own reason, as a verifier without the cache does", () => {
    const { cache } = counting(1 << 20)
    for (let i = 0; i < 3; i++) expect(outcome(bytesOf(callText(chain, `held/t/call${i}`)), cache)).toBe("accept")
    const base = bytesOf(callText(chain, "held/t/target"))
    const start = base.indexOf('"chain":') + '"chain":'.length
    const end = base.indexOf(',"from":')
    // A changed signature byte in the root: bad_signature at chain[0].sig, held chain or not.
    const sigAt = base.indexOf('"sig":"', start) + 10
    const tampered = Buffer.from(base)
    tampered[sigAt] = tampered[sigAt] === 0x41 ? 0x42 : 0x41
    expect(outcome(tampered, cache)).toBe("bad_signature chain[0].sig")
    // Any byte of the chain, changed to any of a few telling characters.
    fc.assert(
      fc.property(fc.integer({ min: start, max: end - 1 }), fc.constantFrom(..."{}[]\",:0 1aA-_\\z"), (at, ch) => {
        const b = Buffer.from(base)
        if (b[at] === ch.charCodeAt(0)) return
        b[at] = ch.charCodeAt(0)
        expect(outcome(b, cache)).toBe(outcome(b, undefined))
        expect(outcome(b, cache)).not.toBe("accept")
      }),
      { numRuns: 150 }
    )
    expect(chainEnd).toBeGreaterThan(chainStart)
  })

  it("stays within its byte bound while many chains are held, evicting the least recently used", () => {
    const maxBytes = 96 * 1024
    const { cache, hits } = counting(maxBytes)
    let most = 0
    const chains = Array.from({ length: 24 }, (_, c) => chainOf(2, `held/bound/${c}`))
    for (let c = 0; c < chains.length; c++) {
      for (let i = 0; i < 2; i++) {
        expect(outcome(bytesOf(callText(chains[c], `held/bound/${c}/call${i}`)), cache)).toBe("accept")
        most = Math.max(most, Effect.runSync(cache.stats).bytes)
      }
    }
    expect(most).toBeLessThanOrEqual(maxBytes)
    // The latest chain is held; the first was evicted to make room, so it is verified afresh.
    const before = hits()
    expect(outcome(bytesOf(callText(chains[23], "held/bound/23/again")), cache)).toBe("accept")
    expect(hits()).toBe(before + 1)
    expect(outcome(bytesOf(callText(chains[0], "held/bound/0/again")), cache)).toBe("accept")
    expect(hits()).toBe(before + 1)
  })

  it("counts at least what the heap keeps for a held chain, and keeps nothing of the request", () => {
    setFlagsFromString("--expose-gc")
    const gc = runInNewContext("gc") as () => void
    const heap = () => {
      gc()
      gc()
      return process.memoryUsage().heapUsed
    }
    const cache = VerificationCache.make({ maxBytes: 1 << 30 })
    const run = (s: string) => Effect.runSync(Effect.provideService(verifyCall(new Received(s), { now: EXP - 7200 }), VerificationCache, cache))
    // Calls of 40 kB around chains of under 2 kB: holding a slice of a call would keep 40 kB.
    const padding = { amount: 10, note: "n".repeat(40_000) }
    const chains = Array.from({ length: 40 }, (_, c) => chainOf(3, `held/heap/${c}`))
    // Keys and JIT first, so that what is measured is the held chains.
    run(callText(chainOf(3, "held/heap/warm"), "held/heap/warm/0", padding))
    const before = heap()
    const accountedBefore = Effect.runSync(cache.stats).bytes
    // Each call's text is made, verified and dropped here: nothing else keeps it.
    for (let c = 0; c < chains.length; c++) for (let i = 0; i < 2; i++) run(callText(chains[c], `held/heap/${c}/${i}`, padding))
    const kept = heap() - before
    const accounted = Effect.runSync(cache.stats).bytes - accountedBefore
    const units = chains.reduce((n, ch) => n + canon(ch).length, 0)
    expect(accounted).toBeGreaterThanOrEqual(HELD_CHAIN_BYTES_PER_UNIT * units)
    // Holding the calls would keep over 40 x 80 kB; the held chains are within what is counted.
    expect(kept).toBeLessThanOrEqual(accounted)
    console.log(`held chains: ${units} units of text, ${accounted} bytes counted, ${kept} bytes kept by the heap`)
  })
})
