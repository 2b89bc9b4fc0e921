// Section 9.3: every request the binding refuses itself (no route,
// wrong method or media type, too large, unreadable, over the revoke rate) gets one audit entry,
// written through the executor's path for requests refused before they had an identity; paths
// match exactly (the binding keeps this behaviour on the platform's router).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Http from "node:http"
import { postWrit, type PostOptions } from "../../src/bind/writ-http/client.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import type { AuditEntry } from "../../src/writ/executor/stores.js"
import { serveScoped } from "./inproc.js"
import { call, identity, key, prefix, revoke, writ } from "./support.js"

const A = key(51)
const E = key(52)
const app = { perform: (): Effect.Effect<Outcome> => Effect.succeed({ st: "ok", res: { done: true } }) }
const good = () => call(A, [writ(A, E, { act: prefix("t/") })], "t/ok")
const jsonOf = (a: { json: Option.Option<Json> }) => Option.getOrNull(a.json) as JsonObject | null

/** The refusal's audit fields: what section 9.3 asks of a request that had no identity. */
const refusalEntry = (kind: "call" | "revoke", reason: string) => ({
  kind, identity: null, unparsed: reason, principal: null, peer: null, root: null, leaf: null, op: null,
  outcome: "error", reason, signed: null
})
const fields = ({ time: _time, ...rest }: AuditEntry) => rest

/** A method other than POST on `url`, through node:http. */
const request = (method: string, url: string) =>
  Effect.async<{ status: number; body: string }, Error>((resume) => {
    const req = Http.request(url, { method }, (res) => {
      let body = ""
      res.on("data", (d: Buffer) => { body += d.toString() })
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
    })
    req.on("error", (e) => resume(Effect.fail(e)))
    req.end()
  })

const setup = (rate?: { burst: number; perSecond: number }) =>
  serveScoped({ executorKey: E, roots: [A], app, act: ["t/"], ...(rate === undefined ? {} : { rate }) })

const post = (url: string, body: JsonObject | string, o: PostOptions = {}) => postWrit(url, body, o)

describe("refusals of the binding are audited (section 9.3)", () => {
  it.scopedLive("404 on another path, and on the endpoint spelled with another case or a trailing slash", () =>
    Effect.gen(function*() {
      const srv = yield* setup()
      for (const other of ["/other", "/WRIT", "/writ/", "//writ"]) {
        const a = yield* post(srv.url.replace(/\/writ$/, other), good())
        expect([other, a.status, jsonOf(a)]).toEqual([other, 404, { error: "mandate/not_found" }])
      }
      expect((yield* srv.audit).map(fields)).toEqual(Array(4).fill(refusalEntry("call", "mandate/not_found")))
    }))

  it.scopedLive("405 for another method on the endpoint or on the well-known document", () =>
    Effect.gen(function*() {
      const srv = yield* setup()
      const get = yield* request("GET", srv.url)
      const put = yield* request("PUT", srv.url)
      const postWk = yield* post(new URL("/.well-known/writ", srv.url).toString(), good())
      expect([get.status, put.status, postWk.status]).toEqual([405, 405, 405])
      expect(JSON.parse(get.body)).toEqual({ error: "mandate/method_not_allowed" })
      // HEAD on the well-known document is answered as GET, and not a refusal.
      expect((yield* request("HEAD", new URL("/.well-known/writ", srv.url).toString())).status).toBe(200)
      expect((yield* srv.audit).map(fields)).toEqual(Array(3).fill(refusalEntry("call", "mandate/method_not_allowed")))
    }))

  it.scopedLive("415 for another media type", () =>
    Effect.gen(function*() {
      const srv = yield* setup()
      const a = yield* post(srv.url, good(), { contentType: "application/json" })
      expect([a.status, jsonOf(a)]).toEqual([415, { error: "mandate/unsupported_media_type" }])
      expect((yield* srv.audit).map(fields)).toEqual([refusalEntry("call", "mandate/unsupported_media_type")])
    }))

  it.scopedLive("too_large: a declared length over the limit, unread", () =>
    Effect.gen(function*() {
      const srv = yield* setup()
      const a = yield* post(srv.url, `{"pad":"${"x".repeat(70_000)}"}`)
      expect([a.status, jsonOf(a)]).toEqual([400, { error: "too_large" }])
      expect((yield* srv.audit).map(fields)).toEqual([refusalEntry("call", "too_large")])
    }))

  it.scopedLive("too_large: a chunked body that passes the limit is answered, then the connection closed", () =>
    Effect.gen(function*() {
      const srv = yield* setup()
      const answer = yield* Effect.async<{ status: number; body: string; connection: string | undefined }>((resume) => {
        const req = Http.request(srv.url, { method: "POST", headers: { "content-type": "application/writ+json" } }, (res) => {
          let body = ""
          res.on("data", (d: Buffer) => { body += d.toString() })
          res.on("end", () => {
            req.destroy()
            resume(Effect.succeed({ status: res.statusCode ?? 0, body, connection: res.headers.connection }))
          })
        })
        req.on("error", () => {})
        req.write(`{"pad":"${"y".repeat(70_000)}`)
      })
      expect(answer).toEqual({ status: 400, body: `{"error":"too_large"}`, connection: "close" })
      expect((yield* srv.audit).map(fields)).toEqual([refusalEntry("call", "too_large")])
    }))

  it.scopedLive("an unreadable body (the client goes away mid-body) is audited", () =>
    Effect.gen(function*() {
      const srv = yield* setup()
      const req = Http.request(srv.url, {
        method: "POST", headers: { "content-type": "application/writ+json", "content-length": "1000" }
      })
      req.on("error", () => {})
      req.write(`{"v":1,"typ":"call"`)
      // Bounded wait until the server has read that much, then the client drops.
      yield* Effect.sleep("100 millis")
      req.destroy()
      let entries: ReadonlyArray<AuditEntry> = []
      for (let i = 0; i < 100 && entries.length === 0; i++) {
        yield* Effect.sleep("20 millis")
        entries = yield* srv.audit
      }
      expect(entries.map(fields)).toEqual([refusalEntry("call", "mandate/body_unreadable")])
    }))

  it.scopedLive("429 for a revoke over the peer's rate", () =>
    Effect.gen(function*() {
      const srv = yield* setup({ burst: 1, perSecond: 0.001 })
      const chain = [writ(A, E, { act: prefix("t/") })]
      const first = yield* post(srv.url, revoke(A, chain))
      const over = revoke(A, chain)
      const second = yield* post(srv.url, over)
      expect([first.status, second.status, jsonOf(second)]).toEqual([200, 429, { error: "mandate/rate_limited" }])
      const entries = (yield* srv.audit).map(fields)
      expect(entries.length).toBe(2)
      // Charged once the revoke verified (section 12), so its entry names it and its signer.
      expect(entries[1]).toEqual({
        kind: "revoke", identity: identity(over), unparsed: null, principal: A.did, peer: null, root: A.did,
        leaf: identity(chain[0]), op: null, outcome: "error", reason: "mandate/rate_limited", signed: null
      })
    }))
})
