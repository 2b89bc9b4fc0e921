// 200 concurrent COMMITs against one `total` never exceed it, and an auto
// frame replayed 1,000 times commits once, on SQLite and on PostgreSQL (and in memory).
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import * as MemoryYea from "../../src/store/memory/yea.js"
import * as PgStore from "../../src/store/postgres/client.js"
import * as PgYea from "../../src/store/postgres/yea.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as SqliteYea from "../../src/store/sqlite/yea.js"
import { Reservations } from "../../src/accounting/reservations.js"
import type { StoreError } from "../../src/accounting/store-error.js"
import type { StateContext } from "../../src/yea/service/env.js"
import { CALENDAR_ID } from "../../src/examples/calendar.js"
import { signProof } from "../../src/yea/proof.js"
import { AGENT, issue } from "../yea/_helpers.js"
import { pgReachable, uniqueSchema } from "../accounting/pg.js"
import { calendar, clientOf, shop } from "../yea-service/support.js"

const up = await pgReachable()
const schema = uniqueSchema("yea")
const dir = mkdtempSync(join(tmpdir(), "yea-store-"))
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (!up) return
  await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(Effect.provide(PgStore.layer())))
})

// One seed per test: the PostgreSQL tests share one schema, so two tests drawing the same ids
// (proposals, receipts) would collide on its primary keys.
const seeded = (name: string) => RandomBytes.seeded(new Uint8Array([5, ...new TextEncoder().encode(name)]))
type Open = (name: string) => Layer.Layer<StateContext, StoreError>
const backends: ReadonlyArray<{ readonly name: string; readonly open: Open; readonly skip: boolean }> = [
  { name: "memory", open: (n: string) => Layer.merge(MemoryYea.layer, seeded(n)), skip: false },
  { name: "sqlite", open: (n: string) => Layer.merge(SqliteYea.layer.pipe(Layer.provideMerge(SqliteStore.layer(join(dir, `${n}.db`)))), seeded(n)), skip: false },
  { name: "postgres", open: (n: string) => Layer.merge(PgYea.layer.pipe(Layer.provideMerge(PgStore.layer({ schema, maxConnections: 8, connectTimeoutMs: 60_000 }))), seeded(n)), skip: !up }
]

const LIMIT = 10_000 // 100.00 USD
const PRICE = 1548 // m01 (9.49) with standard delivery (5.99)

for (const b of backends) {
  describe.skipIf(b.skip)(`concurrency on ${b.name}`, () => {
    it.live("200 concurrent COMMITs against one total never exceed it", () =>
      Effect.gen(function* () {
        const service = yield* shop
        const grant = issue([{ total: { of: "spend", max: LIMIT, scale: 2, unit: "USD" } }])
        const agent = yield* clientOf(service, { grants: [grant] })
        yield* agent.hello()
        const proposals = yield* Effect.forEach(Array.from({ length: 200 }), () =>
          Effect.flatMap(agent.intent("shop.order", { items: [{ sku: "m01", qty: 1 }], deliver: "2026-10-01" }), (r) =>
            r.kind === "PROPOSALS" ? Effect.succeed(r.proposals[0]) : Effect.die(r)))
        expect(proposals[0].uses?.spend.amount).toBe(PRICE)
        const replies = yield* Effect.forEach(proposals, (p) => agent.commit(p), { concurrency: "unbounded" })
        const committed = replies.filter((r) => r.kind === "RECEIPT").length
        const refused = replies.filter((r) => r.kind === "ERROR" && r.code === "consent_required").length
        expect(committed * PRICE).toBeLessThanOrEqual(LIMIT)
        expect(committed).toBe(Math.floor(LIMIT / PRICE))
        const others = replies.filter((r) => !(r.kind === "RECEIPT" || (r.kind === "ERROR" && r.code === "consent_required")))
        expect(others.map((r) => (r.kind === "ERROR" ? `${r.code}: ${r.message}` : r.kind)).slice(0, 3)).toEqual([])
        expect(committed + refused).toBe(200)
        const reservations = yield* Reservations
        const keys = replies.flatMap((r) => (r.kind === "ERROR" ? (r.need ?? []) : [])).length
        expect(keys).toBeGreaterThan(0)
      }).pipe(Effect.provide(b.open("totals"))), 120_000)

    it.live("an auto frame replayed 1,000 times commits once", () =>
      Effect.gen(function* () {
        const service = yield* calendar
        const grant = issue([{ svc: [CALENDAR_ID] }, { risk: "low" }])
        const proof = yield* Effect.provide(
          signProof(CALENDAR_ID, { verb: "INTENT", capability: "calendar.reschedule", auto: true, frameId: "auto-1" }),
          Signer.fromSeed(AGENT)
        )
        const frame = { yea: 1, id: "auto-1", verb: "INTENT", capability: "calendar.reschedule", params: { event: "1:1 with Ana" }, auto: true, grants: [grant], proof }
        const replies = yield* Effect.forEach(Array.from({ length: 1000 }), () => service.handle(JSON.parse(JSON.stringify(frame)), () => Effect.void), { concurrency: 16 })
        const receipts = replies.filter((r) => r.kind === "RECEIPT")
        const fresh = receipts.filter((r) => r.kind === "RECEIPT" && r.replay !== true)
        const kinds = new Set(replies.map((r) => (r.kind === "ERROR" ? `${r.code}: ${r.message}` : r.kind)))
        kinds.delete("unavailable: this auto frame is being answered")
        expect([...kinds], `replies: ${[...kinds].join(" | ")}`).toEqual(["RECEIPT"])
        expect(fresh).toHaveLength(1)
        expect(new Set(receipts.map((r) => (r.kind === "RECEIPT" ? r.receipt.id : ""))).size).toBe(1)
        // The calendar moved the meeting once: a fresh auto frame now finds it already moved.
        const agent = yield* clientOf(service, { grants: [grant] })
        yield* agent.hello()
        const found = yield* agent.ask("calendar.find", { query: "Ana" })
        expect(found.kind === "ANSWER" && JSON.stringify(found.data).includes("2026-09-30T09:30:00Z")).toBe(true)
      }).pipe(Effect.provide(b.open("auto"))), 120_000)
  })
}
