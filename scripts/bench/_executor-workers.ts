// `npm run bench -- executor --store postgres://...[#SCHEMA] [--workers W] [--n N] [--concurrency C]`
// (dispatched from scripts/bench/executor.ts): N executor workers (`writ serve --store postgres`)
// on one schema serving one executor key, for 1, 2, 4, ... up to W workers (default 4). A client
// spreads the calls over the workers in turn (what a balancer in front of one address does,
// without a proxy process taking CPU of its own on this small machine) with C requests in flight:
//   1. count race: N distinct calls for a writ with `count` 1: exactly one accepted;
//   2. total race: N calls of `amount` 3 for a `total` of 3*floor(N/4)+2: exactly floor(N/4).
// Every check is asserted (a violation exits non-zero). Each rate is printed beside the one-verify-
// plus-one-sign Ed25519 limit measured just before and after its phase, as executor.ts does, and
// with the CPU it took per call (from /proc/<pid>/stat): the workers', PostgreSQL's (the backends
// of the workers' connections, found by their application_name) and this driver's: the measured
// model of the README (calls/s on K cores ~ K / CPU per call, unless one key's lock binds first).
// A third race with no hot key (calls spread over 16 unbounded writs) shows how the workers scale
// when no lock is shared. The last line is
// `executor-workers: w1 X/s w2 X/s w4 X/s (postgres)`, X the calls/s over both races together.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as Http from "node:http"
import { join } from "node:path"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { cpuOf, ed25519Limit, flag } from "./_limit.js"
import type { JsonObject } from "../../src/kernel/json.js"
import * as PgStore from "../../src/store/postgres/client.js"
import { type Answer, call, key, postRaw, prefix, type ServeProcess, spawnServe, tempDir, writ, writeKeyFile } from "../../test/bind-writ-http/support.js"

/** CPU seconds of a process that may have exited meanwhile (then 0: it is not counted). */
const cpuOrZero = (pid: number): number => {
  try {
    return cpuOf(pid)
  } catch {
    return 0
  }
}

/** The server processes (backends) of the workers' connections, by their application name. */
const backends = (url: string, app: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${app}`).pipe(
      Effect.map((rows) => rows.map((r) => r.pid)),
      Effect.provide(PgStore.layer({ url, maxConnections: 1 }))
    ))

const bytesOf = (o: JsonObject) => Buffer.from(encodeCanonical(o, "utf16"), "utf8")
const tallyOf = (a: Answer) => (JSON.parse(a.bytes.toString("utf8")) as { tally: JsonObject }).tally
const codeOf = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null

const dropSchema = (url: string, schema: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(
    Effect.provide(PgStore.layer({ url }))
  ))

export async function runWorkers(args: ReadonlyArray<string>): Promise<void> {
  const si = args.indexOf("--store")
  const where = si >= 0 ? args[si + 1] ?? "" : ""
  if (!where.startsWith("postgres://") && !where.startsWith("postgresql://") && where !== "postgres") {
    throw new Error("--store takes postgres://...[#SCHEMA]")
  }
  const [url, named] = where === "postgres" ? [PgStore.defaultUrl, undefined] : where.split("#")
  const base = named !== undefined && named !== "" ? named : `bench_workers_${process.pid}`
  const W = flag(args, "workers", 4)
  const N = flag(args, "n", 1000)
  const C = flag(args, "concurrency", 64)
  const A = 3
  const T = A * Math.floor(N / 4) + (A - 1)
  const counts = [1, 2, 4, 8, 16].filter((w) => w <= W)
  if (!counts.includes(W)) counts.push(W)
  console.log(`executor workers on PostgreSQL: workers ${counts.join(", ")}; N=${N} concurrency=${C} total=${T} amount=${A}; store ${url} schema ${base}_wN`)
  const violations: Array<string> = []
  const check = (ok: boolean, what: string) => {
    console.log(`  ${ok ? "ok  " : "FAIL"} ${what}`)
    if (!ok) violations.push(what)
  }
  const root = key(111)
  const exec = key(112)
  const dir = tempDir("bench-workers")
  const env = { WRIT_HANDLER_LOG: join(dir, "handler.log"), WRIT_HANDLER_DELAY_MS: "0" }
  const summary: Array<string> = []
  const spread: Array<string> = []
  const sample = bytesOf(call(root, [writ(root, exec, { act: prefix("bench/") })], "bench/once", { n: 1 }))

  for (const w of counts) {
    const schema = `${base}_w${w}`
    await dropSchema(url, schema)
    const app = `mandate_bench_${process.pid}_w${w}`
    const flags = ["--port", "0", "--store", `${url}${url.includes("?") ? "&" : "?"}application_name=${app}#${schema}`,
      "--idle-timeout-ms", "600000", "--pg-connections", String(Math.min(32, Math.max(4, Math.ceil(C / w) + 2))),
      "--key", writeKeyFile(dir, exec), "--root", root.did]
    const servers: Array<ServeProcess> = []
    const agent = new Http.Agent({ keepAlive: true, maxSockets: C })
    try {
      // The first creates the schema and its tables; the others join.
      servers.push(await spawnServe(flags, env))
      servers.push(...await Promise.all(Array.from({ length: w - 1 }, () => spawnServe(flags, env))))
      const urls = servers.map((s) => new URL(s.url))
      const wCount = writ(root, exec, { act: prefix("bench/"), uses: { t: "count", v: 1 } })
      const wTotal = writ(root, exec, { act: prefix("bench/"), amount: { t: "total", v: T } })
      const countCalls = Array.from({ length: N }, (_, i) => bytesOf(call(root, [wCount], "bench/book", { i })))
      const totalCalls = Array.from({ length: N }, (_, i) => bytesOf(call(root, [wTotal], "bench/pay", { amount: A, i })))
      // Warm each worker (its pool, its verification of the writs) outside the clock.
      for (const u of urls) await postRaw(agent, u, bytesOf(call(root, [writ(root, exec, { act: prefix("bench/") })], "bench/warm")))
      const race = async (bodies: ReadonlyArray<Buffer>, what: string) => {
        const limitBefore = ed25519Limit(sample, 750)
        const cpu0 = servers.map((s) => cpuOf(s.child.pid!))
        const pg0 = new Map((await backends(url, app)).map((pid) => [pid, cpuOrZero(pid)] as const))
        const self0 = process.cpuUsage()
        const answers: Array<JsonObject> = []
        let next = 0
        const t0 = performance.now()
        await Promise.all(Array.from({ length: C }, async () => {
          while (next < bodies.length) {
            const i = next++
            const a = await postRaw(agent, urls[i % urls.length], bodies[i])
            answers.push(a.status === 200 ? tallyOf(a) : { st: `status ${a.status}` })
          }
        }))
        const secs = (performance.now() - t0) / 1000
        const workerCpu = servers.reduce((n, s, i) => n + cpuOf(s.child.pid!) - cpu0[i], 0)
        const self = process.cpuUsage(self0)
        const driverCpu = (self.user + self.system) / 1e6
        const pgCpu = (await backends(url, app)).reduce((n, pid) => n + cpuOrZero(pid) - (pg0.get(pid) ?? 0), 0)
        const limit = (limitBefore + ed25519Limit(sample, 750)) / 2
        const r = bodies.length / secs
        console.log(`  w${w} ${what}: ${bodies.length} calls in ${secs.toFixed(2)} s = ${r.toFixed(0)} calls/s; ` +
          `Ed25519 limit beside it ${limit.toFixed(0)} /s; ratio ${(r / limit).toFixed(3)}; CPU per call: workers ` +
          `${(workerCpu / bodies.length * 1000).toFixed(2)} ms, PostgreSQL ${(pgCpu / bodies.length * 1000).toFixed(2)} ms, ` +
          `driver ${(driverCpu / bodies.length * 1000).toFixed(2)} ms`)
        return { answers, secs }
      }
      const c = await race(countCalls, "count race")
      const okCount = c.answers.filter((t) => t.st === "ok").length
      check(okCount === 1, `w${w} count 1: exactly one of ${N} accepted across ${w} workers (got ${okCount})`)
      check(c.answers.filter((t) => codeOf(t) === "count_exhausted").length === N - 1, `w${w} count: the other ${N - 1} refused count_exhausted`)
      const t = await race(totalCalls, "total race")
      const okTotal = t.answers.filter((x) => x.st === "ok").length
      check(okTotal === Math.floor(T / A), `w${w} total ${T}: exactly ${Math.floor(T / A)} of ${N} accepted (got ${okTotal})`)
      check(t.answers.filter((x) => codeOf(x) === "total_exhausted").length === N - okTotal, `w${w} total: the rest refused total_exhausted`)
      const spreadWrits = Array.from({ length: 16 }, () => writ(root, exec, { act: prefix("bench/") }))
      const spreadCalls = Array.from({ length: N }, (_, i) => bytesOf(call(root, [spreadWrits[i % 16]], "bench/spread", { i })))
      const p = await race(spreadCalls, "no hot key (16 writs)")
      check(p.answers.every((x) => x.st === "ok"), `w${w} no hot key: every one of ${N} calls accepted`)
      spread.push(`w${w} ${(N / p.secs).toFixed(0)}/s`)
      summary.push(`w${w} ${((2 * N) / (c.secs + t.secs)).toFixed(0)}/s`)
    } finally {
      agent.destroy()
      for (const s of servers) await s.kill()
      await dropSchema(url, schema)
    }
  }
  if (violations.length > 0) {
    process.exitCode = 1
    throw new Error(`executor workers: ${violations.join("; ")}`)
  }
  console.log(`  no hot key: ${spread.join(" ")}`)
  console.log(`executor-workers: ${summary.join(" ")} (postgres)`)
}

export const run = runWorkers
