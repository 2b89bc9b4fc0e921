// Two real `writ serve` processes on one store (a SQLite file, a PostgreSQL schema), one executor
// key, as an operator's rolling restart leaves them (spec section 9 with several processes):
//   - the second starts while the first runs a call: its start-up recovery leaves that call alone
//     (the owner is alive), both are asked for it, and both answer the one final tally; the
//     operation ran once;
//   - a process killed mid-call: the other takes its call over (its owner is gone) and resolves it
//     once, `unknown_outcome`;
//   - a revoke acked by one refuses every replay at the other from then on (section 7: step 7
//     before step 9's stored answer), plain replay path included: zero stale answers.
// The handler holds a call whose `hold` argument is true until a file exists (no long sleeps).
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { dropSchema, pgReachable, uniqueSchema } from "../store-pg-writ/support.js"
import { type Answer, call, identity, key, postRaw, prefix, revoke, type ServeProcess, spawnServe, tempDir, writ, writeKeyFile } from "./support.js"

const up = await pgReachable()
const schema = uniqueSchema("wshared")
const REPLAYS = 200

const post = (agent: Http.Agent, url: string, body: JsonObject): Promise<Answer> =>
  postRaw(agent, url, Buffer.from(encodeCanonical(body, "utf16")))
const tallyOf = (a: Answer): JsonObject => (JSON.parse(a.bytes.toString()) as { tally: JsonObject }).tally
const codeOf = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null
const performed = (log: string, c: JsonObject): number =>
  existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l === `forward ${identity(c)}`).length : 0

/** Resolves once `f` holds, checking every 20 ms (no timed assertion: the test's own timeout bounds it). */
const until = async (f: () => boolean): Promise<void> => {
  while (!f()) await new Promise((r) => setTimeout(r, 20))
}

const running: Array<ServeProcess> = []
const spawn = async (flags: ReadonlyArray<string>, env: Record<string, string>) => {
  const p = await spawnServe(flags, env)
  running.push(p)
  return p
}
afterAll(async () => {
  // Every process stopped (and exited) before its schema is dropped: their heartbeats write there.
  for (const p of running) await p.kill()
  if (up) await dropSchema(schema)
})

const stores: ReadonlyArray<{ readonly name: string; readonly skip: boolean; readonly store: (dir: string) => string }> = [
  { name: "one SQLite file", skip: false, store: (dir) => join(dir, "executor.db") },
  { name: "one PostgreSQL schema", skip: !up, store: () => `postgres://postgres@127.0.0.1:5432/test#${schema}` }
]

for (const s of stores) {
  describe.skipIf(s.skip)(`two writ serve processes on ${s.name}`, () => {
    const root = key(231)
    const exec = key(232)
    const dir = tempDir("shared-store")
    const log = join(dir, "handler.log")
    const releaseFile = join(dir, "release")
    const flags = ["--port", "0", "--store", s.store(dir), "--key", writeKeyFile(dir, exec), "--root", root.did, "--orphan-sweep-ms", "200"]
    const env = { WRIT_HANDLER_LOG: log, WRIT_HANDLER_RELEASE: releaseFile }
    const w = writ(root, exec, { act: prefix("k/") })

    it("the second process, started during a call, leaves it to its owner: one answer, one perform", async () => {
      const agent = new Http.Agent({ keepAlive: true })
      const a = await spawn(flags, env)
      const c = call(root, [w], "k/held", { hold: true })
      const first = post(agent, a.url, c)
      await until(() => performed(log, c) === 1)
      const b = await spawn(flags, env)
      // The owner is alive: B's start-up recovery resolved nothing, and B answers the call pending.
      expect(b.resolved).toBe(0)
      const meanwhile = tallyOf(await post(agent, b.url, c))
      expect(meanwhile.st).toBe("pending")
      // A few of B's sweeps pass while the call still runs: none takes it over.
      await new Promise((r) => setTimeout(r, 600))
      expect(tallyOf(await post(agent, b.url, c)).st).toBe("pending")
      writeFileSync(releaseFile, "")
      const answered = await first
      expect(tallyOf(answered).st).toBe("ok")
      // Both processes, asked again, answer the one final tally byte for byte.
      for (const p of [a, b, a, b]) expect((await post(agent, p.url, c)).bytes.equals(answered.bytes)).toBe(true)
      expect(performed(log, c)).toBe(1)
      agent.destroy()
      await a.kill()
      await b.kill()
    }, 120_000)

    it("a process killed mid-call: the other takes the call over and resolves it once", async () => {
      const agent = new Http.Agent({ keepAlive: true })
      const a = await spawn(flags, { ...env, WRIT_HANDLER_RELEASE: join(dir, "never") })
      const b = await spawn(flags, env)
      const c = call(root, [w], "k/killed", { hold: true })
      const lost = post(agent, a.url, c).catch(() => undefined)
      await until(() => performed(log, c) === 1)
      expect(tallyOf(await post(agent, b.url, c)).st).toBe("pending")
      await a.kill()
      expect(await lost).toBeUndefined()
      // B's sweep resolves it: the owner's process is gone (SQLite: its pid; PostgreSQL: its session).
      let t = tallyOf(await post(agent, b.url, c))
      while (t.st === "pending") {
        await new Promise((r) => setTimeout(r, 50))
        t = tallyOf(await post(agent, b.url, c))
      }
      expect([t.st, codeOf(t)]).toEqual(["failed", "unknown_outcome"])
      const resolved = await post(agent, b.url, c)
      const again = await spawn(flags, env)
      expect((await post(agent, again.url, c)).bytes.equals(resolved.bytes)).toBe(true)
      expect(performed(log, c)).toBe(1)
      agent.destroy()
      await b.kill()
      await again.kill()
    }, 120_000)

    it(`a revoke acked by one process refuses every later replay at the other (${REPLAYS} replays, zero stale)`, async () => {
      const agent = new Http.Agent({ keepAlive: true })
      const a = await spawn(flags, env)
      const b = await spawn(flags, env)
      const wr = writ(root, exec, { act: prefix("k/") })
      const c = call(root, [wr], "k/replayed")
      const answered = await post(agent, b.url, c)
      expect(tallyOf(answered).st).toBe("ok")
      // Replays at B, enough to reach its plain replay path (its audit allowance spent).
      for (let i = 0; i < 50; i++) expect((await post(agent, b.url, c)).bytes.equals(answered.bytes)).toBe(true)
      const acked = JSON.parse((await post(agent, a.url, revoke(root, [wr]))).bytes.toString()) as { ack?: JsonObject }
      expect(acked.ack).toBeDefined()
      let stale = 0
      for (let i = 0; i < REPLAYS; i++) {
        const t = tallyOf(await post(agent, b.url, c))
        if (!(t.st === "failed" && codeOf(t) === "revoked")) stale++
      }
      expect(stale).toBe(0)
      agent.destroy()
      await a.kill()
      await b.kill()
    }, 120_000)
  })
}
