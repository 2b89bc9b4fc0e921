// Profiles only the timed COMMITs of `npm run bench -- yea` (memory store): npx tsx scripts/bench/_yea-profile.ts [N] [OUT]
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
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

import { Session } from "node:inspector"
import { writeFileSync } from "node:fs"

const PRINCIPAL = new Uint8Array(32).fill(1)
const AGENT = new Uint8Array(32).fill(2)
const session = new Session()
session.connect()
const post = (m: string) => new Promise<any>((res, rej) => session.post(m, (err, r) => (err ? rej(err) : res(r))))
const bench = (commits: number, _replays: number, inFlight: number) =>
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

    yield* Effect.promise(() => post("Profiler.enable").then(() => post("Profiler.start")))
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    yield* Effect.forEach(proposals, (p) =>
      Effect.flatMap(agent.commit(p), (r) => (r.kind === "RECEIPT" ? Effect.void : Effect.die(new Error(`COMMIT: ${r.kind}`)))), { concurrency: inFlight, discard: true })
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(c0)
    const prof = yield* Effect.promise(() => post("Profiler.stop"))
    writeFileSync(process.argv[3] ?? "/tmp/yea-commit.cpuprofile", JSON.stringify(prof.profile))
    console.log(`${commits} COMMITs: ${(commits / (wall / 1000)).toFixed(0)}/s, CPU ${((cpu.user + cpu.system) / commits).toFixed(0)} us per COMMIT`)
  })

const n = Number(process.argv[2] ?? 2000)
Effect.runPromise(Effect.scoped(bench(n, 0, 64)).pipe(Effect.provide(stateLayer(undefined)))).then(() => process.exit(0))
