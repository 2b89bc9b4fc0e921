// `npm run bench -- executor [--n N] [--m M] [--concurrency C] [--amount A] [--synchronous full|normal]`: the concurrency
// proof. The executor runs as its own process (`writ serve`, SQLite store, WAL) and is
// driven over HTTP on loopback with C requests in flight:
//   1. N distinct calls race for a writ with `count` 1: exactly one is accepted, every other is
//      refused `count_exhausted`, and `sys/tallies` under the writ lists exactly one tally;
//   2. N calls of `amount` A race for a writ with `total` T = A*floor(N/4) + (A-1): exactly
//      floor(T/A) are accepted, the rest refused `total_exhausted`;
//   3. M copies of one signed call: the operation runs once (the handler's own log), and every
//      answer is byte for byte the final answer, or (for a copy that arrived while the operation
//      was running) byte for byte the call's pending tally;
//   4. SIGKILL, restart on the same store: the count and the total stay spent (a new call is
//      refused; the remainder T mod A is still accepted exactly once), the replay is answered from
//      the store byte for byte, sys/tallies still lists one, and nothing ran twice.
// Every check is asserted; any violation exits non-zero. The races' calls per second are printed
// beside the Ed25519 limit measured in this run with node:crypto (one verify plus one sign per
// call), as a ratio; the replays' beside a trivial node:http server (its own process, answering a
// fixed body of the replay answer's size) driven by the same driver at the same concurrency, each
// measured just before and after the phase it is compared with. Beside each rate, the CPU the
// executor process took per call (/proc/<pid>/stat), and the baseline's own: the CPU of one verify
// plus one sign in this process, and the trivial server's CPU per answer. The last line:
//   executor: count R total R replay R (durable)
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as Http from "node:http"
import { join } from "node:path"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { cpuOf, ed25519Measure, flag } from "./_limit.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { runWorkers } from "./_executor-workers.js"
import { type Answer, call, identity, key, postRaw, prefix, type ServeProcess, spawnServe, tempDir, writ, writeKeyFile } from "../../test/bind-writ-http/support.js"

// ---------------------------------------------------------------------------------------------
// A small keep-alive HTTP driver: C requests in flight, each answer handed to `onAnswer`.


const makeDriver = (url: string, concurrency: number) => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: concurrency })
  const target = new URL(url)
  const post = (body: Buffer): Promise<Answer> => postRaw(agent, target, body)
  /** Posts `count` bodies (made by `body(i)`) with `concurrency` in flight; returns seconds taken. */
  const race = async (count: number, body: (i: number) => Buffer, onAnswer: (i: number, a: Answer) => void) => {
    let next = 0
    let answered = 0
    const t0 = performance.now()
    // Progress on long runs, every tenth of the way.
    const step = count >= 50_000 ? Math.floor(count / 10) : Infinity
    const worker = async () => {
      while (next < count) {
        const i = next++
        onAnswer(i, await post(body(i)))
        if (++answered % step === 0) {
          const secs = (performance.now() - t0) / 1000
          console.log(`    ${answered}/${count} answered, ${(answered / secs).toFixed(0)} /s`)
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
    return (performance.now() - t0) / 1000
  }
  return { post, race, close: () => agent.destroy() }
}

const bytesOf = (o: JsonObject) => Buffer.from(encodeCanonical(o, "utf16"), "utf8")

// ---------------------------------------------------------------------------------------------
// Baseline for replays: the least an HTTP answer costs here. A node:http server in a process of
// its own (as the executor is) reads the body and answers a fixed body of `size` bytes.

const TRIVIAL = `const size = Number(process.argv[1]); const body = Buffer.alloc(size, 0x61);
require("node:http").createServer((req, res) => {
  req.on("data", () => {}); req.on("end", () => { res.writeHead(200, { "content-type": "application/writ+json", "content-length": size }); res.end(body) })
}).listen(0, "127.0.0.1", function () { console.log("PORT " + this.address().port) })`

const spawnTrivial = (size: number): Promise<{ url: string; pid: number; kill: () => void }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", TRIVIAL, String(size)], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d) => {
      out += d
      const m = out.match(/PORT (\d+)/)
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}/writ`, pid: child.pid!, kill: () => child.kill("SIGKILL") })
    })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`trivial server exited ${code}`)))
  })

/** Answers per second of the trivial server to `count` posts of `body` at `concurrency`. */
const trivialRate = async (url: string, concurrency: number, count: number, body: Buffer): Promise<number> => {
  const d = makeDriver(url, concurrency)
  try {
    let bad = 0
    const secs = await d.race(count, () => body, (_, a) => void (a.status === 200 || bad++))
    if (bad > 0) throw new Error(`trivial server: ${bad} answers not 200`)
    return count / secs
  } finally {
    d.close()
  }
}

// ---------------------------------------------------------------------------------------------

export async function run(args: ReadonlyArray<string>): Promise<void> {
  // N workers on PostgreSQL: scripts/bench/_executor-workers.ts.
  if (args.includes("--store") && /^postgres/.test(args[args.indexOf("--store") + 1] ?? "")) return runWorkers(args)
  const N = flag(args, "n", 2000)
  const M = flag(args, "m", 10_000)
  const C = flag(args, "concurrency", 64)
  const A = flag(args, "amount", 3)
  const T = A * Math.floor(N / 4) + (A - 1)
  const si = args.indexOf("--synchronous")
  const synchronous = si >= 0 ? args[si + 1] : "full"
  if (synchronous !== "full" && synchronous !== "normal") throw new Error("--synchronous takes full or normal")
  const violations: Array<string> = []
  const check = (ok: boolean, what: string) => {
    console.log(`  ${ok ? "ok  " : "FAIL"} ${what}`)
    if (!ok) violations.push(what)
  }
  console.log(`executor concurrency proof: N=${N} M=${M} concurrency=${C} total=${T} amount=${A} SQLite synchronous=${synchronous}`)

  const root = key(101)
  const exec = key(102)
  const dir = tempDir("bench-executor")
  const store = join(dir, "executor.db")
  const log = join(dir, "handler.log")
  const flags = ["--port", "0", "--store", store, "--key", writeKeyFile(dir, exec), "--root", root.did, "--synchronous", synchronous]
  const env = { WRIT_HANDLER_LOG: log, WRIT_HANDLER_DELAY_MS: "0" }
  console.log(`  store ${store}`)

  let server: ServeProcess | undefined
  let driver: ReturnType<typeof makeDriver> | undefined
  let trivial: { url: string; pid: number; kill: () => void } | undefined
  const ratios = { count: 0, total: 0, replay: 0 }
  try {
    // The writs, and every call signed before the clock starts.
    const wCount = writ(root, exec, { act: prefix("bench/"), uses: { t: "count", v: 1 } })
    const wTotal = writ(root, exec, { act: prefix("bench/"), amount: { t: "total", v: T } })
    const wOnce = writ(root, exec, { act: prefix("bench/") })
    const countCalls = Array.from({ length: N }, (_, i) => bytesOf(call(root, [wCount], "bench/book", { i })))
    const totalCalls = Array.from({ length: N }, (_, i) => bytesOf(call(root, [wTotal], "bench/pay", { amount: A, i })))
    const once = call(root, [wOnce], "bench/once", { n: 1 })
    const onceBytes = bytesOf(once)
    // The machine is shared, so the limit is measured beside each phase (just before and just
    // after it, averaged) and each rate is compared with its own phase's limit.
    const first = ed25519Measure(onceBytes)
    let limit = first.rate
    let limitCpu = first.cpuMicros
    let serverCpu = 0
    console.log(`  Ed25519 limit (one verify + one sign, node:crypto, this process): ${limit.toFixed(0)} /s, ${limitCpu.toFixed(0)} µs CPU`)
    // `serverCpu`: the executor process's CPU seconds during the phase.
    const phase = async <A>(f: () => Promise<A>): Promise<A> => {
      const before = ed25519Measure(onceBytes, 750)
      const cpu0 = cpuOf(server!.child.pid!)
      const r = await f()
      serverCpu = cpuOf(server!.child.pid!) - cpu0
      const after = ed25519Measure(onceBytes, 750)
      limit = (before.rate + after.rate) / 2
      limitCpu = (before.cpuMicros + after.cpuMicros) / 2
      return r
    }

    server = await spawnServe(flags, env)
    driver = makeDriver(server.url, C)
    const d = driver
    const rate = (count: number, secs: number, what: string) => {
      const r = count / secs
      console.log(`  ${what}: ${count} calls in ${secs.toFixed(1)} s = ${r.toFixed(0)} calls/s; Ed25519 limit beside it ${limit.toFixed(0)} /s; ratio ${(r / limit).toFixed(3)}`)
      const perCall = (serverCpu / count) * 1e6
      console.log(`  ${what} CPU: executor ${perCall.toFixed(0)} µs per call; one verify + one sign ${limitCpu.toFixed(0)} µs; ratio ${(limitCpu / perCall).toFixed(3)}`)
      return r
    }
    const tallyOf = (a: Answer) => (JSON.parse(a.bytes.toString("utf8")) as { tally: JsonObject; res?: JsonObject }).tally
    const codeOf = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null

    // 1. N distinct calls race for count 1.
    const countOk: Array<number> = []
    const countOther = new Map<string, number>()
    const countAnswers = new Map<number, Buffer>()
    const s1 = await phase(() => d.race(N, (i) => countCalls[i], (i, a) => {
      const t = a.status === 200 ? tallyOf(a) : null
      if (t !== null && t.st === "ok") {
        countOk.push(i)
        countAnswers.set(i, a.bytes)
      } else {
        const k = t === null ? `status ${a.status}` : `${t.st}/${codeOf(t)}`
        countOther.set(k, (countOther.get(k) ?? 0) + 1)
      }
    }))
    ratios.count = rate(N, s1, "count race") / limit
    check(countOk.length === 1, `count 1: exactly one of ${N} accepted (got ${countOk.length})`)
    check(countOther.size === 1 && countOther.get("failed/count_exhausted") === N - 1,
      `count 1: the other ${N - 1} refused count_exhausted (${JSON.stringify([...countOther])})`)
    const tallyListCall = bytesOf(call(root, [wCount], "sys/tallies", { writ: identity(wCount) }))
    const listed = async (via: ReturnType<typeof makeDriver>, body = tallyListCall) => {
      const a = await via.post(body)
      const parsed = JSON.parse(a.bytes.toString("utf8")) as { tally: JsonObject; res?: { tallies: Array<JsonObject> } }
      // Forward tallies only: a sys/tallies call's own tally is held under the writ too (section 9).
      return { bytes: a.bytes, forward: (parsed.res?.tallies ?? []).filter((t) => typeof t.op === "string" && !t.op.startsWith("sys/")) }
    }
    const firstList = await listed(d)
    check(firstList.forward.length === 1 && countOk.length === 1 &&
      firstList.forward[0].call === identity(JSON.parse(countCalls[countOk[0]].toString())),
      `sys/tallies under the count writ lists exactly the accepted call (${firstList.forward.length})`)

    // 2. N calls race for a total.
    const expectTotal = Math.floor(T / A)
    let totalOk = 0
    const totalOther = new Map<string, number>()
    const s2 = await phase(() => d.race(N, (i) => totalCalls[i], (_, a) => {
      const t = a.status === 200 ? tallyOf(a) : null
      if (t !== null && t.st === "ok") totalOk++
      else {
        const k = t === null ? `status ${a.status}` : `${t.st}/${codeOf(t)}`
        totalOther.set(k, (totalOther.get(k) ?? 0) + 1)
      }
    }))
    ratios.total = rate(N, s2, "total race") / limit
    check(totalOk === expectTotal, `total ${T}: exactly floor(${T}/${A}) = ${expectTotal} of ${N} accepted (got ${totalOk})`)
    check(totalOther.size === (N > expectTotal ? 1 : 0) && (totalOther.get("failed/total_exhausted") ?? 0) === N - expectTotal,
      `total: the other ${N - expectTotal} refused total_exhausted (${JSON.stringify([...totalOther])})`)

    // 3. M copies of one signed call.
    let final: Buffer | undefined
    let pending: Buffer | undefined
    let sameFinal = 0
    let samePending = 0
    let onceOther = 0
    const unsure: Array<Buffer> = []
    // The trivial server answers as many bytes as the replay does.
    const onceAnswer = await d.post(onceBytes)
    trivial = await spawnTrivial(onceAnswer.bytes.length)
    await trivialRate(trivial.url, C, 1000, onceBytes) // warm-up
    const trivialCpu0 = cpuOf(trivial.pid)
    const trivialBefore = await trivialRate(trivial.url, C, Math.min(M, 10_000), onceBytes)
    const trivialCpu = (cpuOf(trivial.pid) - trivialCpu0) / Math.min(M, 10_000)
    const s3 = await phase(() => d.race(M, () => onceBytes, (_, a) => {
      if (final !== undefined && a.bytes.equals(final)) return void sameFinal++
      if (pending !== undefined && a.bytes.equals(pending)) return void samePending++
      const t = a.status === 200 ? tallyOf(a) : null
      if (t !== null && t.st === "ok" && final === undefined) {
        final = a.bytes
        sameFinal++
      } else if (t !== null && t.st === "pending" && pending === undefined) {
        pending = a.bytes
        samePending++
      } else {
        onceOther++
        if (unsure.length < 3) unsure.push(a.bytes)
      }
    }))
    const replayRate = M / s3
    const trivialAround = (trivialBefore + await trivialRate(trivial.url, C, Math.min(M, 10_000), onceBytes)) / 2
    console.log(`  replay of one signed call: ${M} calls in ${s3.toFixed(1)} s = ${replayRate.toFixed(0)} calls/s; trivial node:http beside it ${trivialAround.toFixed(0)} /s; ratio ${(replayRate / trivialAround).toFixed(3)}`)
    ratios.replay = replayRate / trivialAround
    const replayCpu = serverCpu / M
    console.log(`  replay CPU: executor ${(replayCpu * 1e6).toFixed(0)} µs per call; trivial node:http ${(trivialCpu * 1e6).toFixed(0)} µs per answer; ratio ${(trivialCpu / replayCpu).toFixed(3)}`)
    check(final !== undefined && onceOther === 0 && sameFinal + samePending === M,
      `M=${M} copies: ${sameFinal} byte-identical final answers, ${samePending} byte-identical pending tallies (sent while it ran), ${onceOther} other${unsure.length > 0 ? `: ${unsure.map(String).join(" | ")}` : ""}`)
    const pendingTally = pending === undefined ? undefined : tallyOf({ status: 200, bytes: pending })
    check(pendingTally === undefined || (pendingTally.call === identity(once) && pendingTally.acc === tallyOf({ status: 200, bytes: final! }).acc),
      "every pending answer is the same call's pending tally with the final tally's acc")
    const ranBefore = readFileSync(log, "utf8").split("\n").filter((l) => l !== "")
    check(ranBefore.filter((l) => l === `forward ${identity(once)}`).length === 1, "the replayed operation ran exactly once")
    check(ranBefore.length === 1 + expectTotal + 1, `the handler ran ${ranBefore.length} times = 1 (count) + ${expectTotal} (total) + 1 (once)`)

    // 4. SIGKILL and restart on the same store.
    await server.kill()
    const tRestart = performance.now()
    server = await spawnServe(flags, env)
    console.log(`  killed with SIGKILL; restarted in ${((performance.now() - tRestart) / 1000).toFixed(1)} s, ${server.resolved} pending records resolved`)
    d.close()
    driver = makeDriver(server.url, C)
    const d2 = driver
    const fresh = tallyOf(await d2.post(bytesOf(call(root, [wCount], "bench/book", { after: true }))))
    check(fresh.st === "failed" && codeOf(fresh) === "count_exhausted", `after restart the count stays spent (${fresh.st}/${codeOf(fresh)})`)
    const overTotal = tallyOf(await d2.post(bytesOf(call(root, [wTotal], "bench/pay", { amount: A, after: true }))))
    check(overTotal.st === "failed" && codeOf(overTotal) === "total_exhausted", `after restart the total stays spent (${overTotal.st}/${codeOf(overTotal)})`)
    const remainder = T - expectTotal * A
    const rest = tallyOf(await d2.post(bytesOf(call(root, [wTotal], "bench/pay", { amount: remainder, after: true }))))
    check(rest.st === "ok", `the remainder ${remainder} of the total is still accepted: nothing was over-consumed (${rest.st}/${codeOf(rest)})`)
    const restAgain = tallyOf(await d2.post(bytesOf(call(root, [wTotal], "bench/pay", { amount: 1, again: true }))))
    check(restAgain.st === "failed" && codeOf(restAgain) === "total_exhausted", "and after it the total is exactly spent")
    const replay = await d2.post(onceBytes)
    check(final !== undefined && replay.bytes.equals(final), "the replay is answered from the store, byte for byte, after the restart")
    const countReplay = await d2.post(countCalls[countOk[0] ?? 0])
    check(countOk.length === 1 && countReplay.bytes.equals(countAnswers.get(countOk[0])!), "the accepted count call's replay is byte for byte its answer")
    const afterList = await listed(d2, bytesOf(call(root, [wCount], "sys/tallies", { writ: identity(wCount) })))
    check(afterList.forward.length === 1 && firstList.forward.length === 1 &&
      encodeCanonical(afterList.forward[0], "utf16") === encodeCanonical(firstList.forward[0], "utf16"),
      "a new sys/tallies after the restart still lists the one accepted call")
    check((await listed(d2)).bytes.equals(firstList.bytes), "the first sys/tallies call's replay is byte for byte its answer")
    const ranAfter = readFileSync(log, "utf8").split("\n").filter((l) => l !== "")
    check(ranAfter.length === ranBefore.length + 1, `after the restart only the remainder call ran (${ranAfter.length - ranBefore.length} new runs)`)
  } finally {
    driver?.close()
    trivial?.kill()
    await server?.kill()
  }
  if (violations.length > 0) {
    console.log(`${violations.length} violation(s)`)
    process.exitCode = 1
    throw new Error(`executor concurrency proof failed: ${violations.join("; ")}`)
  }
  console.log("executor concurrency proof: every check held")
  const r = (x: number) => x.toFixed(2)
  console.log(`executor: count ${r(ratios.count)} total ${r(ratios.total)} replay ${r(ratios.replay)} (${synchronous === "full" ? "durable" : "synchronous=normal"})`)
}
