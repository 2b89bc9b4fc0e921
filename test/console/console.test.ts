// The console's server without a browser: every refusal path answers its reason code (never a
// crash), the Host check, read-only opening, and the keyset pages of the audit record against a
// reference (the same entries sorted and filtered in memory), on a store of fixed entries.
import { it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import { Effect, Option } from "effect"
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { serveConsole } from "../../src/console/listen.js"
import type { ConsoleConfigShape } from "../../src/console/stores.js"
import type { AuditPage, AuditRowView } from "../../src/console/api.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import { type AuditEntry, AuditLog } from "../../src/writ/executor/stores.js"
import { runCli } from "../support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-console-api-"))
const store = join(dir, "store.sqlite")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const reasons = [null, "count_exhausted", "out_of_bounds", "revoked", "expired"]
const ops = ["travel/book", "travel/charge", "travelx", "sys/undo", null]
const outcomes = ["ok", "failed", "error", "canceled"]
/** 250 entries from a fixed linear congruential sequence (seed 42). */
const entries: Array<AuditEntry> = (() => {
  let x = 42
  const next = (n: number) => { x = (x * 1103515245 + 12345) % 2147483648; return x % n }
  return Array.from({ length: 250 }, (_, i) => ({
    time: 1_700_000_000 + next(40),
    kind: next(5) === 0 ? "revoke" as const : "call" as const,
    identity: `id${i}`,
    unparsed: null,
    principal: `did:key:z6Mk${next(3)}`,
    peer: null,
    root: null,
    leaf: null,
    op: ops[next(ops.length)],
    outcome: outcomes[next(outcomes.length)],
    reason: reasons[next(reasons.length)],
    signed: null
  }))
})()

beforeAll(async () => {
  await Effect.runPromise(Effect.flatMap(AuditLog, (log) => Effect.forEach(entries, (e) => log.append(e), { discard: true })).pipe(
    Effect.provide(SqliteWrit.layer(store))
  ))
}, 120_000)

const none: ConsoleConfigShape = { store: Option.none(), ledger: Option.none(), policy: Option.none() }

/** GET or POST on the console with a chosen Host header (node:http: fetch does not let a page set Host). */
const request = (url: string, opts: { host?: string; method?: string; body?: string } = {}) =>
  Effect.async<{ status: number; body: Record<string, unknown> }>((resume) => {
    const u = new URL(url)
    const req = Http.request({ host: "127.0.0.1", port: u.port, path: u.pathname + u.search, method: opts.method ?? "GET",
      headers: { host: opts.host ?? `127.0.0.1:${u.port}`, ...(opts.body !== undefined ? { "content-type": "application/json" } : {}) } }, (res) => {
      let text = ""
      res.on("data", (d: Buffer) => { text += d.toString() })
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> })))
    })
    req.on("error", (e) => resume(Effect.die(e)))
    req.end(opts.body)
  })

const serve = (config: ConsoleConfigShape = { ...none, store: Option.some(store) }, allowHosts: ReadonlyArray<string> = []) =>
  serveConsole(config, { port: 0, allowHosts }).pipe(Effect.provide(NodeContext.layer))

describe("mandate console server", () => {
  it.scoped("refuses a Host that is not loopback (console/host_refused), unless allowed", () =>
    Effect.gen(function*() {
      const s = yield* serve()
      const bad = yield* request(`${s.url}api/info`, { host: "rebind.example:80" })
      expect(bad).toEqual({ status: 421, body: { error: "console/host_refused", detail: expect.stringContaining("rebind.example") } })
      expect((yield* request(`${s.url}api/info`, { host: "localhost:1234" })).status).toBe(200)
      expect((yield* request(`${s.url}api/info`, { host: "[::1]:1234" })).status).toBe(200)
      const allowed = yield* serve({ ...none, store: Option.some(store) }, ["console.test"])
      expect((yield* request(`${allowed.url}api/info`, { host: "console.test:99" })).status).toBe(200)
    }), 120_000)

  it.scoped("names the reason of every bad request", () =>
    Effect.gen(function*() {
      const s = yield* serve()
      const cases: Array<[string, { method?: string; body?: string }, number, string]> = [
        ["api/audit?limit=0", {}, 400, "console/bad_request"],
        ["api/audit?limit=abc", {}, 400, "console/bad_request"],
        ["api/audit?kind=neither", {}, 400, "console/bad_request"],
        ["api/audit?sort=signed", {}, 400, "console/bad_request"],
        ["api/audit?unknown=1", {}, 400, "console/bad_request"],
        ["api/audit?reason=a&reason=b", {}, 400, "console/bad_request"],
        ["api/audit?after=not-a-cursor", {}, 400, "console/bad_request"],
        ["api/calls?after=x", {}, 400, "console/bad_request"],
        ["api/calls/tree?leaf=a", {}, 400, "console/bad_request"],
        ["api/calls/tree?leaf=a&id=b", {}, 404, "console/not_found"],
        ["api/ledger", {}, 409, "console/not_configured"],
        ["nowhere", {}, 404, "console/not_found"],
        ["api/tally", { method: "POST", body: "{" }, 422, "console/wrong_type"],
        ["api/tally", { method: "POST", body: JSON.stringify({ name: "x" }) }, 400, "console/bad_request"],
        ["api/tally", { method: "POST", body: JSON.stringify({ name: "x", tally: "{\"typ\":\"writ\"}" }) }, 422, "console/wrong_type"],
        ["api/tally", { method: "POST", body: JSON.stringify({ name: "x", tally: "[1,2" }) }, 422, "console/wrong_type"],
        ["api/tally", { method: "POST", body: JSON.stringify({ name: "x", tally: "{\"typ\":\"tally\"}", call: "{\"typ\":\"call\"}" }) }, 422, "console/wrong_type"],
        ["api/tally", { method: "POST", body: JSON.stringify({ name: "x", tally: "x".repeat(1_700_000) }) }, 413, "console/too_large"]
      ]
      for (const [path, opts, status, error] of cases) {
        const r = yield* request(`${s.url}${path}`, opts)
        expect({ path, status: r.status, error: r.body.error }).toEqual({ path, status, error })
      }
      const limits = yield* request(`${s.url}api/store-limits`)
      expect(limits).toEqual({ status: 200, body: { limits: [], next: null } })
      // A tally without its call is drawn, checked only for its shape (verdict of 6.1 before the signature).
      const shape = yield* request(`${s.url}api/tally`, { method: "POST", body: JSON.stringify({ name: "x", tally: "{\"typ\":\"tally\"}" }) })
      expect(shape.status).toBe(200)
      expect(shape.body.verdict).toBe("unverifiable")
      expect(typeof shape.body.reason).toBe("string")
    }), 120_000)

  it.scoped("opens nothing that does not exist, and creates nothing (console/store_unavailable)", () =>
    Effect.gen(function*() {
      const missing = join(dir, "absent.sqlite")
      const e = yield* Effect.flip(serve({ ...none, store: Option.some(missing) }))
      expect(e.reason).toBe("console/store_unavailable")
      expect(existsSync(missing)).toBe(false)
      const l = yield* Effect.flip(serve({ ...none, ledger: Option.some({ file: missing, name: "default" }) }))
      expect(l.reason).toBe("console/store_unavailable")
      expect(existsSync(missing)).toBe(false)
      // Read-only: reading pages leaves the store's file as it was.
      const before = statSync(store).mtimeMs
      const s = yield* serve()
      yield* request(`${s.url}api/audit`)
      expect(statSync(store).mtimeMs).toBe(before)
    }), 120_000)

  it.live("mandate console: a missing store is one error line naming its reason, exit 1", () =>
    Effect.gen(function*() {
      const missing = join(dir, "nothing-here.sqlite")
      const r = yield* Effect.promise(() => runCli(["console", "--store", missing, "--port", "0"]))
      expect(r.status).toBe(1)
      expect(r.stderr.trim().split("\n")).toEqual([`error: console/store_unavailable at ${missing}: no such file (the console creates nothing)`])
      expect(existsSync(missing)).toBe(false)
    }), 180_000)

  it.scoped("pages the audit record by keyset: every sort and filter gives the reference order, each row once", () =>
    Effect.gen(function*() {
      const s = yield* serve()
      const withSeq: Array<AuditRowView> = entries.map((e, i) => ({ seq: i + 1, ...e }))
      const prefix = (p: string, op: string | null) => op !== null && (op === p || (p.endsWith("/") && op.startsWith(p)) || op.startsWith(p + "/"))
      const cases: Array<{ q: Record<string, string>; keep: (r: AuditRowView) => boolean; key: (r: AuditRowView) => string | number }> = [
        { q: {}, keep: () => true, key: (r) => r.seq },
        { q: { sort: "time", dir: "desc" }, keep: () => true, key: (r) => r.time },
        { q: { sort: "reason", reason: "count_exhausted" }, keep: (r) => r.reason === "count_exhausted", key: (r) => r.reason ?? "" },
        { q: { sort: "op", op: "travel" }, keep: (r) => prefix("travel", r.op), key: (r) => r.op ?? "" },
        { q: { sort: "op", dir: "desc", op: "travel/" }, keep: (r) => prefix("travel/", r.op), key: (r) => r.op ?? "" },
        { q: { op: "travel/book", outcome: "failed" }, keep: (r) => prefix("travel/book", r.op) && r.outcome === "failed", key: (r) => r.seq },
        { q: { sort: "outcome", dir: "desc", kind: "call", since: "1700000010", until: "1700000030" }, keep: (r) => r.kind === "call" && r.time >= 1700000010 && r.time < 1700000030, key: (r) => r.outcome },
        { q: { sort: "principal", principal: "did:key:z6Mk1" }, keep: (r) => r.principal === "did:key:z6Mk1", key: (r) => r.principal ?? "" }
      ]
      for (const c of cases) {
        const desc = c.q.dir === "desc"
        const expected = withSeq.filter(c.keep).sort((a, b) => {
          const ka = c.key(a), kb = c.key(b)
          const o = ka < kb ? -1 : ka > kb ? 1 : a.seq - b.seq
          return desc ? -o : o
        }).map((r) => r.seq)
        const got: Array<number> = []
        let after: string | null = ""
        let pages = 0
        while (after !== null && pages < 20) {
          const p = new URLSearchParams({ ...c.q, limit: "37", ...(after !== "" ? { after } : {}) })
          const r = yield* request(`${s.url}api/audit?${p.toString()}`)
          expect(r.status).toBe(200)
          const page = r.body as unknown as AuditPage
          expect(page.rows.length).toBeLessThanOrEqual(37)
          got.push(...page.rows.map((x) => x.seq))
          after = page.next
          pages++
        }
        expect({ q: c.q, got }).toEqual({ q: c.q, got: expected })
        const count = yield* request(`${s.url}api/audit/count?${new URLSearchParams(Object.fromEntries(Object.entries(c.q).filter(([k]) => k !== "sort" && k !== "dir"))).toString()}`)
        expect(count.body.count).toBe(expected.length)
      }
    }), 120_000)
})
