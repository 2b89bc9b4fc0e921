// `npm run bench -- reserve --diagnose`: where a PostgreSQL reserve spends its time, measured while
// the hot-key reserves run (the issue asks for the contention to be found, not guessed):
//   - statements per reserve, counted client-side from @effect/sql's `sql.execute` spans of the
//     reserving fibers (the BEGIN and COMMIT of an Atomic step are sent unspanned: add 2 when the
//     reserve opens one) and from the PostgreSQL store's count of what its batching fiber sent;
//   - tuple writes per reserve on each accounting table (pg_stat_user_tables, before and after);
//   - what the pool's server backends are doing, sampled from pg_stat_activity every few ms:
//     running, waiting on a lock (and which kind), or idle in a transaction (waiting for the client).
// The pool is recognised by its application_name, so other sessions on the same server are not counted.
// A backend publishes its table counters when idle, up to 10 s late (PostgreSQL 15, "pgstat"), and
// an idle pool connection is closed after 10 s: each snapshot waits 11 s, so the counts are exact.
import { SqlClient } from "@effect/sql"
import { Effect, Fiber, type Layer, ManagedRuntime, Metric, Tracer } from "effect"
import { sentStatements } from "../../src/store/postgres/reserve-batch.js"

/** A tracer that counts spans by name and otherwise does what the default one does. */
export const countingTracer = (base: Tracer.Tracer, counts: Map<string, number>): Tracer.Tracer =>
  Tracer.make({
    context: base.context,
    span: (...args) => {
      counts.set(args[0], (counts.get(args[0]) ?? 0) + 1)
      return base.span(...args)
    }
  })

interface TableWrites {
  readonly relname: string
  readonly ins: number
  readonly upd: number
  readonly hot: number
  readonly del: number
}

const tableWrites = (schema: string) =>
  Effect.zipRight(Effect.sleep("11 seconds"), Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<TableWrites>`SELECT relname, n_tup_ins::int AS ins, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot, n_tup_del::int AS del
      FROM pg_stat_user_tables WHERE schemaname = ${schema} AND relname LIKE 'accounting_%' ORDER BY relname`))

/** Samples the wait state of every backend named `app` until interrupted. */
const sampleWaits = (app: string, into: Map<string, number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forever(Effect.zipRight(
      Effect.tap(
        sql<{ what: string; n: number }>`SELECT CASE
            WHEN state = 'idle in transaction' THEN 'idle in transaction (client round trip)'
            WHEN state = 'idle' THEN 'idle (no step open)'
            WHEN wait_event_type IS NULL THEN 'running on the server'
            ELSE wait_event_type || ':' || wait_event END AS what, count(*)::int AS n
          FROM pg_stat_activity WHERE application_name = ${app} GROUP BY 1`,
        (rows) => Effect.sync(() => rows.forEach((r) => into.set(r.what, (into.get(r.what) ?? 0) + r.n)))
      ),
      Effect.sleep("3 millis")
    )))

/** Runs `work` (n reserves) on `rt` while sampling on a separate pool (`observer`), and prints what it found. */
export const diagnose = async <R>(options: {
  readonly label: string
  readonly schema: string
  readonly app: string
  readonly n: number
  readonly rt: ManagedRuntime.ManagedRuntime<R, unknown>
  readonly observer: Layer.Layer<SqlClient.SqlClient, unknown>
  readonly work: Effect.Effect<void, unknown, R>
}): Promise<void> => {
  const obs = ManagedRuntime.make(options.observer)
  try {
    const before = await obs.runPromise(tableWrites(options.schema))
    const waits = new Map<string, number>()
    const spans = new Map<string, number>()
    const sent0 = (await obs.runPromise(Metric.value(sentStatements))).count
    const sampler = obs.runFork(sampleWaits(options.app, waits))
    await options.rt.runPromise(Effect.flatMap(Effect.tracer, (base) => Effect.withTracer(options.work, countingTracer(base, spans))))
    await obs.runPromise(Fiber.interrupt(sampler))
    const after = await obs.runPromise(tableWrites(options.schema))
    const per = (x: number) => (x / options.n).toFixed(2)
    const sent = (await obs.runPromise(Metric.value(sentStatements))).count - sent0
    const statements = spans.get("sql.execute") ?? 0
    console.log(`  diagnose ${options.label}: ${per(statements + sent)} statements per reserve ` +
      `(${per(statements)} from the reserving fibers, ${per(sent)} sent batched by the store)`)
    for (const a of after) {
      const b = before.find((x) => x.relname === a.relname) ?? { ins: 0, upd: 0, hot: 0, del: 0 }
      console.log(`    ${a.relname}: per reserve ${per(a.ins - b.ins)} inserts, ${per(a.upd - b.upd)} updates ` +
        `(${per(a.hot - b.hot)} HOT), ${per(a.del - b.del)} deletes`)
    }
    const total = Array.from(waits.values()).reduce((s, x) => s + x, 0)
    const shares = Array.from(waits.entries()).sort((x, y) => y[1] - x[1])
      .map(([what, k]) => `${what} ${((100 * k) / Math.max(1, total)).toFixed(0)}%`)
    console.log(`    backends sampled ${total} times: ${shares.join(", ")}`)
  } finally {
    await obs.dispose()
  }
}
