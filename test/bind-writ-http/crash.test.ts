// The kill test: the executor (`writ serve`, SQLite store) is killed with SIGKILL at
// seeded random moments while a seeded mix of calls, retries and revokes is in flight, 20 times,
// and restarted on the same store. After each restart nothing it answered may be lost:
//   - every call it accepted (answered with a final or a pending tally) is answered again with a
//     final tally: byte for byte the one it gave, or, for a pending one, the resolved tally with
//     the same `acc` (section 9);
//   - no operation ever runs twice (the handler's own append-only log);
//   - a consumed `count` or `total` stays consumed: the uses and amounts it accepted, plus any it
//     accepts afterwards, never pass the bound;
//   - every revoke it acknowledged (an ack returned) still refuses forward calls (`revoked`).
import { readFileSync } from "node:fs"
import * as Http from "node:http"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { type Answer, call, identity, key, postRaw, prefix, prng, revoke, type ServeProcess, spawnServe, tempDir, writ, writeKeyFile } from "./support.js"

const KILLS = 20
const WORKERS = 12
const COUNT = 40
const TOTAL = 300


/** Section 7 steps 3 to 10: a signed refusal, which accepts nothing. */
const REFUSALS = new Set([
  "chain_broken", "not_narrowed", "expired", "root_not_accepted", "wrong_executor", "revoked", "peer_mismatch",
  "no_standing", "forbidden_op", "missing_arg", "out_of_bounds", "count_exhausted", "total_exhausted",
  "mandate/store_unavailable"
])

const post = (agent: Http.Agent, url: string, body: JsonObject): Promise<Answer> =>
  postRaw(agent, url, Buffer.from(encodeCanonical(body, "utf16")))

const tallyOf = (a: Answer): JsonObject => (JSON.parse(a.bytes.toString()) as { tally: JsonObject }).tally
const codeOf = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null

describe("SIGKILL under load", () => {
  let server: ServeProcess | undefined
  afterAll(async () => {
    await server?.kill()
  })

  it(`loses no accepted call, consumed count or total, or acknowledged revoke across ${KILLS} kills`, async () => {
    const rand = prng(0x5eed)
    const root = key(201)
    const exec = key(202)
    const dir = tempDir("crash")
    const log = join(dir, "handler.log")
    const flags = ["--port", "0", "--store", join(dir, "executor.db"), "--key", writeKeyFile(dir, exec), "--root", root.did]
    const env = { WRIT_HANDLER_LOG: log, WRIT_HANDLER_DELAY_MS: "40" }
    const act = { act: prefix("k/") }
    const wPlain = writ(root, exec, act)
    const wCount = writ(root, exec, { ...act, uses: { t: "count", v: COUNT } })
    const wTotal = writ(root, exec, { ...act, amount: { t: "total", v: TOTAL } })

    // What the executor promised, by call identity.
    const accepted = new Map<string, {
      call: JsonObject; bytes: Buffer; tally: JsonObject; kind: "plain" | "count" | "total" | "revocable"; amount: number; round: number
    }>()
    let round = 0
    const sent: Array<JsonObject> = []
    const acked: Array<{ writ: JsonObject; round: number }> = []
    // Writs a revoke was sent for (recorded or not: its answer may have died with the process).
    // Section 7 checks revocation (step 7) before replay (step 9), so a retry of a call under such
    // a writ may be refused `revoked`; its tally is then recovered through sys/tallies (section 8.2).
    const revokeSent = new Map<string, JsonObject>()
    const underRevoked = (c: JsonObject) => revokeSent.has(identity((c.chain as Array<JsonObject>)[0]))
    let countExhaustedSeen = false
    let totalUsed = 0
    const violations: Array<string> = []
    const stats = { answered: 0, lost: 0, pending: 0, refused: 0, revokesAcked: 0, resolved: 0, retries: 0 }

    /** `exhaustedAtSend`: a fresh count call sent after a count_exhausted answer had arrived. */
    const record = (c: JsonObject, kind: "plain" | "count" | "total" | "revocable", amount: number, a: Answer, exhaustedAtSend = false) => {
      if (a.status !== 200) return void violations.push(`call answered ${a.status}: ${a.bytes}`)
      stats.answered++
      const t = tallyOf(a)
      const id = identity(c)
      const refused = t.st === "failed" && REFUSALS.has(codeOf(t) ?? "")
      if (refused) {
        stats.refused++
        const code = codeOf(t)
        if (code === "count_exhausted") countExhaustedSeen = true
        if (!["count_exhausted", "total_exhausted", "revoked"].includes(code ?? "")) violations.push(`unexpected refusal ${code}`)
        if (accepted.has(id) && !(code === "revoked" && underRevoked(c))) violations.push(`call ${id} accepted before, refused ${code} now`)
        return
      }
      if (t.st === "pending") stats.pending++
      const before = accepted.get(id)
      if (before === undefined) {
        if (kind === "count" && exhaustedAtSend) violations.push(`a count call sent after count_exhausted was accepted`)
        if (kind === "total") totalUsed += amount
        accepted.set(id, { call: c, bytes: a.bytes, tally: t, kind, amount, round })
      } else if (before.tally.st !== "pending") {
        if (!a.bytes.equals(before.bytes)) violations.push(`replay of ${id} differs from its final answer`)
      } else {
        if (t.acc !== before.tally.acc) violations.push(`replay of ${id} changed acc`)
        if (t.st !== "pending") accepted.set(id, { ...before, bytes: a.bytes, tally: t })
      }
    }

    for (round = 0; round <= KILLS; round++) {
      server = await spawnServe(flags, env)
      stats.resolved += server.resolved
      const agent = new Http.Agent({ keepAlive: true, maxSockets: WORKERS })
      const url = server.url

      // After a restart: every accepted call answers a final tally (its own bytes, or the resolved
      // pending one with the same acc), and every acknowledged revoke still refuses. Each restart
      // re-asks the calls accepted since the previous one and a seeded sample of older ones; the
      // last restart re-asks every one.
      const t0 = performance.now()
      const recheck = [...accepted].filter(([, a]) =>
        round === KILLS || a.round === round - 1 || a.tally.st === "pending" || rand() < 0.1
      )
      for (const [id, a] of recheck) {
        if (round === 0) break
        const again = await post(agent, url, a.call)
        const t = tallyOf(again)
        // Checked through sys/tallies at the end instead (see revokeSent).
        if (t.st === "failed" && codeOf(t) === "revoked" && underRevoked(a.call)) continue
        if (t.st === "pending") violations.push(`round ${round}: ${id} still pending after restart`)
        if (a.tally.st !== "pending" && !again.bytes.equals(a.bytes)) violations.push(`round ${round}: ${id} answer changed after restart`)
        if (a.tally.st === "pending") {
          if (t.acc !== a.tally.acc || t.call !== id) violations.push(`round ${round}: ${id} resolved with another acc`)
          accepted.set(id, { ...a, bytes: again.bytes, tally: t })
        }
      }
      for (const r of acked.filter((r) => round === KILLS || r.round === round - 1 || rand() < 0.2)) {
        const t = tallyOf(await post(agent, url, call(root, [r.writ], "k/after")))
        if (t.st !== "failed" || codeOf(t) !== "revoked") violations.push(`round ${round}: revoke of round ${r.round} lost (${t.st}/${codeOf(t)})`)
      }
      const checkSecs = (performance.now() - t0) / 1000
      if (round === KILLS) {
        agent.destroy()
        break
      }

      // Load: a seeded mix of new calls, retries and a revoke, with WORKERS requests in flight.
      let revocable = writ(root, exec, act)
      let killed = false
      const worker = async () => {
        while (!killed) {
          const r = rand()
          const n = Math.floor(r * 1e9) // integers only (section 1.1)
          try {
            if (r < 0.25) {
              const c = call(root, [wPlain], "k/plain", { n })
              sent.push(c)
              record(c, "plain", 0, await post(agent, url, c))
            } else if (r < 0.45) {
              const c = call(root, [wCount], "k/count", { n })
              sent.push(c)
              const exhausted = countExhaustedSeen
              record(c, "count", 0, await post(agent, url, c), exhausted)
            } else if (r < 0.65) {
              const amount = 1 + Math.floor(rand() * 9)
              const c = call(root, [wTotal], "k/total", { amount })
              sent.push(c)
              record(c, "total", amount, await post(agent, url, c))
            } else if (r < 0.8) {
              const c = call(root, [revocable], "k/revocable", { n })
              sent.push(c)
              record(c, "revocable", 0, await post(agent, url, c))
            } else if (r < 0.95 && sent.length > 0) {
              // A retry of the identical signed call (answered before or not).
              const c = sent[Math.floor(rand() * sent.length)]
              stats.retries++
              const bnd = (c.chain as Array<JsonObject>)[0].bnd as JsonObject
              const kind = "uses" in bnd ? "count" : "amount" in bnd ? "total" : c.op === "k/revocable" ? "revocable" : "plain"
              const amount = typeof (c.args as JsonObject).amount === "number" ? (c.args as JsonObject).amount as number : 0
              record(c, kind, amount, await post(agent, url, c))
            } else {
              const target = revocable
              revocable = writ(root, exec, act)
              revokeSent.set(identity(target), target)
              const a = await post(agent, url, revoke(root, [target]))
              if (a.status === 200) {
                const body = JSON.parse(a.bytes.toString()) as { ack?: JsonObject }
                if (body.ack !== undefined) {
                  acked.push({ writ: target, round })
                  stats.revokesAcked++
                }
              } else if (a.status !== 503) violations.push(`revoke answered ${a.status}`)
            }
          } catch {
            // The connection died with the process: no answer, so nothing was promised.
            stats.lost++
          }
        }
      }
      const workers = Array.from({ length: WORKERS }, worker)
      await new Promise((r) => setTimeout(r, 150 + Math.floor(rand() * 650)))
      killed = true
      await server.kill()
      await Promise.all(workers)
      agent.destroy()
      if (process.env.CRASH_TEST_VERBOSE !== undefined) {
        console.log(`round ${round}: rechecked ${recheck.length} in ${checkSecs.toFixed(1)} s; accepted ${accepted.size}, lost ${stats.lost}, resolved ${stats.resolved}`)
      }
    }

    // No operation ran twice, across every crash.
    const runs = readFileSync(log, "utf8").split("\n").filter((l) => l !== "")
    const dup = runs.length - new Set(runs).size
    if (dup !== 0) violations.push(`${dup} operations ran twice`)

    // Consumed limits stay consumed: what was accepted plus what is accepted now stays in bounds.
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
    let countNow = 0
    for (;;) {
      const t = tallyOf(await post(agent, server!.url, call(root, [wCount], "k/count", { final: countNow })))
      if (t.st === "failed" && codeOf(t) === "count_exhausted") break
      countNow++
      if (countNow > COUNT) break
    }
    const countSeen = [...accepted.values()].filter((a) => a.kind === "count").length
    if (countSeen + countNow > COUNT) violations.push(`count: ${countSeen} accepted before + ${countNow} now > ${COUNT}`)
    let totalNow = 0
    for (const amount of [9, 5, 3, 2, 1]) {
      for (;;) {
        const t = tallyOf(await post(agent, server!.url, call(root, [wTotal], "k/total", { amount })))
        if (t.st === "failed" && codeOf(t) === "total_exhausted") break
        totalNow += amount
        if (totalNow > TOTAL) break
      }
    }
    if (totalUsed + totalNow > TOTAL) violations.push(`total: ${totalUsed} accepted before + ${totalNow} now > ${TOTAL}`)

    // Every accepted plain call is still in the tally store (sys/tallies under its writ).
    const listed = JSON.parse((await post(agent, server!.url, call(root, [wPlain], "sys/tallies", { writ: identity(wPlain) }))).bytes.toString()) as {
      res?: { tallies: Array<JsonObject> }
    }
    const held = new Set((listed.res?.tallies ?? []).map((t) => t.call))
    const missing = [...accepted.entries()].filter(([id, a]) => a.kind === "plain" && !held.has(id))
    if (missing.length > 0) violations.push(`${missing.length} accepted calls missing from sys/tallies`)
    // Calls under revoked writs: their final tallies are still held (standing survives a revoke).
    let recoveredUnderRevoked = 0
    for (const [wid, w] of revokeSent) {
      const mine = [...accepted.entries()].filter(([, a]) => a.kind === "revocable" && identity((a.call.chain as Array<JsonObject>)[0]) === wid)
      if (mine.length === 0) continue
      const body = JSON.parse((await post(agent, server!.url, call(root, [w], "sys/tallies", { writ: wid }))).bytes.toString()) as {
        res?: { tallies: Array<JsonObject> }
      }
      const byCall = new Map((body.res?.tallies ?? []).map((t) => [t.call as string, t]))
      for (const [id, a] of mine) {
        const t = byCall.get(id)
        recoveredUnderRevoked++
        if (t === undefined) violations.push(`accepted call ${id} under a revoked writ missing from sys/tallies`)
        else if (a.tally.st !== "pending" && encodeCanonical(t, "utf16") !== encodeCanonical(a.tally, "utf16")) {
          violations.push(`accepted call ${id} under a revoked writ: held tally differs from its answer`)
        } else if (t.acc !== a.tally.acc) violations.push(`accepted call ${id} under a revoked writ: acc changed`)
      }
    }
    agent.destroy()

    console.log(
      `kill test: ${KILLS} kills; ${stats.answered} answers (${accepted.size} calls accepted, ${stats.pending} pending answers, ` +
        `${stats.refused} refused), ${stats.retries} retries, ${stats.lost} requests cut off, ${stats.revokesAcked} revokes acked, ` +
        `${stats.resolved} pending records resolved at restarts, ${runs.length} operations run, ` +
        `${recoveredUnderRevoked} calls under revoked writs recovered through sys/tallies; count ${countSeen}+${countNow}/${COUNT}, ` +
        `total ${totalUsed}+${totalNow}/${TOTAL}`
    )
    expect(violations).toEqual([])
    // The run exercised what it claims to: crashes with work in flight, and exhausted limits.
    expect(stats.resolved).toBeGreaterThan(0)
    expect(stats.revokesAcked).toBeGreaterThan(0)
    expect(countExhaustedSeen).toBe(true)
  }, 300_000)
})
