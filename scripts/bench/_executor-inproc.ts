// `npx tsx scripts/bench/_executor-inproc.ts [--n N] [--concurrency C] [--rounds R]`: the executor's
// count and total races of `npm run bench -- executor`, in process (no HTTP), on the durable SQLite
// store (group commit, synchronous=FULL): CPU per call beside one verify plus one sign measured in
// the same run, so a change to admission or step 12 can be judged without the HTTP layer's noise.
// Run it under `node --cpu-prof --import tsx` for a profile of the executor alone.
import { Context, Effect, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { GroupCommit } from "../../src/store/sqlite/group-commit.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { Received } from "../../src/writ/verify.js"
import { act, call, key, ok, rig, scripted, writ } from "../../test/writ-executor/fixtures.js"
import { ed25519Measure, flag } from "./_limit.js"

const args = process.argv.slice(2)
const N = flag(args, "n", 2000)
const C = flag(args, "concurrency", 64)
const R = flag(args, "rounds", 3)
const root = key(1)
const exec = key(2)
const file = join(mkdtempSync(join(tmpdir(), "mandate-inproc-")), "executor.db")

const program = Effect.gen(function*() {
  const stores = yield* Layer.build(SqliteWrit.layer(file, { synchronous: "full" }))
  const executor = yield* rig(stores as unknown as Context.Context<StoreContext>, {
    executorKey: exec,
    accept: [root],
    app: scripted(() => Effect.succeed(ok({ done: true }))).service
  })
  const group = Context.get(stores, GroupCommit)
  const race = (what: string, bodies: ReadonlyArray<Uint8Array>, expectOk: number) =>
    Effect.gen(function*() {
      const before = ed25519Measure(bodies[0], 500)
      const steps0 = yield* group.stats
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      let accepted = 0
      yield* Effect.forEach(bodies, (b) =>
        Effect.map(executor.call(new Received(b)), (a) => {
          if (a._tag === "tally" && a.tally.st === "ok") accepted++
        }), { concurrency: C, discard: true })
      const secs = (performance.now() - t0) / 1000
      const cpu = process.cpuUsage(cpu0)
      const steps = yield* group.stats
      const after = ed25519Measure(bodies[0], 500)
      const limit = (before.cpuMicros + after.cpuMicros) / 2
      const per = (cpu.user + cpu.system) / bodies.length
      if (accepted !== expectOk) throw new Error(`${what}: ${accepted} accepted, expected ${expectOk}`)
      console.log(`  ${what}: ${(bodies.length / secs).toFixed(0)} calls/s, ${per.toFixed(0)} µs CPU per call; one verify + one sign ${limit.toFixed(0)} µs; ratio ${(limit / per).toFixed(3)}; ` +
        `group-commit steps per call ${((steps.steps - steps0.steps) / bodies.length).toFixed(2)} in ${steps.batches - steps0.batches} batches`)
    })
  // The fixtures' writs expire at a fixed time; these live for the run, on the real clock.
  const exp = Math.floor(Date.now() / 1000) + 3600
  for (let r = 0; r < R; r++) {
    const wCount = writ(root, exec, { act: act("bench/"), uses: { t: "count", v: 1 } }, null, exp)
    const T = 3 * Math.floor(N / 4) + 2
    const wTotal = writ(root, exec, { act: act("bench/"), amount: { t: "total", v: T } }, null, exp)
    const bytes = (o: Parameters<typeof encodeCanonical>[0]) => Buffer.from(encodeCanonical(o, "utf16"), "utf8")
    const count = Array.from({ length: N }, (_, i) => bytes(call(root, [wCount], "bench/book", { i })))
    const total = Array.from({ length: N }, (_, i) => bytes(call(root, [wTotal], "bench/pay", { amount: 3, i })))
    console.log(`round ${r + 1}`)
    yield* race("count race", count, 1)
    yield* race("total race", total, Math.floor(T / 3))
  }
})

await Effect.runPromise(Effect.scoped(program))
