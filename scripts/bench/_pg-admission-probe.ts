// Diagnosis of one worker's PostgreSQL admissions, in process (no HTTP): round trips per call
// counted on the pool's sockets, this process's CPU per call, and (with --log) the statements of
// one accepted call and one refused one. `tsx scripts/bench/_pg-admission-probe.ts [--n N] [--log]`
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as PgStore from "../../src/store/postgres/client.js"
import { statementCounter } from "../../src/store/postgres/statement-counter.js"
import * as PgWrit from "../../src/store/postgres/writ-stores.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import { act, call, key, rig, settable, writ } from "../../test/writ-executor/fixtures.js"

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : d
}
const N = arg("n", 200)
const C = arg("concurrency", 16)
const log = process.argv.includes("--log")
const schema = `pgadmit_probe_${process.pid}`
const ROOT = key(1)
const EXEC = key(2)
const instant = { perform: () => Effect.succeed<Outcome>({ st: "ok" }) }

const main = Effect.gen(function*() {
  const counter = statementCounter()
  const scope = yield* Scope.make()
  const context = yield* Layer.buildWithScope(PgWrit.layer({ schema, maxConnections: C + 2, stream: counter.stream }), scope)
  const executor = yield* rig(context as unknown as Context.Context<StoreContext>, { executorKey: EXEC, accept: [ROOT], app: instant }).pipe(Scope.extend(scope))
  const once = writ(ROOT, EXEC, { act: act("k") })
  yield* executor.call(call(ROOT, [once], "k/warm"))
  const phase = (what: string, bodies: ReadonlyArray<ReturnType<typeof call>>) =>
    Effect.gen(function*() {
      counter.reset()
      const c0 = process.cpuUsage()
      const answers = yield* Effect.forEach(bodies, (b) => executor.call(b), { concurrency: C })
      const cpu = process.cpuUsage(c0)
      const ok = answers.filter((a) => a._tag === "tally" && a.tally.st === "ok").length
      console.log(`${what}: ${bodies.length} calls (${ok} ok), ${(counter.roundTrips() / bodies.length).toFixed(2)} round trips per call, ` +
        `CPU ${((cpu.user + cpu.system) / 1000 / bodies.length).toFixed(2)} ms per call`)
    })
  if (log) {
    const w = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 1 } })
    for (const what of ["accepted", "refused"]) {
      counter.reset()
      yield* executor.call(call(ROOT, [w], "k/one"))
      console.log(`-- ${what}: ${counter.roundTrips()} round trips`)
      for (const s of counter.statements()) console.log(`   ${s.replace(/\s+/g, " ").slice(0, 160)}`)
    }
  }
  const counted = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 1 } })
  yield* phase("count race", Array.from({ length: N }, (_, i) => call(ROOT, [counted], "k/count", { i })))
  const totaled = writ(ROOT, EXEC, { act: act("k"), amount: { t: "total", v: 3 * Math.floor(N / 4) + 2 } })
  yield* phase("total race", Array.from({ length: N }, (_, i) => call(ROOT, [totaled], "k/total", { i, amount: 3 })))
  const spread = Array.from({ length: 16 }, () => writ(ROOT, EXEC, { act: act("k") }))
  yield* phase("no hot key", Array.from({ length: N }, (_, i) => call(ROOT, [spread[i % 16]], "k/spread", { i })))
  yield* Scope.close(scope, Exit.void)
  yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(Effect.provide(PgStore.layer()))
})

Effect.runPromise(Effect.scoped(main).pipe(Effect.withClock(settable().clock))).catch((e) => {
  console.error(e)
  process.exitCode = 1
})
