// Profiles only the timed COMMITs of `npm run bench -- yea` (memory store), with the bench's own
// set-up (yea.ts commitSetup): npx tsx scripts/bench/_yea-profile.ts [N] [OUT]
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { stateLayer } from "../../src/app/yea-serve.js"
import { commitSetup } from "./yea.js"

const session = new Session()
session.connect()
const post = (m: string) => new Promise<any>((res, rej) => session.post(m, (err, r) => (err ? rej(err) : res(r))))
const bench = (commits: number, inFlight: number) =>
  Effect.gen(function* () {
    const { agent, proposals } = yield* commitSetup(commits, inFlight)

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
Effect.runPromise(Effect.scoped(bench(n, 64)).pipe(Effect.provide(stateLayer(undefined)))).then(() => process.exit(0))
