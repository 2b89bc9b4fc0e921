// Mandate's side of `npm run bench -- peers`: a Writ v0.1 chain on the wire as one JSON array of
// writs (the `chain` member of a call, section 5), verified as the executor verifies a forward
// call's chain (section 7 steps 2 to 4): the bytes read strictly once (section 1.1, as the HTTP
// binding reads a call), every writ through section 6.1 (shape, canonical bytes, identity,
// signature) off that one reading (its canonical bytes and signing input are slices of the
// received text, as for a call's chain), the links and `depth` of section 4, then every `exp`
// against now and section 12's root lifetime. `verifyChain` takes the received bytes
// (`Received`), under one VerificationCache, as an executor owns one: fresh chains are never held
// (a chain is held once seen twice), so every signature is checked.
import { Cause, Effect, Exit, Option } from "effect"
import { canon, child, type Obj, writ } from "../../test/support/writ-builders.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../src/kernel/index.js"
import { checkExpiry, Received, verifyChain } from "../../src/writ/index.js"
import { AMOUNT, amountOf, ascii, KEYS, offsetIn, NOW, type Peer, ROOT_EXP } from "./_peers-common.js"

/** The six bound types of section 3, as scripts/bench/verify.ts grants them; `amount` narrows by
 * one at each link, the rest are copied (and so checked as narrowed, section 4 step 4). */
const BND: Obj = {
  act: { t: "prefix", v: "travel" },
  amount: { t: "max", v: AMOUNT },
  currency: { t: "set", v: ["USD", "EUR"] },
  uses: { t: "count", v: 3 },
  date: { t: "window", v: [20270101, 20270131] },
  spend: { t: "total", v: 500000 }
}

const chainOf = (n: number, c: number, leafAmount?: number): Array<Obj> => {
  const bnd = { ...BND, amount: { t: "max", v: amountOf(0, n, leafAmount) } }
  const out: Array<Obj> = [writ(`peers/${n}/${c}/0`, { iss: KEYS[0], hld: KEYS[1].did, bnd, exp: ROOT_EXP })]
  // `child` narrows exp by 600 s per link, as every peer's chain does (EXP_STEP).
  for (let i = 1; i < n; i++) out.push(child(`peers/${n}/${c}/${i}`, out[i - 1], KEYS[i], KEYS[i + 1].did, { amount: { t: "max", v: amountOf(i, n, leafAmount) } }))
  return out
}

// One cache for the run, as an executor owns one (src/kernel/verification-cache.ts): fresh chains
// always miss its signature entries; the did:key entries hit, since keys recur.
const cache = VerificationCache.make({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })

// The strict reading the executor applies to a received body (section 1.1; 64 levels, integers),
// made once by `Received`.
const program = (bytes: Uint8Array) =>
  Effect.flatMap(verifyChain(new Received(bytes)), (writs) => checkExpiry(writs, NOW))

export const mandate: Peer = {
  name: "mandate",
  sync: true,
  build: async (n, c, leafAmount) => {
    const chain = chainOf(n, c, leafAmount)
    const bytes = ascii(`[${chain.map(canon).join(",")}]`)
    const leaf = chain[n - 1]
    // The leaf is the last element, so the last occurrence of its sig and nnc are its own.
    return { bytes, sigAt: offsetIn(bytes, ascii(String(leaf.sig)), 43), payloadAt: offsetIn(bytes, ascii(String(leaf.nnc)), 11) }
  },
  verify: (bytes) => {
    const exit = Effect.runSyncExit(Effect.provideService(program(bytes), VerificationCache, cache))
    if (Exit.isFailure(exit)) {
      const e = Cause.failureOption(exit.cause)
      throw new Error(Option.isSome(e) ? `${e.value.reason}: ${e.value.message}` : Cause.pretty(exit.cause))
    }
  }
}
