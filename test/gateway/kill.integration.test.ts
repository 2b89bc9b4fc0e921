// kill -9 of a gateway process mid-stream, then a restart on the same store (issue 29): the call's
// reservation, held under the killed process's owner lease, is settled once that lease lapses, by
// the documented rule (src/gateway/recovery.ts: a failed call that kept its whole worst case,
// `recovered_after_crash`), exactly once, with its settlement line in the ledger; the budget's spent
// amount is the ledger's settled sum; the restarted gateway serves. On SQLite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, ManagedRuntime, Stream } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gatewayAdminStores } from "../../src/app/gateway.js"
import { runOf } from "../../src/gateway/guarded-call.js"
import { sha256Hex } from "../../src/gateway/http.js"
import { spentNow } from "../../src/gateway/keys.js"
import { toNanos } from "../../src/ledger/usd.js"
import { LedgerStore } from "../../src/ledger/writer.js"
import { dropSchema, pgReachable, uniqueSchema } from "../store-pg-writ/support.js"
import { type FakeUpstream, startFake } from "./fake-upstream.js"
import { killAll, startGatewayProcess } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "gw-kill-"))
const MODEL = "gpt-4o-mini"
const KEY = "k-killed"

let fake: FakeUpstream
beforeAll(async () => {
  fake = await startFake()
})
afterAll(async () => {
  await killAll()
  await fake.close()
})

/** Starts `mandate gateway` on `store` with a 1 s lease. */
const startGateway = (store: string) =>
  startGatewayProcess(["--upstream", fake.url, "--port", "0", "--store", store, "--budget", "5", "--lease", "1"])

const streamRequest = (url: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 2000, stream: true })
  })

const pg = await pgReachable()
if (!pg) console.log("notice: PostgreSQL is not reachable; the kill test on PostgreSQL is skipped")
const schema = uniqueSchema("gwkill")
// Dropped once no gateway holds a connection to it: their lease heartbeats write there.
afterAll(async () => {
  await killAll()
  if (pg) await dropSchema(schema)
})

const stores: Array<[string, string, boolean]> = [
  ["SQLite", join(dir, "gw.db"), true],
  ["PostgreSQL", `postgres://postgres@127.0.0.1:5432/test#${schema}`, pg]
]

describe.each(stores)("kill -9 of a gateway mid-stream (%s)", (_name, store, available) => {
  it.skipIf(!available)("the restarted gateway settles the killed call once, at its worst case; ledger and budget agree", async () => {
    const first = await startGateway(store)
    let resume!: () => void
    fake.behaviour.chunks = 20
    fake.behaviour.pauseAfter = 2
    fake.behaviour.resume = new Promise<void>((r) => (resume = r))
    try {
      const r = await streamRequest(first.url)
      expect(r.status).toBe(200)
      const reader = r.body!.getReader()
      await reader.read()
      // Mid-stream: the call is reserved and in flight. The process dies without a word.
      const died = new Promise((res) => first.child.once("exit", res))
      first.child.kill("SIGKILL")
      await died
      await reader.read().catch(() => undefined)
    } finally {
      fake.behaviour.pauseAfter = undefined
      resume()
      fake.behaviour.chunks = 3
    }
    const rt = ManagedRuntime.make(gatewayAdminStores(store))
    try {
      const run = runOf({ keyId: sha256Hex(KEY) })
      const events = async () => [...await rt.runPromise(Effect.flatMap(LedgerStore, (s) => Stream.runCollect(s.lines)))].map((l) => JSON.parse(l) as Record<string, any>)
      const reserved = (await events()).filter((e) => e.type === "reservation" && e.run_id === run)
      expect(reserved.length).toBe(1)
      const worstNanos = BigInt(reserved[0]!.draws[0].amount as string)
      // Held while nobody has recovered it: its worst case is counted, nothing is lost.
      expect(await rt.runPromise(spentNow("key", sha256Hex(KEY), null, "UTC"))).toBe(worstNanos / 1000n)

      const second = await startGateway(store)
      // The killed process's lease lapses after 1 s; the restarted gateway sweeps once a period.
      const recovered = async () => (await events()).filter((e) => e.type === "settlement" && e.run_id === run)
      while ((await recovered()).length === 0) await new Promise((res) => setTimeout(res, 50))
      const [settlement, ...more] = await recovered()
      expect(more).toEqual([])
      expect(settlement).toMatchObject({ state: "failed", reason: "recovered_after_crash", reservation_id: reserved[0]!.reservation_id })
      expect(toNanos(settlement!.kept_usd)).toBe(worstNanos)
      expect(await rt.runPromise(spentNow("key", sha256Hex(KEY), null, "UTC"))).toBe(worstNanos / 1000n)

      // The restarted gateway serves, and charges the key on top of the recovered call, once.
      const next = await fetch(`${second.url}/v1/chat/completions`, {
        method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 10 })
      })
      expect(next.status).toBe(200)
      await next.text()
      const settled = async () => (await recovered()).reduce((a, e) => a + toNanos(e.kept_usd), 0n)
      while ((await recovered()).length < 2) await new Promise((res) => setTimeout(res, 20))
      expect(await rt.runPromise(spentNow("key", sha256Hex(KEY), null, "UTC"))).toBe((await settled()) / 1000n)
      // Another full lease period: the recovered call is not settled a second time.
      await new Promise((res) => setTimeout(res, 1500))
      expect((await recovered()).filter((e) => e.reason === "recovered_after_crash").length).toBe(1)
      second.child.kill("SIGKILL")
    } finally {
      await rt.dispose()
    }
  }, 60_000)
})

describe.skipIf(!pg)("gateways starting at once on a new PostgreSQL schema", () => {
  const schemas = Array.from({ length: 4 }, (_, i) => uniqueSchema(`gwrace${i}`))
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s)
  })
  it("all open the one ledger one of them created (the loser of the creation race does not fail)", async () => {
    for (const s of schemas) {
      const store = `postgres://postgres@127.0.0.1:5432/test#${s}`
      const rts = Array.from({ length: 3 }, () => ManagedRuntime.make(gatewayAdminStores(store)))
      try {
        const heads = await Promise.all(rts.map((rt) => rt.runPromise(Effect.flatMap(LedgerStore, (l) => l.head))))
        // One header line, the same for all: the ledger was created once.
        expect(heads.map((h) => h.seq)).toEqual([0, 0, 0])
        expect(new Set(heads.map((h) => h.hash)).size).toBe(1)
      } finally {
        for (const rt of rts) await rt.dispose()
      }
    }
  })
})
