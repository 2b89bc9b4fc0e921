// `npm run bench -- peers [--ms=N] [--rounds=N]`: delegation chains of depth 1, 2, 4 and 8 (n links,
// n signatures, in every implementation) verified by Mandate and by its peers, side by side in one
// process, beside raw node:crypto Ed25519 verifies measured in the same rounds.
//
// What each verification checks (the chains are alike: keys 0..8 from the same seeds, link i
// issued by key i to key i + 1, exp narrowed 600 s per link, an amount narrowed by one per link):
//   mandate       Writ v0.1 as the executor checks a forward call's chain (section 7 steps 2-4):
//                 the bytes read strictly (section 1.1), every writ through section 6.1 (shape,
//                 canonical bytes, SHA-256 identity, signature), section 4's links (iss = parent
//                 hld, prv = parent identity, exp and all six bounds narrowed, depth), every exp
//                 against the fixed now and section 12's 24-hour root lifetime (_peers-mandate.ts).
//   biscuit-wasm  every block's signature and the key chain, then the authorizer runs every
//                 block's datalog checks (operation, amount, currency, date and time bounds of the
//                 authority block; amount and time in each attenuation block) against the request's
//                 facts (the fixed now among them) under an allow policy (_peers-biscuit.ts).
//   ucanto        every delegation's signature, exp and nbf (against the wall clock, which the
//                 validator reads itself), principal alignment, and attenuation of the capability
//                 (same resource, amount not widened) down to the root's self-issue (_peers-ucanto.ts).
//   jose-jws      the plain baseline: each link's JWS signature under the key the previous link
//                 named (the root key trusted), alg pinned, exp against the fixed now, exp and one
//                 amount not growing; no bounds language at all (_peers-jws.ts).
// test/bench/peers.test.ts holds these claims: a leaf that widens the amount is refused by Writ,
// ucanto and JWS (biscuit's blocks can only add checks, so it cannot be widened), and biscuit
// refuses a leaf whose checks the request fails. Keys come from fixed seeds everywhere, except
// the per-block keys biscuit-wasm draws itself when a block is appended (its API takes none).
// jose 6 verifies through WebCrypto, which node runs on libuv's threadpool: a verification in
// flight leaves the main thread idle, and on a loaded machine that second thread wins the JWS
// chain more CPU than the main thread's own verifies get, so its ratio to raw can pass 1. The
// raw WebCrypto rate (one in flight) is measured in the same rounds and printed beside raw.
// None checks revocation (Mandate's executor does that separately, as would the peers' servers).
// The JWS baseline counts as a peer: "best-peer" at a depth is the fastest of biscuit-wasm, ucanto
// and jose-jws there.
//
// Fresh: every timed verification is of a token built before timing and never verified before
// in this process (a pool per round, implementation and depth, sized from a calibration so it
// outlasts the round). Signatures therefore always miss Mandate's VerificationCache; decoded keys
// hit it, since keys recur; the JWS baseline gets the same (imported keys kept by `x`). ucanto's
// only cache (decoded UCANs, a WeakMap keyed by the block's byte array) never hits: each token is
// extracted from its bytes anew. biscuit-wasm keeps nothing between tokens.
//
// Rounds interleave everything (every implementation at every depth, the order rotated each
// round, the raw baseline at the start and end of each round); each figure is the best of its
// rounds. Before any timing each implementation must accept a valid chain and refuse it with one
// byte flipped in the leaf's signature and, separately, in the leaf's signed payload (its
// nonce); the bench throws (exit status non-zero) if any accepts a tampered token.
import { createPublicKey, verify as nodeVerify } from "node:crypto"
import { Effect } from "effect"
import { signingInput, writ } from "../../test/support/writ-builders.js"
import { makeBiscuit } from "./_peers-biscuit.js"
import { DEPTHS, flip, KEYS, type Peer, rateAsync, rateSync, type Token } from "./_peers-common.js"
import { jws } from "./_peers-jws.js"
import { mandate } from "./_peers-mandate.js"
import { makeUcanto } from "./_peers-ucanto.js"

/** Raw node:crypto Ed25519 verifies of one writ's signing input, key object parsed once. */
const rawVerifies = (ms: number): number => {
  const w = writ("bench-peers-raw", { iss: KEYS[0], hld: KEYS[1].did })
  const { sig, ...rest } = w
  const msg = signingInput("writ", rest)
  const sigBytes = Buffer.from(String(sig), "base64url")
  const pub = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), KEYS[0].pub]), format: "der", type: "spki" })
  if (!nodeVerify(null, msg, pub, sigBytes)) throw new Error("baseline signature does not verify")
  return rateSync(ms, () => {
    nodeVerify(null, msg, pub, sigBytes)
  }).perSecond
}

/** The same verify through WebCrypto (`crypto.subtle`, what jose 6 uses on Node), one in flight:
 * node runs it on libuv's threadpool, so on a loaded machine it can outpace the main thread's
 * own verifies. Printed beside the baseline, so the JWS column can be read. */
const rawWebCryptoVerifies = async (ms: number): Promise<number> => {
  const w = writ("bench-peers-raw", { iss: KEYS[0], hld: KEYS[1].did })
  const { sig, ...rest } = w
  const msg = new Uint8Array(signingInput("writ", rest))
  const sigBytes = new Uint8Array(Buffer.from(String(sig), "base64url"))
  const pub = await crypto.subtle.importKey("raw", new Uint8Array(KEYS[0].pub), { name: "Ed25519" }, false, ["verify"])
  if (!(await crypto.subtle.verify({ name: "Ed25519" }, pub, sigBytes, msg))) throw new Error("baseline signature does not verify")
  return (
    await rateAsync(ms, async () => {
      await crypto.subtle.verify({ name: "Ed25519" }, pub, sigBytes, msg)
    })
  ).perSecond
}

const verifyOnce = async (p: Peer, bytes: Uint8Array): Promise<void> => {
  if (p.sync) p.verify(bytes)
  else await p.verify(bytes)
}

const refusal = async (p: Peer, bytes: Uint8Array): Promise<string | undefined> => {
  try {
    await verifyOnce(p, bytes)
    return undefined
  } catch (e) {
    return (e instanceof Error ? e.message : String(e)).split("\n")[0]
  }
}

/** A valid chain is accepted and both tampered copies refused, at every depth; the reasons of the
 * deepest chain are printed. Returns the failures. */
const tamperCheck = async (p: Peer): Promise<Array<string>> => {
  const failures: Array<string> = []
  for (const n of DEPTHS) {
    const t = await p.build(n, 99_000_000 + n)
    const valid = await refusal(p, t.bytes)
    if (valid !== undefined) failures.push(`${p.name} d${n} refuses a valid chain: ${valid}`)
    const sig = await refusal(p, flip(t.bytes, t.sigAt))
    const payload = await refusal(p, flip(t.bytes, t.payloadAt))
    if (sig === undefined) failures.push(`${p.name} d${n} ACCEPTS a chain with a flipped signature byte`)
    if (payload === undefined) failures.push(`${p.name} d${n} ACCEPTS a chain with a flipped payload byte`)
    if (n === 8) console.log(`  ${p.name.padEnd(12)} refuses: signature byte -> ${clip(sig)}; payload byte -> ${clip(payload)}`)
  }
  return failures
}

/** A refusal for one line of output: content ids and did:keys shortened, then cut at 64. */
const clip = (s: string | undefined): string => {
  if (s === undefined) return "(accepted)"
  const short = s.replace(/\b(bafy[a-z2-7]{4})[a-z2-7]+/g, "$1..").replace(/(did:key:z\w{4})\w+/g, "$1..")
  return short.length > 64 ? `${short.slice(0, 61)}...` : short
}

const measure = async (p: Peer, ms: number, tokens: ReadonlyArray<Token>): Promise<{ perSecond: number; count: number }> => {
  const pp = p
  return pp.sync ? rateSync(ms, (i) => pp.verify(tokens[i].bytes), tokens.length) : rateAsync(ms, (i) => pp.verify(tokens[i].bytes), tokens.length)
}

const fmt = (x: number, w = 9): string => x.toFixed(x >= 100 ? 0 : 1).padStart(w)

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const msArg = args.find((a) => a.startsWith("--ms="))
  const roundsArg = args.find((a) => a.startsWith("--rounds="))
  const ms = msArg === undefined ? 300 : Number(msArg.slice(5))
  // Five rounds: this machine is shared, and a figure is the best of its rounds.
  const rounds = roundsArg === undefined ? 5 : Number(roundsArg.slice(9))

  const peers: ReadonlyArray<Peer> = [mandate, await Effect.runPromise(makeBiscuit), await makeUcanto(), jws]

  console.log("tamper check (a valid chain accepted; one flipped byte in the leaf's signature, then in its payload, refused; depths 1, 2, 4, 8):")
  const failures = (await Promise.all(peers.map(tamperCheck))).flat()
  if (failures.length > 0) {
    for (const f of failures) console.log(`  FAIL ${f}`)
    throw new Error(`peers: ${failures.length} tamper check(s) failed`)
  }

  // Calibration (also the warm-up, which the JIT and the lazily compiled WebAssembly need): 48
  // chains per implementation and depth verified once each, the last 24 timed, give the rate a
  // round's pool must outlast (with room: rates rise as code warms; a pool that runs out only
  // shortens its measurement, flagged below when it leaves fewer than 16 samples).
  const poolSize = new Map<string, number>()
  for (const p of peers) {
    for (const n of DEPTHS) {
      const warm = await Promise.all(Array.from({ length: 48 }, (_, k) => p.build(n, 98_000_000 + n * 100 + k)))
      for (const t of warm.slice(0, 24)) await verifyOnce(p, t.bytes)
      const est = await measure(p, 60_000, warm.slice(24))
      poolSize.set(`${p.name}/${n}`, Math.min(4000, Math.ceil((est.perSecond * ms * 2.5) / 1000) + 32))
    }
  }
  rawVerifies(Math.min(ms, 200))

  console.log(`building chains (fixed seeds): ${rounds} rounds of ${peers.map((p) => `${p.name} ${DEPTHS.map((n) => poolSize.get(`${p.name}/${n}`)).join("/")}`).join(", ")}`)
  const pools = new Map<string, Array<ReadonlyArray<Token>>>()
  for (const p of peers) {
    for (const n of DEPTHS) {
      const size = poolSize.get(`${p.name}/${n}`)!
      const perRound: Array<ReadonlyArray<Token>> = []
      for (let r = 0; r < rounds; r++) perRound.push(await Promise.all(Array.from({ length: size }, (_, k) => p.build(n, r * 1_000_000 + k))))
      pools.set(`${p.name}/${n}`, perRound)
    }
  }

  const best = new Map<string, { perSecond: number; count: number }>()
  let base = 0
  let webBase = 0
  for (let r = 0; r < rounds; r++) {
    base = Math.max(base, rawVerifies(ms))
    webBase = Math.max(webBase, await rawWebCryptoVerifies(ms))
    for (let j = 0; j < peers.length; j++) {
      const p = peers[(j + r) % peers.length]
      for (const n of DEPTHS) {
        const k = `${p.name}/${n}`
        const m = await measure(p, ms, pools.get(k)![r])
        if (m.perSecond > (best.get(k)?.perSecond ?? 0)) best.set(k, m)
      }
    }
    base = Math.max(base, rawVerifies(ms))
  }

  console.log(`raw node:crypto Ed25519 verify: ${fmt(base)} /s (best of ${rounds * 2}; one writ's signing input, key parsed once)`)
  console.log(`raw WebCrypto Ed25519 verify, one in flight (jose's path; libuv threadpool): ${fmt(webBase)} /s = ${(webBase / base).toFixed(2)} x raw`)
  console.log(`implementation  depth     ops/s   sigs/s : raw   token bytes`)
  for (const p of peers) {
    for (const n of DEPTHS) {
      const k = `${p.name}/${n}`
      const m = best.get(k)!
      const bytes = pools.get(k)![0][0].bytes.length
      console.log(
        `${p.name.padEnd(14)}  ${String(n).padStart(5)}  ${fmt(m.perSecond)}  ${((m.perSecond * n) / base).toFixed(3).padStart(13)}  ${String(bytes).padStart(12)}` +
          (m.count < 16 ? "  (few samples)" : "")
      )
    }
  }
  const bestPeer = (n: number): Peer => {
    const others = peers.filter((p) => p !== mandate)
    return others.reduce((a, b) => (best.get(`${b.name}/${n}`)!.perSecond > best.get(`${a.name}/${n}`)!.perSecond ? b : a))
  }
  const ratio = (n: number): number => best.get(`mandate/${n}`)!.perSecond / best.get(`${bestPeer(n).name}/${n}`)!.perSecond
  console.log(`best of ${rounds} rounds of ${ms} ms each; sigs/s : raw = ops/s x depth / raw verifies (1.0 = the signatures are the only cost)`)
  console.log(`mandate / best peer: ${DEPTHS.map((n) => `d${n} ${ratio(n).toFixed(2)} (${bestPeer(n).name})`).join(", ")}`)
  console.log(`peers: mandate/best-peer d1 ${ratio(1).toFixed(2)} d8 ${ratio(8).toFixed(2)}`)
}
