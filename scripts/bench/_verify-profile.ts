// `npx tsx scripts/bench/_verify-profile.ts MODE DEPTH SECONDS [core]`: one verify series alone (MODE
// fresh or reused, chains of DEPTH writs), for a CPU profile (`node --cpu-prof`): what bounds
// `verify` where its ratio misses the target (docs/benchmarks.md).
import { Effect, Either } from "effect"
import { call, canon, child, key, writ, type Obj } from "../../test/support/writ-builders.js"
import { verifyCall, verifyCallEither } from "../../src/writ/call.js"
import { Received } from "../../src/writ/verify.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../src/kernel/verification-cache.js"

const [mode = "fresh", depthArg = "1", secondsArg = "5", via = "effect"] = process.argv.slice(2)
const n = Number(depthArg)
const KEYS = Array.from({ length: 9 }, (_, i) => key(`bench-link${i}`))
const EXP = 1_900_000_000
const NOW = EXP - 7200
const BND: Obj = { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 }, currency: { t: "set", v: ["USD", "EUR"] } }
const chainOf = (c: number): Array<Obj> => {
  const out: Array<Obj> = [writ(`prof/${n}/${c}/0`, { iss: KEYS[0], hld: KEYS[1].did, bnd: BND, exp: EXP })]
  for (let i = 1; i < n; i++) out.push(child(`prof/${n}/${c}/${i}`, out[i - 1], KEYS[i], KEYS[i + 1].did, { amount: { t: "max", v: 60000 - i } }))
  return out
}
const bytesOf = (chain: ReadonlyArray<Obj>, label: string) =>
  Buffer.from(canon(call(label, KEYS[chain.length - 1], chain, "travel/book", { amount: 100, currency: "USD" })), "utf8")
const cache = VerificationCache.make({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })
// VIA `core`: the sans-IO core as code; otherwise the Effect API, as verify.ts measures both.
const once = via === "core"
  ? (b: Uint8Array) => {
    if (Either.isLeft(verifyCallEither(new Received(b), { now: NOW, maxSeconds: 86_400, cache: cache.sync }))) throw new Error("refused")
  }
  : (b: Uint8Array) => Effect.runSync(Effect.provideService(verifyCall(new Received(b), { now: NOW }), VerificationCache, cache))
const shared = chainOf(-1)
const pool = Array.from({ length: 2000 }, (_, c) => bytesOf(mode === "fresh" ? chainOf(c) : shared, `prof/${c}`))
const t0 = performance.now()
let count = 0
while (performance.now() - t0 < Number(secondsArg) * 1000) once(pool[count++ % pool.length])
console.log(`${mode} d${n}: ${((count * 1000) / (performance.now() - t0)).toFixed(0)} calls/s (pool ${pool.length}; fresh repeats after it)`)
