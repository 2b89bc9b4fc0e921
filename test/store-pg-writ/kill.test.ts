// The kill test against 3 `writ serve` workers on one PostgreSQL schema, serving
// one executor key. A seeded load of count, total and plain calls, retries and revokes goes to the
// workers in turn (as a balancer in front of one address would send it) while a seeded random
// worker is killed with SIGKILL at a seeded random moment and restarted, KILLS times. Afterwards:
//   - every call that was ever answered with a tally (or sent and never answered, and later
//     accepted) answers a final tally on every worker: byte for byte the final one first given, or
//     for a pending one the resolved tally with the same `acc` (section 9);
//   - nothing ran twice (the handler's append-only log, shared by the workers);
//   - `count` is exact: the calls accepted under it, counted over everything ever sent plus the
//     calls accepted until it refuses, are exactly its bound; `total` likewise to the unit;
//   - every acknowledged revoke refuses forward calls on every worker (`revoked`).
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import * as Http from "node:http"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { type Answer, answerCount, call, identity, key, postRaw, prefix, prng, revoke, type ServeProcess, spawnServe, tempDir, writ, writeKeyFile } from "../bind-writ-http/support.js"
import { dropSchema, pgReachable, uniqueSchema } from "./support.js"

const up = await pgReachable()
const schema = uniqueSchema("wkill")
const KILLS = 8
const N = 3
const CLIENTS = 9
const COUNT = 30
const TOTAL = 200

const post = (agent: Http.Agent, url: string, body: JsonObject): Promise<Answer> =>
  postRaw(agent, url, Buffer.from(encodeCanonical(body, "utf16")))
const tallyOf = (a: Answer): JsonObject => (JSON.parse(a.bytes.toString()) as { tally: JsonObject }).tally
const codeOf = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null

describe.skipIf(!up)("SIGKILL against 3 PostgreSQL workers on one executor key", () => {
  const workers: Array<ServeProcess | undefined> = []
  afterAll(async () => {
    for (const w of workers) await w?.kill()
    await dropSchema(schema)
  })

  it(`keeps count and total exact, replays byte-identical and runs nothing twice across ${KILLS} kills`, async () => {
    const rand = prng(0x13b4)
    const root = key(211)
    const exec = key(212)
    const dir = tempDir("pg-kill")
    const log = join(dir, "handler.log")
    const flags = ["--port", "0", "--store", `postgres://postgres@127.0.0.1:5432/test#${schema}`, "--pg-connections", "4",
      "--key", writeKeyFile(dir, exec), "--root", root.did]
    // Operations last up to 150 ms, so a kill finds some of them running (pending records to resolve).
    const env = { WRIT_HANDLER_LOG: log, WRIT_HANDLER_DELAY_MS: "150" }
    const act = { act: prefix("k/") }
    const wPlain = writ(root, exec, act)
    const wCount = writ(root, exec, { ...act, uses: { t: "count", v: COUNT } })
    const wTotal = writ(root, exec, { ...act, amount: { t: "total", v: TOTAL } })
    // Every worker ever started, the killed ones too: their log lines count the sweeps' resolutions.
    const started: Array<ServeProcess> = []
    // The first start creates the schema; the others join it.
    workers[0] = await spawnServe(flags, env)
    for (let i = 1; i < N; i++) workers[i] = await spawnServe(flags, env)
    started.push(...workers.filter((w): w is ServeProcess => w !== undefined))

    const sent = new Map<string, { call: JsonObject; kind: "plain" | "count" | "total"; amount: number }>()
    const answered = new Map<string, { bytes: Buffer; tally: JsonObject }>()
    const acked: Array<JsonObject> = []
    const violations: Array<string> = []
    const stats = { answers: 0, lost: 0, resolved: 0, kills: 0 }
    const answers = answerCount()
    let turn = 0
    const next = () => {
      const live = workers.filter((w): w is ServeProcess => w !== undefined)
      return live[turn++ % live.length].url
    }
    // Requests are numbered as they are sent and final answers as they arrive: an answer to a
    // request sent before the final answer arrived may still be the pending one (it was answered
    // while the operation ran); one sent after must be the final answer, byte for byte.
    let tick = 0
    const finalAt = new Map<string, number>()
    const send = (agent: Http.Agent, url: string, body: JsonObject) => {
      const sentAt = tick++
      return post(agent, url, body).then((a) => ({ a, sentAt }))
    }
    const note = (id: string, { a, sentAt }: { a: Answer; sentAt: number }) => {
      if (a.status !== 200) return void violations.push(`call answered ${a.status}: ${a.bytes}`)
      stats.answers++
      const t = tallyOf(a)
      if (t.st === "failed" && ["count_exhausted", "total_exhausted", "revoked"].includes(codeOf(t) ?? "")) return
      const before = answered.get(id)
      if (before !== undefined && t.acc !== before.tally.acc) violations.push(`${id}: acc changed`)
      if (before === undefined || before.tally.st === "pending") {
        answered.set(id, { bytes: a.bytes, tally: t })
        if (t.st !== "pending") finalAt.set(id, tick++)
      } else if (!a.bytes.equals(before.bytes) && !(t.st === "pending" && sentAt < finalAt.get(id)!)) {
        violations.push(`${id}: a replay differs from the final answer: ${before.bytes} then ${a.bytes}`)
      }
    }

    for (let round = 0; round < KILLS; round++) {
      const agent = new Http.Agent({ keepAlive: true, maxSockets: CLIENTS * N })
      let stop = false
      const client = async () => {
        while (!stop) {
          const r = rand()
          const url = next()
          try {
            if (r < 0.65) {
              const kind = r < 0.25 ? "count" : r < 0.45 ? "total" : "plain"
              const amount = kind === "total" ? 1 + Math.floor(rand() * 9) : 0
              const c = call(root, [kind === "count" ? wCount : kind === "total" ? wTotal : wPlain], `k/${kind}`,
                kind === "total" ? { amount } : { n: Math.floor(rand() * 1e9) })
              sent.set(identity(c), { call: c, kind, amount })
              note(identity(c), await send(agent, url, c))
            } else if (r < 0.95 && sent.size > 0) {
              // A retry of a signed call, on whichever worker is next.
              const ids = [...sent.keys()]
              const id = ids[Math.floor(rand() * ids.length)]
              note(id, await send(agent, url, sent.get(id)!.call))
            } else {
              const target = writ(root, exec, act)
              const a = await post(agent, url, revoke(root, [target]))
              if (a.status === 200 && (JSON.parse(a.bytes.toString()) as { ack?: JsonObject }).ack !== undefined) acked.push(target)
            }
          } catch {
            stats.lost++ // the worker died under the request: nothing was promised
          } finally {
            answers.add() // whatever came back moves the kill closer
          }
        }
      }
      const clients = Array.from({ length: CLIENTS }, client)
      // The kill comes after a seeded number of requests of this round's load came back
      // (test/bind-writ-http/support.ts answerCount), with CLIENTS more in flight, not after a delay.
      await answers.after(4 + Math.floor(rand() * 30), Promise.race(workers.map((w) => w!.exited)))
      const victim = Math.floor(rand() * N)
      await workers[victim]!.kill()
      stats.kills++
      workers[victim] = undefined
      await new Promise((r) => setTimeout(r, 100))
      stop = true
      await Promise.all(clients)
      agent.destroy()
      const restarted = await spawnServe(flags, env)
      stats.resolved += restarted.resolved
      workers[victim] = restarted
      started.push(restarted)
    }

    const agent = new Http.Agent({ keepAlive: true, maxSockets: 4 })
    // Every call ever sent, asked again on every worker until no answer is pending (the workers
    // that survived may still be running some): each answers the same final tally everywhere.
    const accepted = new Map<string, JsonObject>()
    for (const [id, s] of sent) {
      for (const w of workers) {
        let a = await send(agent, w!.url, s.call)
        for (let i = 0; i < 100 && a.a.status === 200 && tallyOf(a.a).st === "pending"; i++) {
          await new Promise((r) => setTimeout(r, 50))
          a = await send(agent, w!.url, s.call)
        }
        const t = tallyOf(a.a)
        if (t.st === "pending") violations.push(`${id} still pending`)
        if (t.st === "failed" && ["count_exhausted", "total_exhausted"].includes(codeOf(t) ?? "")) {
          if (answered.has(id)) violations.push(`${id} accepted before, refused ${codeOf(t)} now`)
          continue
        }
        accepted.set(id, t)
        note(id, a)
      }
    }
    // Nothing ran twice, across every kill and every worker.
    const runs = readFileSync(log, "utf8").split("\n").filter((l) => l !== "")
    const twice = runs.length - new Set(runs).size
    if (twice !== 0) violations.push(`${twice} operations ran twice`)
    // count and total are exact: what is accepted now fills each exactly to its bound.
    let countNow = 0
    for (; countNow <= COUNT; countNow++) {
      const t = tallyOf(await post(agent, next(), call(root, [wCount], "k/count", { final: countNow })))
      if (t.st === "failed" && codeOf(t) === "count_exhausted") break
    }
    const countBefore = [...sent].filter(([id, s]) => s.kind === "count" && accepted.has(id)).length
    if (countBefore + countNow !== COUNT) violations.push(`count: ${countBefore} accepted before + ${countNow} now != ${COUNT}`)
    let totalNow = 0
    for (; totalNow <= TOTAL; totalNow++) {
      const t = tallyOf(await post(agent, next(), call(root, [wTotal], "k/total", { amount: 1 })))
      if (t.st === "failed" && codeOf(t) === "total_exhausted") break
    }
    const totalBefore = [...sent].filter(([id, s]) => s.kind === "total" && accepted.has(id)).reduce((n, [, s]) => n + s.amount, 0)
    if (totalBefore + totalNow !== TOTAL) violations.push(`total: ${totalBefore} accepted before + ${totalNow} now != ${TOTAL}`)
    // Every acknowledged revoke holds on every worker.
    for (const target of acked) {
      for (const w of workers) {
        const t = tallyOf(await post(agent, w!.url, call(root, [target], "k/after")))
        if (t.st !== "failed" || codeOf(t) !== "revoked") violations.push(`an acknowledged revoke lost on a worker (${t.st}/${codeOf(t)})`)
      }
    }
    agent.destroy()
    // Section 9 resolves a dead worker's pending records at a restart, or by a live worker's sweep
    // (every 10 s) if that comes first: either shows the kills left records to resolve.
    const swept = started.reduce((n, w) =>
      n + [...w.output().matchAll(/resolved (\d+) pending records of processes that are gone/g)].reduce((m, x) => m + Number(x[1]), 0), 0)
    console.log(`pg kill test: ${stats.kills} kills of ${N} workers; ${stats.answers} answers, ${sent.size} calls sent, ` +
      `${accepted.size} accepted, ${stats.lost} requests cut off, ${stats.resolved} records resolved at restart, ` +
      `${swept} by sweeps, ${acked.length} revokes acked`)
    if (violations.length > 0) console.log(violations.join("\n"))
    expect(violations).toEqual([])
    expect(stats.resolved + swept).toBeGreaterThan(0)
    expect(countBefore).toBeGreaterThan(0)
  }, 600_000)
})

describe("writ serve --store postgres:// refused at start", () => {
  it("a server that cannot be reached stops the worker with mandate/store_unavailable, naming the store without credentials", async () => {
    const dir = tempDir("pg-down")
    const flags = ["--port", "0", "--store", "postgres://someone:secret@127.0.0.1:1/test#down", "--key", writeKeyFile(dir, key(213)), "--root", key(211).did]
    const failed = await spawnServe(flags).then(() => "started", (e: Error) => e.message)
    expect(failed).toMatch(/mandate\/store_unavailable/)
    expect(failed).toMatch(/postgres:\/\/127\.0\.0\.1:1\/test schema down/)
    expect(failed).not.toMatch(/secret/)
  }, 60_000)
})

describe.skipIf(!up)("a worker killed and not restarted (section 9 on N workers)", () => {
  const sweepSchema = uniqueSchema("wsweep")
  const procs: Array<ServeProcess> = []
  afterAll(async () => {
    for (const p of procs) await p.kill()
    await dropSchema(sweepSchema)
  })

  it("its pending record is resolved by a live worker's sweep, and the operation ran once", async () => {
    const root = key(214)
    const exec = key(215)
    const dir = tempDir("pg-sweep")
    const log = join(dir, "handler.log")
    const flags = ["--port", "0", "--store", `postgres://postgres@127.0.0.1:5432/test#${sweepSchema}`, "--pg-connections", "3",
      "--orphan-sweep-ms", "300", "--key", writeKeyFile(dir, exec), "--root", root.did]
    const env = { WRIT_HANDLER_LOG: log, WRIT_HANDLER_DELAY_MS: "20000" }
    const doomed = await spawnServe(flags, env)
    procs.push(doomed)
    const live = await spawnServe(flags, env)
    procs.push(live)
    // A call the test handler keeps running for at least 10 s (its delay is fixed by the call identity).
    const w = writ(root, exec, { act: prefix("k/") })
    let c = call(root, [w], "k/slow")
    while (createHash("sha256").update(identity(c)).digest().readUInt32BE(0) % 20_001 < 10_000) c = call(root, [w], "k/slow")
    const agent = new Http.Agent({ keepAlive: true })
    void post(agent, doomed.url, c).catch(() => undefined)
    for (let i = 0; i < 200 && !(existsSync(log) && readFileSync(log, "utf8").includes(identity(c))); i++) {
      await new Promise((r) => setTimeout(r, 50))
    }
    // Running on the first worker: the other answers it pending, and its sweeps leave it alone.
    await new Promise((r) => setTimeout(r, 700))
    expect(tallyOf(await post(agent, live.url, c)).st).toBe("pending")
    await doomed.kill()
    let t = tallyOf(await post(agent, live.url, c))
    for (let i = 0; i < 100 && t.st === "pending"; i++) {
      await new Promise((r) => setTimeout(r, 100))
      t = tallyOf(await post(agent, live.url, c))
    }
    agent.destroy()
    expect([t.st, codeOf(t)]).toEqual(["failed", "unknown_outcome"])
    // The sweep says so in its log line, which the kill test above counts.
    expect(live.output()).toMatch(/resolved 1 pending records of processes that are gone/)
    expect(readFileSync(log, "utf8").split("\n").filter((l) => l.endsWith(identity(c)))).toHaveLength(1)
  }, 120_000)
})
