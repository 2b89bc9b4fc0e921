// The console's spend view and paged ledger lines against what the stores hold: a ledger with
// settlements (a guard under a token and a USD budget), Writ `consumed` lines (one drawing on two
// writs of a chain, one on a `total`) and YEA `uses_spent` lines in USD and EUR, and an executor
// store whose final calls' tallies report `used`. Every sum the API answers is compared with a sum
// computed here from the rows themselves (better-sqlite3, BigInt), unit by unit: USD is never
// added to EUR, nor the ledger's record to the store's.
import { it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import Database from "better-sqlite3"
import { Effect, Layer, Option, TestClock, TestContext } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { openStores, parseLocation } from "../../src/cli/ledger-open.js"
import type { LedgerLines, SpendView } from "../../src/console/api.js"
import { serveConsole } from "../../src/console/listen.js"
import { shortId } from "../../src/console/spend.js"
import type { ConsoleConfigShape } from "../../src/console/stores.js"
import { RandomBytes } from "../../src/kernel/index.js"
import { type Action, compose, createLedger, LedgerWriter, makeGuard, makeWriter, tokenBudget, type Usd, usdBudget } from "../../src/ledger/index.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import { AuditLog } from "../../src/writ/executor/stores.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-console-spend-"))
const ledgerFile = join(dir, "ledger.db")
const storeFile = join(dir, "store.sqlite")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ALICE = "did:key:z6MkAliceAliceAliceAliceAliceAliceAliceAlice1"
const BOB = "did:key:z6MkBobBobBobBobBobBobBobBobBobBobBobBobBob22"
const YEA_AGENT = "ed25519:QWdlbnRBZ2VudEFnZW50QWdlbnRBZ2VudEFnZW50QWc"

const cost = (tokens: number, usd: string) => ({ tokens, usd: usd as Usd, latency_ms: 0, risk: 0 })

/** The protocol lines: what each protocol's subscriber would have written. */
const protocolLines = [
  // A chain of two writs both bounding `uses`: one use, drawn on each writ (counted once).
  { protocol: "writ", kind: "consumed", principal: BOB, subject: "call-1", operation: "travel/charge", amounts: [{ name: "count:AAAAAAAA", amount: "1" }, { name: "count:BBBBBBBB", amount: "1" }] },
  { protocol: "writ", kind: "consumed", principal: ALICE, subject: "call-2", operation: "pay", amounts: [{ name: "count:CCCCCCCC", amount: "1" }, { name: "total:amount:CCCCCCCC", amount: "1250" }] },
  { protocol: "writ", kind: "accepted", principal: ALICE, subject: "call-2", operation: "pay" },
  { protocol: "yea", kind: "uses_spent", principal: YEA_AGENT, subject: "p1", operation: "shop.order", amounts: [{ name: "spend:USD", amount: "0.1" }] },
  { protocol: "yea", kind: "uses_spent", principal: YEA_AGENT, subject: "p2", operation: "shop.order", amounts: [{ name: "spend:USD", amount: "0.2" }] },
  { protocol: "yea", kind: "uses_spent", principal: ALICE, subject: "p3", operation: "shop.order", amounts: [{ name: "spend:EUR", amount: "5.5" }, { name: "emails", amount: "2" }] },
  { protocol: "yea", kind: "refused", principal: ALICE, subject: "p4", operation: "shop.order", reason: "grant_exhausted" }
] as const

const buildLedger = Effect.gen(function*() {
  const where = parseLocation(ledgerFile)
  yield* TestClock.setTime(Date.UTC(2026, 11, 1, 9, 30, 0))
  yield* createLedger({ ledger: "default", mode: "local_full", key: undefined }).pipe(Effect.provide(openStores(where)))
  yield* Effect.gen(function*() {
    const guard = yield* makeGuard({ mode: "enforce", policy: compose(tokenBudget(3000n), usdBudget("1.00" as Usd)), namespace: "spend", runId: "run-1", owner: "test" })
    const plan = [
      { principal: "agent-a", est: [800, "0.40"], actual: [700, "0.35"] },
      { principal: "agent-b", est: [300, "0.10"], actual: [250, "0.08"] },
      // Over the USD budget's remainder: refused, nothing kept.
      { principal: "agent-a", est: [1200, "0.90"], actual: [1100, "0.85"] },
      { principal: "agent-b", est: [400, "0.20"], actual: [300, "0.15"] }
    ] as const
    let n = 0
    for (const p of plan) {
      const action: Action = { id: `act-${++n}`, kind: "llm", metadata: { step: n }, estimate: cost(p.est[0], p.est[1]), principal: p.principal }
      yield* guard.guard(action, Effect.succeed({ value: n, actual: cost(p.actual[0], p.actual[1]) })).pipe(Effect.catchTag("ActionDenied", () => Effect.void))
      // A day and an hour apart, so buckets by hour and by day differ.
      yield* TestClock.adjust(n === 2 ? "1 day" : "1 hour")
    }
    const writer = yield* LedgerWriter
    for (const d of protocolLines) yield* writer.append([{ type: "protocol", decision: d as never }])
  }).pipe(Effect.provide(Layer.effect(LedgerWriter, makeWriter).pipe(Layer.provideMerge(Layer.merge(openStores(where), RandomBytes.seeded(new Uint8Array(8).fill(5)))))))
}).pipe(Effect.provide(TestContext.TestContext))

/** Final calls in the executor's store: their tallies' `used`, and an audit entry naming each caller. */
const calls = [
  { leaf: "LEAF1111aaaa", id: "i1", call: "CALL-1", acc: 1_796_000_000, used: { amount: 58900 }, from: ALICE },
  { leaf: "LEAF1111aaaa", id: "i2", call: "CALL-2", acc: 1_796_003_700, used: { amount: 100, nights: 2 }, from: ALICE },
  { leaf: "LEAF2222bbbb", id: "i3", call: "CALL-3", acc: 1_796_003_800, used: { amount: 7 }, from: BOB },
  { leaf: "LEAF2222bbbb", id: "i4", call: "CALL-4", acc: 1_796_003_900, used: {}, from: BOB }
]

const buildStore = Effect.gen(function*() {
  const log = yield* AuditLog
  for (const c of calls) {
    yield* log.append({ time: c.acc, kind: "call", identity: c.call, unparsed: null, principal: c.from, peer: null, root: null, leaf: c.leaf, op: "travel/book", outcome: "ok", reason: null, signed: null })
  }
}).pipe(Effect.provide(SqliteWrit.layer(storeFile)))

const insertCalls = (rows: ReadonlyArray<{ leaf: string; id: string; call: string; acc: number; tally: string }>) => {
  const db = new Database(storeFile)
  const ins = db.prepare(`INSERT INTO writ_calls (leaf, id, call, op, acc, standing, chain, issuers, exp, reservation, state, tally, res)
    VALUES (?, ?, ?, 'travel/book', ?, 0, '[]', '[]', 0, NULL, 'final', ?, NULL)`)
  for (const r of rows) ins.run(r.leaf, r.id, r.call, r.acc, r.tally)
  db.close()
}

beforeAll(async () => {
  await Effect.runPromise(buildLedger.pipe(Effect.provide(NodeContext.layer)))
  await Effect.runPromise(buildStore)
  insertCalls(calls.map((c) => ({ ...c, tally: JSON.stringify({ typ: "tally", st: "ok", used: c.used }) })))
}, 120_000)

// ------------------------------------------------------------------------------------------------
// The reference: sums computed here from the stored rows, exactly.

const dec = (s: string): [bigint, number] => {
  const [i, f = ""] = s.split(".")
  return [BigInt(i + f), f.length]
}
const show = (n: bigint, scale: number) => {
  if (scale === 0) return n.toString()
  const d = n.toString().padStart(scale + 1, "0")
  const f = d.slice(-scale).replace(/0+$/, "")
  return `${d.slice(0, -scale)}${f ? `.${f}` : ""}`
}
class Sums {
  readonly m = new Map<string, [bigint, number]>()
  add(key: string, amount: string) {
    const [a, sa] = dec(amount)
    const [b, sb] = this.m.get(key) ?? [0n, 0]
    const s = Math.max(sa, sb)
    this.m.set(key, [a * 10n ** BigInt(s - sa) + b * 10n ** BigInt(s - sb), s])
  }
  get(key: string) {
    const v = this.m.get(key)
    return v === undefined ? undefined : show(v[0], v[1])
  }
  keys() { return [...this.m.keys()].sort() }
}

/** Per record and unit, from the ledger's lines and the store's call rows as stored. */
const reference = () => {
  const sums = new Sums()
  const ledger = new Database(ledgerFile, { readonly: true })
  for (const { line } of ledger.prepare("SELECT line FROM ledger_lines ORDER BY seq").all() as Array<{ line: string }>) {
    const e = JSON.parse(line) as Record<string, any>
    if (e.type === "settlement") {
      if (e.kept_usd !== "0") sums.add("ledger USD", e.kept_usd)
      if (e.kept_tokens !== "0") sums.add("ledger tokens", e.kept_tokens)
    }
    if (e.type === "protocol" && e.decision.amounts) {
      if (e.decision.protocol === "yea") {
        for (const a of e.decision.amounts) sums.add(`ledger ${a.name.includes(":") ? a.name.split(":")[1] : a.name}`, a.amount)
      } else {
        // One call draws on every writ of its chain: the largest draw per name, once.
        const most = new Map<string, bigint>()
        for (const a of e.decision.amounts) {
          const parts = a.name.split(":")
          const unit = parts[0] === "count" ? "uses" : `writ:${parts[1]}`
          most.set(unit, BigInt(a.amount) > (most.get(unit) ?? 0n) ? BigInt(a.amount) : most.get(unit)!)
        }
        for (const [unit, v] of most) sums.add(`ledger ${unit}`, v.toString())
      }
    }
  }
  ledger.close()
  const store = new Database(storeFile, { readonly: true })
  for (const { tally } of store.prepare("SELECT tally FROM writ_calls WHERE state = 'final'").all() as Array<{ tally: string }>) {
    for (const [name, v] of Object.entries((JSON.parse(tally) as { used: Record<string, number> }).used)) sums.add(`store writ:${name}`, String(v))
  }
  store.close()
  return sums
}

// ------------------------------------------------------------------------------------------------

const none: ConsoleConfigShape = { store: Option.none(), ledger: Option.none(), policy: Option.none() }
const both: ConsoleConfigShape = { ...none, store: Option.some(storeFile), ledger: Option.some({ file: ledgerFile, name: "default" }), names: [{ id: ALICE, name: "alice" }] }

const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.async<{ status: number; body: any }>((resume) => {
    const u = new URL(url)
    const req = Http.request({ host: "127.0.0.1", port: u.port, path: u.pathname + u.search, headers: { host: `127.0.0.1:${u.port}`, ...headers } }, (res) => {
      let text = ""
      res.on("data", (d: Buffer) => { text += d.toString() })
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text) })))
    })
    req.on("error", (e) => resume(Effect.die(e)))
    req.end()
  })

const serve = (config: ConsoleConfigShape) => serveConsole(config, { port: 0 }).pipe(Effect.provide(NodeContext.layer))

describe("mandate console: spend", () => {
  it.scoped("sums equal what the ledger and the store hold, unit by unit, record by record", () =>
    Effect.gen(function*() {
      const s = yield* serve(both)
      const r = yield* get(`${s.url}api/spend`)
      expect(r.status).toBe(200)
      const v = r.body as SpendView
      const ref = reference()
      expect(v.units.map((u) => `${u.source} ${u.unit}`).sort()).toEqual(ref.keys())
      for (const u of v.units) expect({ key: `${u.source} ${u.unit}`, amount: u.amount }).toEqual({ key: `${u.source} ${u.unit}`, amount: ref.get(`${u.source} ${u.unit}`) })
      // The numbers themselves, so the reference cannot drift with the code: 0.35 + 0.08 + 0.15 USD
      // kept by the guard; YEA's 0.1 + 0.2 USD exact, its EUR apart; one use per Writ call.
      const unit = (source: string, name: string) => v.units.find((u) => u.source === source && u.unit === name)
      expect(unit("ledger", "USD")).toMatchObject({ amount: "0.88", protocols: [{ protocol: "ledger", amount: "0.58" }, { protocol: "yea", amount: "0.3" }] })
      expect(unit("ledger", "EUR")).toMatchObject({ amount: "5.5", count: 1 })
      expect(unit("ledger", "uses")).toMatchObject({ amount: "2", count: 2 })
      expect(unit("ledger", "writ:amount")).toMatchObject({ amount: "1250" })
      expect(unit("store", "writ:amount")).toMatchObject({ amount: "59007", count: 3 })
      expect(unit("store", "writ:nights")).toMatchObject({ amount: "2" })
      // Every point and total adds up to its unit's total; no point mixes units.
      for (const u of v.units) {
        const ref2 = new Sums()
        for (const p of v.points.filter((p) => p.source === u.source && p.unit === u.unit)) ref2.add("x", p.amount)
        expect(ref2.get("x")).toBe(u.amount)
        const ref3 = new Sums()
        for (const t of v.totals.filter((t) => t.source === u.source && t.unit === u.unit)) ref3.add("x", t.amount)
        expect(ref3.get("x")).toBe(u.amount)
      }
    }), 120_000)

  it.scoped("per principal (named from key files, short ids otherwise), per budget, per hour or day", () =>
    Effect.gen(function*() {
      const s = yield* serve(both)
      const v = (yield* get(`${s.url}api/spend`)).body as SpendView
      expect(v.principals.find((p) => p.id === ALICE)).toEqual({ id: ALICE, label: "alice", named: true })
      expect(v.principals.find((p) => p.id === BOB)).toEqual({ id: BOB, label: shortId(BOB), named: false })
      expect(shortId(BOB)).toBe(`${BOB.slice(0, 14)}…${BOB.slice(-4)}`)
      // The chain's draw is one budget naming both writs.
      expect(v.totals.filter((t) => t.unit === "uses").map((t) => [t.principal, t.budget, t.amount])).toEqual([
        [ALICE, "count of writ CCCCCCCC", "1"],
        [BOB, "count of writ AAAAAAAA+BBBBBBBB", "1"]
      ])
      expect(v.totals.filter((t) => t.source === "ledger" && t.protocol === "ledger" && t.unit === "USD").map((t) => [t.principal, t.budget, t.amount])).toEqual([
        ["agent-a", "ledger/spend/usd/usd", "0.35"],
        ["agent-b", "ledger/spend/usd/usd", "0.23"]
      ])
      expect(v.totals.filter((t) => t.source === "store").map((t) => [t.principal, t.budget, t.unit, t.amount])).toEqual([
        [ALICE, "amount of writ LEAF1111", "writ:amount", "59000"],
        [BOB, "amount of writ LEAF2222", "writ:amount", "7"],
        [ALICE, "nights of writ LEAF1111", "writ:nights", "2"]
      ])
      const hourly = v.points.filter((p) => p.source === "ledger" && p.protocol === "ledger" && p.unit === "USD").map((p) => [p.bucket, p.principal, p.amount])
      expect(hourly).toEqual([["2026-12-01T09:00:00Z", "agent-a", "0.35"], ["2026-12-01T10:00:00Z", "agent-b", "0.08"], ["2026-12-02T11:00:00Z", "agent-b", "0.15"]])
      const daily = (yield* get(`${s.url}api/spend?bucket=day`)).body as SpendView
      expect(daily.points.filter((p) => p.source === "ledger" && p.protocol === "ledger" && p.unit === "USD").map((p) => [p.bucket, p.principal, p.amount]))
        .toEqual([["2026-12-01T00:00:00Z", "agent-a", "0.35"], ["2026-12-01T00:00:00Z", "agent-b", "0.08"], ["2026-12-02T00:00:00Z", "agent-b", "0.15"]])
    }), 120_000)

  it.scoped("refusals: a bad bucket, nothing configured, an undecodable tally", () =>
    Effect.gen(function*() {
      const s = yield* serve(both)
      expect(yield* get(`${s.url}api/spend?bucket=week`)).toMatchObject({ status: 400, body: { error: "console/bad_request" } })
      expect(yield* get(`${s.url}api/spend?other=1`)).toMatchObject({ status: 400, body: { error: "console/bad_request" } })
      const bare = yield* serve(none)
      expect(yield* get(`${bare.url}api/spend`)).toMatchObject({ status: 409, body: { error: "console/not_configured" } })
      expect(yield* get(`${bare.url}api/ledger/lines`)).toMatchObject({ status: 409, body: { error: "console/not_configured" } })
      // A tally whose `used` is not integers (section 6 says integers): named, not summed.
      const bad = join(dir, "bad.sqlite")
      yield* Effect.flatMap(AuditLog, (log) => log.append({ time: 1, kind: "call", identity: "X", unparsed: null, principal: ALICE, peer: null, root: null, leaf: "L", op: "a", outcome: "ok", reason: null, signed: null })).pipe(Effect.provide(SqliteWrit.layer(bad)))
      const db = new Database(bad)
      db.prepare(`INSERT INTO writ_calls (leaf, id, call, op, acc, standing, chain, issuers, exp, reservation, state, tally, res)
        VALUES ('L', 'i', 'X', 'a', 1, 0, '[]', '[]', 0, NULL, 'final', ?, NULL)`).run(JSON.stringify({ used: { amount: 1.5 } }))
      db.close()
      const b = yield* serve({ ...none, store: Option.some(bad) })
      expect(yield* get(`${b.url}api/spend`)).toMatchObject({ status: 503, body: { error: "console/store_unavailable", detail: expect.stringContaining("writ_calls") } })
    }), 120_000)
})

describe("mandate console: the ledger's lines, a page at a time", () => {
  it.scoped("keyset pages cover every line once, in order; a bad cursor is named", () =>
    Effect.gen(function*() {
      const s = yield* serve(both)
      const db = new Database(ledgerFile, { readonly: true })
      const seqs = (db.prepare("SELECT seq FROM ledger_lines WHERE ledger = 'default' ORDER BY seq").all() as Array<{ seq: number }>).map((r) => Number(r.seq))
      db.close()
      const got: Array<number> = []
      let after: string | null = "-1"
      let pages = 0
      while (after !== null && pages < 50) {
        const r = yield* get(`${s.url}api/ledger/lines?after=${after}&limit=4`)
        expect(r.status).toBe(200)
        const page = r.body as LedgerLines
        expect(page.lines.length).toBeLessThanOrEqual(4)
        got.push(...page.lines.map((l) => l.seq))
        after = page.next
        pages++
      }
      expect(got).toEqual(seqs)
      expect(pages).toBe(Math.ceil(seqs.length / 4))
      const first = (yield* get(`${s.url}api/ledger/lines?limit=500`)).body as LedgerLines
      expect(first.lines.find((l) => l.type === "protocol" && l.summary.includes("spend:EUR"))).toMatchObject({ principal: ALICE, summary: "yea uses_spent · shop.order · 5.5 spend:EUR, 2 emails" })
      for (const q of ["after=x", "limit=0", "limit=501", "after=-2", "after=1&after=2"]) {
        expect({ q, ...(yield* get(`${s.url}api/ledger/lines?${q}`)) }).toMatchObject({ q, status: 400, body: { error: "console/bad_request" } })
      }
    }), 120_000)
})

describe("mandate console: the API answers its own page only", () => {
  it.scoped("a cross-origin page is refused with console/origin_refused before any store is read", () =>
    Effect.gen(function*() {
      const s = yield* serve(both)
      const self = s.url.slice(0, -1)
      for (const path of ["api/ledger", "api/spend", "api/ledger/lines", "api/audit", "api/info"]) {
        expect({ path, ...(yield* get(`${s.url}${path}`, { origin: "http://evil.example" })) }).toMatchObject({ path, status: 403, body: { error: "console/origin_refused" } })
        expect({ path, ...(yield* get(`${s.url}${path}`, { origin: "null" })) }).toMatchObject({ path, status: 403, body: { error: "console/origin_refused" } })
        // A no-cors request sends no Origin on GET, but its Fetch Metadata names it.
        for (const site of ["cross-site", "same-site"]) {
          expect({ path, site, ...(yield* get(`${s.url}${path}`, { "sec-fetch-site": site })) }).toMatchObject({ path, site, status: 403, body: { error: "console/origin_refused" } })
        }
        expect((yield* get(`${s.url}${path}`, { origin: self, "sec-fetch-site": "same-origin" })).status).toBe(200)
        expect((yield* get(`${s.url}${path}`, { "sec-fetch-site": "none" })).status).toBe(200)
        expect((yield* get(`${s.url}${path}`)).status).toBe(200)
      }
    }), 120_000)
})
