// `npm run bench -- yea [--commits N] [--replays N] [--in-flight N] [--sqlite]`:
//   1. COMMITs per second over yea:// (loopback TCP) against one `total` (every commit reserves
//      against the same limit, so they contend for one key), `--in-flight` (64) at once on one
//      connection, beside the Ed25519 limit measured in the same run: a COMMIT costs the agent one
//      signature (its proof) and the service two verifications (the proof and the grant's one
//      block), all on this one process, so the ceiling is 1 / (1/sign + 2/verify) per second,
//      with raw node:crypto and keys parsed once (what YEA's verify path re-does per call, parsing
//      the key and checking the point, is part of what the ratio shows);
//   2. memory across `--replays` (100,000) replayed COMMITs of one committed proposal (each a new
//      frame and proof, each answered with the original receipt, §4.4): the heap after a GC at ten
//      points, first tenth against last. Flat means the last is within 25% (and 8 MiB) of the first.
// The proposals are made (INTENT) before the clock starts; only COMMITs are timed.
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as v8 from "node:v8"
import { runInNewContext } from "node:vm"
import { connectTcp } from "../../src/bind/yea-tcp/client.js"
import { serveTcp } from "../../src/bind/yea-tcp/server.js"
import { publicKeyObject, signerFromSeed, verifyWithKeyObject } from "../../src/kernel/ed25519.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { stateLayer } from "../../src/app/yea-serve.js"
import { makeClient } from "../../src/yea/client.js"
import { shopService } from "../../src/examples/index.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import type { Proposal } from "../../src/yea/proposal.js"
import { makeService } from "../../src/yea/service/runtime.js"

const flag = (args: ReadonlyArray<string>, name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt
}

const PRINCIPAL = new Uint8Array(32).fill(1)
const AGENT = new Uint8Array(32).fill(2)

// A collection before each heap sample, so the samples show what is retained, not what is garbage.
v8.setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heapMiB = (): number => {
  gc()
  return process.memoryUsage().heapUsed / 1048576
}

/** Raw Ed25519 on this machine, now: signatures and verifications per second with the keys parsed
 * once (node:crypto KeyObjects), so the ceiling is the cryptography alone. */
const ed25519Rates = (n: number) => {
  const msg = new TextEncoder().encode("a proof's canonical payload of about a hundred bytes, like the ones a COMMIT carries....")
  const signer = signerFromSeed(AGENT)
  const key = publicKeyObject(signer.publicKey)!
  const sig = signer.sign(msg)
  let t0 = performance.now()
  for (let i = 0; i < n; i++) signer.sign(msg)
  const signs = n / ((performance.now() - t0) / 1000)
  t0 = performance.now()
  for (let i = 0; i < n; i++) if (!verifyWithKeyObject(key, msg, sig)) throw new Error("verify")
  const verifies = n / ((performance.now() - t0) / 1000)
  return { signs, verifies, ceiling: 1 / (1 / signs + 2 / verifies) }
}

/** The timed part's set-up: a shop service on loopback TCP, an agent with a root grant, and
 * `commits` proposals made by INTENT (untimed). Also used by _yea-profile.ts. */
export const commitSetup = (commits: number, inFlight: number) =>
  Effect.gen(function* () {
    const principal = keyFromSeed(PRINCIPAL)
    const service = yield* makeService(yield* shopService([principal]), { maxConcurrentCommits: 8 })
    const { port } = yield* serveTcp(service, { port: 0, maxInFlight: inFlight + 8 })
    const grant = yield* issueRootGrant({
      sub: keyFromSeed(AGENT),
      caveats: [{ svc: ["shop.example"] }, { total: { of: "spend", max: Number.MAX_SAFE_INTEGER, scale: 2, unit: "USD" } }],
      nonce: "bench"
    }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(PRINCIPAL), RandomBytes.live)))
    const conn = yield* connectTcp(new URL(`yea://127.0.0.1:${port}`), { timeoutMs: 600_000 })
    const agent = yield* makeClient(conn, { grants: [grant] }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(AGENT), RandomBytes.live)))
    yield* agent.hello()

    // Proposals first (not timed).
    const proposals: Array<Proposal> = []
    yield* Effect.forEach(Array.from({ length: commits }, (_, i) => i), () =>
      Effect.flatMap(agent.intent("shop.order", { items: [{ sku: "m01", qty: 1 }], deliver: "2026-12-24" }), (r) =>
        r.kind === "PROPOSALS" ? Effect.sync(() => void proposals.push(r.proposals[0] as Proposal)) : Effect.die(new Error(`INTENT: ${r.kind}`))
      ), { concurrency: inFlight, discard: true })

    return { agent, proposals }
  })

const bench = (commits: number, replays: number, inFlight: number) =>
  Effect.gen(function* () {
    const { agent, proposals } = yield* commitSetup(commits, inFlight)
    const rates = ed25519Rates(Math.max(2000, Math.min(20000, commits * 4)))
    let t0 = performance.now()
    let receipts = 0
    yield* Effect.forEach(proposals, (p) =>
      Effect.flatMap(agent.commit(p), (r) => (r.kind === "RECEIPT" ? Effect.sync(() => void receipts++) : Effect.die(new Error(`COMMIT: ${r.kind} ${JSON.stringify(r)}`)))), { concurrency: inFlight, discard: true })
    const perSecond = commits / ((performance.now() - t0) / 1000)
    const after = ed25519Rates(Math.max(2000, Math.min(20000, commits * 4)))
    const ceiling = (rates.ceiling + after.ceiling) / 2

    // Replays of one committed proposal.
    const once = proposals[0]
    const first = yield* agent.commit(once)
    const receipt = first.kind === "RECEIPT" ? first.receipt.id : ""
    const samples: Array<number> = [heapMiB()]
    const chunk = Math.max(1, Math.floor(replays / 10))
    t0 = performance.now()
    for (let done = 0; done < replays; done += chunk) {
      const n = Math.min(chunk, replays - done)
      yield* Effect.forEach(Array.from({ length: n }, (_, i) => i), () =>
        Effect.flatMap(agent.commit(once), (r) =>
          r.kind === "RECEIPT" && r.replay === true && r.receipt.id === receipt ? Effect.void : Effect.die(new Error(`replay: ${JSON.stringify(r)}`))
        ), { concurrency: inFlight, discard: true })
      samples.push(heapMiB())
    }
    const replaySeconds = (performance.now() - t0) / 1000
    return { perSecond, receipts, rates: { signs: (rates.signs + after.signs) / 2, verifies: (rates.verifies + after.verifies) / 2 }, ceiling, samples, replaySeconds }
  })

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const commits = flag(args, "commits", 2000)
  const replays = flag(args, "replays", 100_000)
  const inFlight = flag(args, "in-flight", 64)
  const useSqlite = args.includes("--sqlite")
  const dir = useSqlite ? mkdtempSync(join(tmpdir(), "bench-yea-")) : undefined
  const state = stateLayer(dir !== undefined ? join(dir, "yea.db") : undefined)
  try {
    const r = await Effect.runPromise(
      Effect.scoped(bench(commits, replays, inFlight)).pipe(Effect.provide(state))
    )
    console.log(`store: ${useSqlite ? "SQLite (file)" : "memory"}; ${commits} COMMITs, ${inFlight} in flight on one yea:// connection, all against one total`)
    console.log(`Ed25519 here, same run: ${r.rates.signs.toFixed(0)} signs/s, ${r.rates.verifies.toFixed(0)} verifies/s -> ceiling ${r.ceiling.toFixed(0)} COMMITs/s (1 sign + 2 verifies each)`)
    console.log(`COMMITs: ${r.perSecond.toFixed(0)}/s (${r.receipts} receipts) = ${(r.perSecond / r.ceiling).toFixed(3)} x the Ed25519 ceiling`)
    const first = r.samples[0]
    const last = r.samples[r.samples.length - 1]
    const flat = last <= first * 1.25 || last - first <= 8
    console.log(`heap (MiB) across ${replays} replays (${(replays / r.replaySeconds).toFixed(0)}/s): ${r.samples.map((s) => s.toFixed(1)).join(" ")}`)
    console.log(`\nyea: ${r.perSecond.toFixed(0)} COMMITs/s over TCP against one total = ${(r.perSecond / r.ceiling).toFixed(3)} x the Ed25519 ceiling (${r.ceiling.toFixed(0)}/s); heap ${first.toFixed(1)} -> ${last.toFixed(1)} MiB across ${replays} replayed COMMITs: ${flat ? "flat" : "GROWING"}`)
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  }
}
