// `writ gate` end to end (docs/writ-gate.md): the gate started by its composition root (mapping
// file, key file, memory stores) in front of a small orders API on loopback, driven by plain HTTP
// requests carrying `Writ-Call`. The API records every request it receives, so "refused before the
// API sees it" is checked on what it saw.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startGate } from "../../src/app/writ-gate.js"
import { readMapping } from "../../src/bind/writ-gate/mapping.js"
import { checkRequest, matchRoute } from "../../src/bind/writ-gate/contract.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Signer } from "../../src/kernel/services.js"
import { verifyCall } from "../../src/writ/call.js"
import { issueRoot, makeCall, makeRevoke } from "../../src/writ/issue.js"
import { signObject } from "../../src/writ/sign.js"
import { verifyTally } from "../../src/writ/tally.js"
import { as, keyOf, run, seed } from "../writ/fixtures.js"

const A = 21 // the root: the customer's key, which signs the calls
const G = 22 // the gate
const EXP = 1_800_000_000
const NOW = EXP - 3600

interface Seen { readonly method: string; readonly url: string; readonly headers: Http.IncomingHttpHeaders; readonly body: string }

/** The orders API: creates an order (201 {"id"}), cancels one; records what it receives. */
const ordersApi = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly seen: Array<Seen>; readonly server: Http.Server }>((resume) => {
    const seen: Array<Seen> = []
    let n = 0
    const server = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body })
        const cancel = /^\/v1\/orders\/([^/]+)\/cancel$/.exec(req.url ?? "")
        if (req.method === "POST" && req.url === "/v1/orders") {
          n++
          res.writeHead(201, { "content-type": "application/json", "x-api": "orders" })
          res.end(JSON.stringify({ id: `o-${n}`, charged: JSON.parse(body).total_cents }))
        } else if (req.method === "POST" && /^\/v1\/invoices\/[^/]+\/pay$/.test(req.url ?? "")) {
          const cents = JSON.parse(body).payment.cents as number
          res.writeHead(cents === 4000 ? 402 : 200, { "content-type": "application/json" })
          res.end(JSON.stringify(cents === 4000 ? { error: "card declined" } : { paid: req.url }))
        } else if (req.method === "POST" && cancel !== null) {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ canceled: cancel[1] }))
        } else {
          res.writeHead(404).end()
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const a = server.address() as { port: number }
      resume(Effect.succeed({ url: `http://127.0.0.1:${a.port}`, seen, server }))
    })
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

const mappingFor = (upstream: string) => ({
  upstream,
  routes: {
    create_order: {
      method: "POST",
      path: "/v1/orders",
      act: "orders/create",
      bind: { amount: "$.total_cents", currency: "$.currency" },
      used: { amount: "$.total_cents" },
      reverse: { method: "POST", path: "/v1/orders/{id}/cancel", id: "$.id", ttl: 86400 }
    },
    pay_invoice: {
      method: "POST",
      path: "/v1/invoices/{invoice}/pay",
      act: "invoices/pay",
      bind: { invoice: "{invoice}", amount: "$.payment.cents" },
      used: { amount: "$.payment.cents" }
    }
  }
})

const root = run(as(A)(issueRoot({
  hld: keyOf(G),
  exp: EXP,
  bnd: { act: { t: "prefix", v: "orders" }, amount: { t: "max", v: 5000 }, currency: { t: "set", v: ["USD"] }, uses: { t: "count", v: 2 } }
})))
const chain = root.chain as unknown as ReadonlyArray<JsonObject>
const invoiceRoot = run(as(A, 31)(issueRoot({
  hld: keyOf(G),
  exp: EXP,
  bnd: { act: { t: "prefix", v: "invoices" }, amount: { t: "max", v: 5000 }, invoice: { t: "set", v: ["inv-1", "inv-2", "inv-3"] } }
})))
const invoiceCall = (args: JsonObject, n: number) =>
  run(as(A, n)(makeCall({ chain: invoiceRoot.chain as unknown as ReadonlyArray<JsonObject>, op: "invoices/pay", args }))).call.json

/** A call signed by A, checked by nothing here: the gate and its executor check it. */
const signed = (op: string, args: JsonObject, id: string) =>
  run(Effect.provide(signObject({ v: 1, typ: "call", id, chain, from: keyOf(A), op, args }), Signer.fromSeed(seed(A))))
const callFor = (args: JsonObject, n: number) => run(as(A, n)(makeCall({ chain, op: "orders/create", args }))).call.json
const header = (call: JsonObject) => Buffer.from(JSON.stringify(call)).toString("base64url")

const startAll = Effect.gen(function*() {
  yield* TestClock.setTime(NOW * 1000)
  const api = yield* ordersApi
  const dir = mkdtempSync(join(tmpdir(), "mandate-gate-"))
  writeFileSync(join(dir, "gate.json"), JSON.stringify(mappingFor(api.url)))
  writeFileSync(join(dir, "gate.key"), Buffer.from(seed(G)).toString("hex") + "\n", { mode: 0o600 })
  const gate = yield* startGate({ mappingFile: join(dir, "gate.json"), seedFile: join(dir, "gate.key"), roots: [keyOf(A)], port: 0 })
  const send = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string }) =>
    Effect.promise(async () => {
      const r = await fetch(`${gate.url}${path}`, { method: init.method ?? "POST", headers: init.headers ?? {}, body: init.body ?? null })
      const bytes = new Uint8Array(await r.arrayBuffer())
      return { status: r.status, headers: r.headers, bytes, text: Buffer.from(bytes).toString("utf8") }
    })
  const order = (call: JsonObject | undefined, body: string, extra: Record<string, string> = {}, path = "/v1/orders") =>
    send(path, { headers: { "content-type": "application/json", ...(call === undefined ? {} : { "writ-call": header(call) }), ...extra }, body })
  return { api, gate, send, order }
}).pipe(Effect.provide(NodeContext.layer))

describe("writ gate in front of a plain REST API (docs/writ-gate.md)", () => {
  it.scoped("passes a call within its writ to the API as the rebuilt request, unchanged back with a signed Writ-Tally", () =>
    Effect.gen(function*() {
      const { api, order, send } = yield* startAll
      const call = callFor({ amount: 1200, currency: "USD" }, 1)
      const r = yield* order(call, `{ "currency": "USD", "total_cents": 1200 }`, { "x-trace": "t1", "x-http-method-override": "DELETE" })
      expect(r.status).toBe(201)
      expect(JSON.parse(r.text)).toEqual({ id: "o-1", charged: 1200 })
      expect(r.headers.get("x-api")).toBe("orders")
      // What the API saw: the canonical body, the route's method and path, no Writ-Call, no override.
      expect(api.seen).toHaveLength(1)
      expect(api.seen[0]).toMatchObject({ method: "POST", url: "/v1/orders", body: '{"currency":"USD","total_cents":1200}' })
      expect(api.seen[0].headers["writ-call"]).toBeUndefined()
      expect(api.seen[0].headers["x-http-method-override"]).toBeUndefined()
      expect(api.seen[0].headers["x-trace"]).toBe("t1")
      // The tally verifies against the call and the result body rebuilt from the response.
      const tally = JSON.parse(Buffer.from(r.headers.get("writ-tally")!, "base64url").toString("utf8")) as JsonObject
      const k = yield* verifyCall(call)
      const res = { status: 201, body_sha256: createHash("sha256").update(r.bytes).digest("base64url"), reverse_id: "o-1" }
      const t = yield* verifyTally(tally, { callId: k.call.id, op: "orders/create", chain: k.chain }, { value: res })
      expect(t.value.st).toBe("ok")
      expect(t.value.used).toEqual({ amount: 1200 })
      expect(t.value.rev).toEqual({ until: NOW + 86400 })
      // A body altered after the gate would not verify.
      const forged = { ...res, body_sha256: createHash("sha256").update("{}").digest("base64url") }
      const bad = yield* Effect.either(verifyTally(tally, { callId: k.call.id, op: "orders/create", chain: k.chain }, { value: forged }))
      expect(bad._tag === "Left" && bad.left.reason).toBe("tally_mismatch")
      // A revoke at the section 10 endpoint: recorded with an ack; the next order is refused revoked.
      const revoke = run(as(A)(makeRevoke({ chain }))).revoke.json
      const rv = yield* send("/writ", { headers: { "content-type": "application/writ+json" }, body: JSON.stringify(revoke) })
      expect(rv.status).toBe(200)
      expect((JSON.parse(rv.text) as { ack: { typ: string } }).ack.typ).toBe("ack")
      const afterRevoke = yield* order(callFor({ amount: 100, currency: "USD" }, 8), `{"total_cents":100,"currency":"USD"}`)
      expect((JSON.parse(afterRevoke.text) as { tally: { err: unknown } }).tally.err).toEqual({ code: "revoked" })
      expect(api.seen).toHaveLength(1)
    }))

  it.scoped("refuses an overcharge, an extra or aliased member, a query, a differing value, and no call, before the API sees anything", () =>
    Effect.gen(function*() {
      const { api, order, send } = yield* startAll
      // Signed for 9999 under a max of 5000: a signed refusal, the API never called.
      const over = signed("orders/create", { amount: 9999, currency: "USD" }, "b3ZlcmNoYXJnZS1jYWxsLTE")
      const r = yield* order(over, `{"total_cents":9999,"currency":"USD"}`)
      expect(r.status).toBe(200)
      const refusal = JSON.parse(r.text) as { tally: JsonObject }
      expect(refusal.tally.st).toBe("failed")
      expect(refusal.tally.err).toEqual({ code: "out_of_bounds" })
      const ok = callFor({ amount: 1200, currency: "USD" }, 2)
      const cases: ReadonlyArray<readonly [string, string, JsonObject | undefined, string]> = [
        ["extra member", `{"total_cents":1200,"currency":"USD","quantity":10}`, ok, "gate/unbound_member"],
        ["nested extra member", `{"total_cents":1200,"currency":"USD","meta":{"x":1}}`, ok, "gate/unbound_member"],
        ["case alias", `{"total_cents":1200,"currency":"USD","TOTAL_CENTS":9999}`, ok, "gate/ambiguous_member"],
        ["long-s alias", `{"total_cents":1200,"currency":"USD","total_centſ":9999}`, ok, "gate/ambiguous_member"],
        ["duplicate member", `{"total_cents":1200,"currency":"USD","total_cents":9999}`, ok, "noncanonical"],
        ["trailing JSON", `{"total_cents":1200,"currency":"USD"}{"total_cents":9999}`, ok, "noncanonical"],
        ["not an object", `[1200]`, ok, "malformed"],
        ["missing member", `{"total_cents":1200}`, ok, "malformed"],
        ["value differs from the signed args", `{"total_cents":9999,"currency":"USD"}`, ok, "malformed"],
        ["no call", `{"total_cents":1200,"currency":"USD"}`, undefined, "missing_call"]
      ]
      for (const [what, body, call, reason] of cases) {
        const a = yield* order(call, body)
        expect([what, a.status, JSON.parse(a.text)]).toEqual([what, 400, { error: reason }])
      }
      // A Writ-Call that is not base64url, or whose JSON does not read (the executor's section 7
      // step 1 names it, unsigned), or whose signature does not verify (step 2).
      const raw = (h: string) => send("/v1/orders", { headers: { "content-type": "application/json", "writ-call": h }, body: `{"total_cents":1200,"currency":"USD"}` })
      expect(JSON.parse((yield* raw("not base64url!")).text)).toEqual({ error: "malformed" })
      expect(JSON.parse((yield* raw(Buffer.from('{"v":1,"v":1}').toString("base64url"))).text)).toEqual({ error: "noncanonical" })
      const tampered = { ...ok, id: "dGFtcGVyZWQtY2FsbC1pZDE" }
      const t = yield* order(tampered, `{"total_cents":1200,"currency":"USD"}`)
      expect([t.status, JSON.parse(t.text)]).toEqual([400, { error: "bad_signature" }])
      const q = yield* order(ok, `{"total_cents":1200,"currency":"USD"}`, {}, "/v1/orders?total_cents=9999")
      expect([q.status, JSON.parse(q.text)]).toEqual([400, { error: "gate/unbound_query" }])
      const nf = yield* order(ok, `{}`, {}, "/v1/refunds")
      expect([nf.status, JSON.parse(nf.text)]).toEqual([404, { error: "gate/no_route" }])
      const other = yield* order(signed("orders/refund", { amount: 1200, currency: "USD" }, "b3RoZXItb3AtY2FsbC0xMg"), `{"total_cents":1200,"currency":"USD"}`)
      expect([other.status, JSON.parse(other.text)]).toEqual([400, { error: "malformed" }])
      // A forward call sent to the section 10 endpoint goes back to its route.
      const w = yield* send("/writ", { headers: { "content-type": "application/writ+json" }, body: JSON.stringify(ok) })
      expect([w.status, JSON.parse(w.text)]).toEqual([400, { error: "gate/use_route" }])
      expect(api.seen).toHaveLength(0)
    }))

  it.scoped("answers a replay from the store, runs out at the count, and reverses through the API with sys/undo", () =>
    Effect.gen(function*() {
      const { api, order, send } = yield* startAll
      const body = `{"total_cents":1200,"currency":"USD"}`
      const first = callFor({ amount: 1200, currency: "USD" }, 3)
      const a = yield* order(first, body)
      expect(a.status).toBe(201)
      const tally = JSON.parse(Buffer.from(a.headers.get("writ-tally")!, "base64url").toString("utf8")) as JsonObject
      // The same call again: the stored tally, and the API is not called again.
      const again = yield* order(first, body)
      expect(again.status).toBe(200)
      expect((JSON.parse(again.text) as { tally: JsonObject }).tally).toEqual(tally)
      expect(api.seen).toHaveLength(1)
      // The second use of the count, then count_exhausted without reaching the API.
      expect((yield* order(callFor({ amount: 1200, currency: "USD" }, 4), body)).status).toBe(201)
      const third = yield* order(callFor({ amount: 1200, currency: "USD" }, 5), body)
      expect((JSON.parse(third.text) as { tally: { err: unknown } }).tally.err).toEqual({ code: "count_exhausted" })
      expect(api.seen).toHaveLength(2)
      // sys/undo of the first order, at the gate's section 10 endpoint: the API's cancel is called.
      const undo = run(as(A, 6)(makeCall({ chain, op: "sys/undo", args: { tally } }))).call.json
      yield* TestClock.adjust("1 hour")
      const u = yield* send("/writ", { headers: { "content-type": "application/writ+json" }, body: JSON.stringify(undo) })
      expect(u.status).toBe(200)
      const answer = JSON.parse(u.text) as { tally: JsonObject; res: JsonObject }
      expect(answer.tally.st).toBe("ok")
      expect(answer.res.status).toBe(200)
      expect(api.seen[2]).toMatchObject({ method: "POST", url: "/v1/orders/o-1/cancel" })
      // After ttl, an undo of the second order is not reversible, and the API is not called.
      const second = JSON.parse(Buffer.from((yield* order(callFor({ amount: 1200, currency: "USD" }, 4), body)).text).toString()) as { tally: JsonObject }
      yield* TestClock.adjust("2 days")
      const late = run(as(A, 7)(makeCall({ chain, op: "sys/undo", args: { tally: second.tally } }))).call.json
      const l = yield* send("/writ", { headers: { "content-type": "application/writ+json" }, body: JSON.stringify(late) })
      expect((JSON.parse(l.text) as { tally: { err: unknown } }).tally.err).toEqual({ code: "not_reversible" })
      expect(api.seen).toHaveLength(3)
    }))

  it.scoped("binds a path parameter: the signed resource only, no dot segment, and a nested body member", () =>
    Effect.gen(function*() {
      const { api, order } = yield* startAll
      const call = invoiceCall({ invoice: "inv-1", amount: 1500 }, 40)
      const body = `{"payment":{"cents":1500}}`
      // Another invoice than the one signed, a dot segment, an unbound nested member: refused.
      const other = yield* order(call, body, {}, "/v1/invoices/inv-2/pay")
      expect([other.status, JSON.parse(other.text)]).toEqual([400, { error: "malformed" }])
      // fetch resolves an encoded dot segment before sending (WHATWG URL): no route. A client that
      // sends it raw meets the contract's own check, shown on the route directly.
      const dots = yield* order(call, body, {}, "/v1/invoices/%2E%2E/pay")
      expect(dots.status).toBe(404)
      const mapping = yield* readMapping(JSON.stringify(mappingFor("http://127.0.0.1:9")))
      const m = matchRoute(mapping, "POST", "/v1/invoices/%2E%2E/pay")!
      expect(m.params).toEqual({ invoice: ".." })
      const r = yield* Effect.either(checkRequest(m.route, m.params, "", new TextEncoder().encode(body)))
      expect(r._tag === "Left" && [r.left.reason, r.left.path]).toEqual(["malformed", "path.invoice"])
      const nested = yield* order(call, `{"payment":{"cents":1500,"tip":900}}`, {}, "/v1/invoices/inv-1/pay")
      expect([nested.status, JSON.parse(nested.text)]).toEqual([400, { error: "gate/unbound_member" }])
      const flat = yield* order(call, `{"payment":1500}`, {}, "/v1/invoices/inv-1/pay")
      expect([flat.status, JSON.parse(flat.text)]).toEqual([400, { error: "malformed" }])
      expect(api.seen).toHaveLength(0)
      const ok = yield* order(call, body, {}, "/v1/invoices/inv-1/pay")
      expect(ok.status).toBe(200)
      expect(api.seen[0]).toMatchObject({ url: "/v1/invoices/inv-1/pay", body: '{"payment":{"cents":1500}}' })
      const t = JSON.parse(Buffer.from(ok.headers.get("writ-tally")!, "base64url").toString("utf8")) as JsonObject
      expect([t.st, t.used, t.rev]).toEqual(["ok", { amount: 1500 }, null])
      // The API refuses (402): its response comes back unchanged, under a signed failed tally.
      const declined = yield* order(invoiceCall({ invoice: "inv-3", amount: 4000 }, 41), `{"payment":{"cents":4000}}`, {}, "/v1/invoices/inv-3/pay")
      expect(declined.status).toBe(402)
      expect(JSON.parse(declined.text)).toEqual({ error: "card declined" })
      const d = JSON.parse(Buffer.from(declined.headers.get("writ-tally")!, "base64url").toString("utf8")) as JsonObject
      expect([d.st, d.err]).toEqual(["failed", { code: "gate/upstream_status" }])
    }))

  it.effect("refuses at start a mapping that is ambiguous in itself", () =>
    Effect.gen(function*() {
      const reason = (m: unknown) => Effect.map(Effect.either(readMapping(JSON.stringify(m))), (r) => (r._tag === "Left" ? `${r.left.reason} ${r.left.path}` : "accept"))
      const base = mappingFor("http://127.0.0.1:9")
      const route = base.routes.create_order
      expect(yield* reason(base)).toBe("accept")
      expect(yield* reason({ ...base, routes: { r: { ...route, path: "/v1/orders/{id}" } } })).toBe("gate/bad_mapping routes.r.path")
      expect(yield* reason({ ...base, routes: { r: { ...route, bind: { ...route.bind, other: "$.TOTAL_CENTS" } } } })).toMatch(/^gate\/bad_mapping routes\.r\.bind/)
      expect(yield* reason({ ...base, routes: { r: { ...route, bind: { ...route.bind, other: "$.total_cents" } } } })).toMatch(/^gate\/bad_mapping routes\.r\.bind/)
      expect(yield* reason({ ...base, routes: { r: { ...route, bind: { ...route.bind, inner: "$.currency.code" } } } })).toMatch(/^gate\/bad_mapping routes\.r\.bind/)
      expect(yield* reason({ ...base, routes: { r: { ...route, used: { amount: "$.price" } } } })).toBe("gate/bad_mapping routes.r.used.amount")
      expect(yield* reason({ ...base, routes: { r: { ...route, bind: { amount: "total_cents" } } } })).toBe("gate/bad_mapping mapping")
    }))
})
