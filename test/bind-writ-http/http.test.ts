// The HTTP binding (section 10) over a real loopback connection: every status path, the byte and
// nesting limits applied before parsing, the revoke rate limit (section 12), and the Forwarder.
import { describe, expect, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import * as Http from "node:http"
import { httpForwarder, postWrit, type PostOptions } from "../../src/bind/writ-http/client.js"
import { RevokeRateLimit } from "../../src/bind/writ-http/rate-limit.js"
import { hashOf } from "../../src/writ/executor/tally-sign.js"
import { Forwarder, type Outcome } from "../../src/writ/executor/services.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { serveScoped, settableClock } from "./inproc.js"
import { call, identity, key, prefix, revoke, writ } from "./support.js"

const A = key(11) // root issuer, accepted
const E = key(12) // the executor
const S = key(13) // a stranger root

/** The application: `t/ok` returns a body; `t/nores` none; `t/hold` waits until told to stop. */
let held: Deferred.Deferred<void> | undefined
const app = {
  perform: (op: { op: string; args: JsonObject; stopSignal: Effect.Effect<void> }): Effect.Effect<Outcome> =>
    Effect.gen(function*() {
      if (op.op === "t/nores") return { st: "ok" } as Outcome
      if (op.op === "t/race") {
        // A timer raced against the stop signal: the loser must be interruptible.
        return yield* Effect.race(
          Effect.as(Effect.sleep("5 millis"), { st: "ok", res: { raced: true } } as Outcome),
          Effect.as(op.stopSignal, { st: "canceled", code: "test/stopped" } as Outcome)
        )
      }
      if (op.op === "t/hold") {
        if (held !== undefined) yield* Deferred.succeed(held, undefined)
        yield* op.stopSignal
        return { st: "canceled", code: "test/stopped" } as Outcome
      }
      return { st: "ok", res: { echo: op.args } } as Outcome
    })
}

/** The executor served for the whole file (its scope closes after the last test). */
class Server extends Context.Tag("test/bind-writ-http/Server")<Server, { readonly url: string }>() {}
const ServerLive = Layer.scoped(Server, serveScoped({ executorKey: E, roots: [A], app, act: ["t/"] }))

const post = (body: JsonObject | Uint8Array | string, o: PostOptions = {}, url?: string) =>
  Effect.flatMap(Server, (srv) => postWrit(url ?? srv.url, body, o))
/** A fetch through the global fetch API, for requests the client module would not send. */
const fetchE = (url: string | URL) => Effect.promise(() => fetch(url))
const text = (b: Uint8Array) => Buffer.from(b).toString("utf8")
const jsonOf = (a: { json: Option.Option<Json> }) => Option.getOrThrow(a.json) as JsonObject
const chainT = () => [writ(A, E, { act: prefix("t/") })]

layer(ServerLive, { excludeTestServices: true })("the HTTP binding (section 10)", (it) => {
  describe("POST a call", () => {
    it.scoped("answers 200 {tally,res}; res hashes to tally.out; a replay is byte for byte the same", () =>
      Effect.gen(function*() {
        const c = call(A, chainT(), "t/ok", { x: 1 })
        const first = yield* post(c)
        expect(first.status).toBe(200)
        expect(first.headers["content-type"]).toBe("application/writ+json")
        const body = jsonOf(first)
        expect(Object.keys(body).sort()).toEqual(["res", "tally"])
        const tally = body.tally as JsonObject
        expect(tally.st).toBe("ok")
        expect(tally.call).toBe(identity(c))
        expect(tally.out).toBe(hashOf(body.res as Json))
        const again = yield* post(c)
        expect(again.status).toBe(200)
        expect(text(again.bytes)).toBe(text(first.bytes))
      }))

    it.scoped("has no res member when the reply has no body", () =>
      Effect.gen(function*() {
        const a = yield* post(call(A, chainT(), "t/nores"))
        expect(a.status).toBe(200)
        expect(Object.keys(jsonOf(a))).toEqual(["tally"])
      }))

    it.scoped("an operation that races a timer against its stop signal completes (work is interruptible under the server)", () =>
      Effect.gen(function*() {
        const answers = yield* Effect.all(Array.from({ length: 4 }, (_, i) => post(call(A, chainT(), "t/race", { i }))), {
          concurrency: "unbounded"
        })
        expect(answers.map((a) => [a.status, (jsonOf(a).tally as JsonObject).st])).toEqual(Array(4).fill([200, "ok"]))
      }), 10_000)

    it.scoped("accepts media type parameters", () =>
      Effect.gen(function*() {
        const a = yield* post(call(A, chainT(), "t/ok"), { contentType: "Application/Writ+JSON; charset=utf-8" })
        expect(a.status).toBe(200)
      }))

    it.scoped("answers section 7 steps 1 and 2 with 400 {error}", () =>
      Effect.gen(function*() {
        const c = call(A, chainT(), "t/ok", { x: 1 })
        const tampered = yield* post({ ...c, args: { x: 2 } })
        expect([tampered.status, jsonOf(tampered)]).toEqual([400, { error: "bad_signature" }])
        const { op: _op, ...missing } = c
        const m = yield* post(missing)
        expect([m.status, jsonOf(m)]).toEqual([400, { error: "malformed" }])
        const v2 = yield* post({ ...c, v: 2 })
        expect([v2.status, jsonOf(v2)]).toEqual([400, { error: "unsupported_version" }])
        const badWrit = yield* post(call(A, [{ ...chainT()[0], exp: 1 }], "t/ok"))
        expect([badWrit.status, jsonOf(badWrit)]).toEqual([400, { error: "bad_signature" }])
      }))

    it.scoped("answers a later refusal with 200 and a signed failed tally, no res", () =>
      Effect.gen(function*() {
        const a = yield* post(call(S, [writ(S, E, { act: prefix("t/") })], "t/ok"))
        expect(a.status).toBe(200)
        const body = jsonOf(a)
        expect(Object.keys(body)).toEqual(["tally"])
        expect((body.tally as JsonObject).st).toBe("failed")
        expect((body.tally as JsonObject).err).toEqual({ code: "root_not_accepted" })
      }))

    it.scoped("a writ in an Authorization header is no authority: the body alone is read", () =>
      Effect.gen(function*() {
        const w = chainT()
        const a = yield* post(call(A, w, "t/ok"), { headers: { authorization: `Writ ${JSON.stringify(w[0])}` } })
        expect(a.status).toBe(200)
        const b = yield* post("{}", { headers: { authorization: `Writ ${JSON.stringify(w[0])}` } })
        // `{}` lacks `v`, the first member section 6.1 reads.
        expect([b.status, jsonOf(b)]).toEqual([400, { error: "unsupported_version" }])
      }))
  })

  describe("media type, method, path, well-known", () => {
    it.scoped("415 unless Content-Type is application/writ+json", () =>
      Effect.gen(function*() {
        const c = call(A, chainT(), "t/ok")
        for (const ct of ["application/json", "text/plain", "application/writ+json2", ""]) {
          const a = yield* post(c, { contentType: ct })
          expect([ct, a.status, jsonOf(a)]).toEqual([ct, 415, { error: "mandate/unsupported_media_type" }])
        }
      }))

    it.scoped("405 for another method on the endpoint, 404 elsewhere", () =>
      Effect.gen(function*() {
        const srv = yield* Server
        const get = yield* fetchE(srv.url)
        expect(get.status).toBe(405)
        expect(get.headers.get("allow")).toBe("POST")
        const other = yield* post(call(A, chainT(), "t/ok"), {}, srv.url.replace("/writ", "/other"))
        expect(other.status).toBe(404)
      }))

    it.scoped("GET /.well-known/writ (Appendix B)", () =>
      Effect.gen(function*() {
        const srv = yield* Server
        const r = yield* fetchE(new URL("/.well-known/writ", srv.url))
        expect(r.status).toBe(200)
        expect(yield* Effect.promise(() => r.json())).toEqual({ v: 1, did: E.did, endpoint: srv.url, act: ["t/"] })
      }))
  })

  /** A raw request, for bodies the client module would not send. */
  const raw = (
    url: string,
    write: (req: Http.ClientRequest) => void,
    headers: Record<string, string> = {}
  ): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = Http.request(url, { method: "POST", headers: { "content-type": "application/writ+json", ...headers } }, (res) => {
        let body = ""
        res.on("data", (d: Buffer) => { body += d.toString() })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on("error", reject)
      write(req)
    })

  describe("limits before parsing", () => {
    it.scoped("a declared Content-Length over 65536 bytes is too_large, unread", () =>
      Effect.gen(function*() {
        const a = yield* post(`{"pad":"${"x".repeat(65537 - 10)}"}`)
        expect(Buffer.byteLength(`{"pad":"${"x".repeat(65537 - 10)}"}`)).toBe(65537)
        expect([a.status, jsonOf(a)]).toEqual([400, { error: "too_large" }])
      }))

    it.scoped("a call of exactly 65536 bytes is read (whitespace counts; the limit is inclusive)", () =>
      Effect.gen(function*() {
        const c = call(A, chainT(), "t/ok")
        const s = JSON.stringify(c)
        const a = yield* post(s + " ".repeat(65536 - Buffer.byteLength(s)))
        expect(a.status).toBe(200)
        expect((jsonOf(a).tally as JsonObject).st).toBe("ok")
      }))

    it.scoped("reading stops at the limit: a chunked body that never ends is answered once it passes 65536 bytes", () =>
      Effect.gen(function*() {
        // If the server read to the end it would never answer: the request stays open.
        const srv = yield* Server
        let request: Http.ClientRequest | undefined
        const r = yield* Effect.promise(() =>
          raw(srv.url, (req) => {
            request = req
            req.write(`{"pad":"${"y".repeat(70_000)}`)
          })
        )
        request?.destroy()
        expect(r).toEqual({ status: 400, body: `{"error":"too_large"}` })
      }), 15_000)

    it.scoped("nesting over 64 levels is too_large, found before any other rule (duplicates, syntax)", () =>
      Effect.gen(function*() {
        const deep = "[".repeat(65) + "]".repeat(65)
        const a = yield* post(deep)
        expect([a.status, jsonOf(a)]).toEqual([400, { error: "too_large" }])
        // Malformed after the deep part, with a duplicate member: still too_large.
        const worse = `{"a":1,"a":${"[".repeat(65)}`
        const b = yield* post(worse)
        expect([b.status, jsonOf(b)]).toEqual([400, { error: "too_large" }])
        // 64 levels are within the limit: refused for another reason.
        const ok64 = `{"v":1,"typ":"call","x":${"[".repeat(63)}${"]".repeat(63)}}`
        const c = yield* post(ok64)
        expect(c.status).toBe(400)
        expect(jsonOf(c).error).not.toBe("too_large")
      }))

    it.scoped("strict reading: duplicates, fractions, trailing data are noncanonical", () =>
      Effect.gen(function*() {
        for (const body of [`{"v":1,"v":1}`, `{"v":1.5}`, `{"v":1} x`, `{"v":1`, "\"\\ud800\""]) {
          const a = yield* post(body)
          expect([body, a.status, jsonOf(a)]).toEqual([body, 400, { error: "noncanonical" }])
        }
      }))
  })

  describe("POST a revoke", () => {
    it.scoped("200 {tallies,ack,res}: the ack's body holds the finished call; later forward calls are refused", () =>
      Effect.gen(function*() {
        const chain = chainT()
        const c = call(A, chain, "t/ok")
        const done = jsonOf(yield* post(c)).tally as JsonObject
        const r = revoke(A, chain)
        const a = yield* post(r)
        expect(a.status).toBe(200)
        const body = jsonOf(a)
        expect(Object.keys(body).sort()).toEqual(["ack", "res", "tallies"])
        expect(body.tallies).toEqual([])
        const ack = body.ack as JsonObject
        expect([ack.typ, ack.iss, ack.revoke, ack.out]).toEqual(["ack", E.did, identity(r), hashOf(body.res as Json)])
        expect(body.res).toEqual({ held: [{ call: identity(c), tally: identity(done) }], open: [] })
        const after = jsonOf(yield* post(call(A, chain, "t/ok"))).tally as JsonObject
        expect([after.st, after.err]).toEqual(["failed", { code: "revoked" }])
      }))

    it.scoped("answers a call in flight with a pending tally and stops it; the call then returns canceled", () =>
      Effect.gen(function*() {
        const chain = chainT()
        held = yield* Deferred.make<void>()
        const c = call(A, chain, "t/hold")
        const inflight = yield* Effect.fork(post(c))
        yield* Deferred.await(held)
        const a = yield* post(revoke(A, chain))
        expect(a.status).toBe(200)
        const body = jsonOf(a)
        const tallies = body.tallies as Array<JsonObject>
        expect(tallies.map((t) => [t.call, t.st])).toEqual([[identity(c), "pending"]])
        expect(body.res).toEqual({ held: [], open: [identity(c)] })
        const final = jsonOf(yield* Fiber.join(inflight)).tally as JsonObject
        expect([final.st, final.err]).toEqual(["canceled", { code: "test/stopped" }])
      }))

    it.scoped("an invalid revoke is 400 {error} and changes nothing", () =>
      Effect.gen(function*() {
        const chain = chainT()
        const r = revoke(A, chain)
        const a = yield* post({ ...r, sig: revoke(S, []).sig })
        expect([a.status, jsonOf(a)]).toEqual([400, { error: "bad_signature" }])
        const b = yield* post(revoke(S, chain))
        expect([b.status, jsonOf(b)]).toEqual([400, { error: "no_standing" }])
        const still = jsonOf(yield* post(call(A, chain, "t/ok"))).tally as JsonObject
        expect(still.st).toBe("ok")
      }))

    it.scoped("503 {error} when the revoke could not be persisted; it is still honored while the process runs", () =>
      Effect.gen(function*() {
        // A server of its own, closed with the test's scope.
        const broken = yield* serveScoped({ executorKey: E, roots: [A], app, failRevokeWrites: true })
        const chain = chainT()
        const a = yield* post(revoke(A, chain), {}, broken.url)
        expect([a.status, jsonOf(a)]).toEqual([503, { error: "mandate/store_unavailable" }])
        const after = jsonOf(yield* post(call(A, chain, "t/ok"), {}, broken.url)).tally as JsonObject
        expect([after.st, after.err]).toEqual(["failed", { code: "revoked" }])
      }))
  })

  describe("revoke rate limit per peer (section 12), on an injected clock", () => {
    it.scoped("refuses past the burst with 429 and Retry-After, after verifying, and refills with the clock", () =>
      Effect.gen(function*() {
        const t = settableClock()
        const limited = yield* serveScoped({ executorKey: E, roots: [A], app, rate: { burst: 2, perSecond: 1 }, rateClock: t.clock })
        const one = yield* post(revoke(A, chainT()), {}, limited.url)
        const bad = yield* post({ ...revoke(A, chainT()), sig: "x" }, {}, limited.url) // invalid: not counted
        const two = yield* post(revoke(A, chainT()), {}, limited.url)
        const three = yield* post(revoke(A, chainT()), {}, limited.url)
        expect([one.status, bad.status, two.status, three.status]).toEqual([200, 400, 200, 429])
        expect(jsonOf(three)).toEqual({ error: "mandate/rate_limited" })
        expect(three.headers["retry-after"]).toBe("1")
        // Calls are not limited.
        expect((yield* post(call(A, chainT(), "t/ok"), {}, limited.url)).status).toBe(200)
        t.advance(999)
        expect((yield* post(revoke(A, chainT()), {}, limited.url)).status).toBe(429)
        t.advance(1)
        expect((yield* post(revoke(A, chainT()), {}, limited.url)).status).toBe(200)
        expect((yield* post(revoke(A, chainT()), {}, limited.url)).status).toBe(429)
      }))

    it.scoped("RevokeRateLimit keeps one bucket per peer", () =>
      Effect.gen(function*() {
        const t = settableClock()
        const take = (p: string) =>
          Effect.flatMap(
            Effect.withClock(RevokeRateLimit.make({ burst: 1, perSecond: 0.5 }), t.clock),
            (l) => {
              const fresh = { iss: "did:key:zFresh", known: false }
              return Effect.all([l.take(p, fresh), l.take(p, fresh), l.take(`${p}-other`, fresh)])
            }
          )
        const [a, b, c] = yield* take("peer:x")
        expect([a.ok, b.ok, c.ok]).toEqual([true, false, true])
        expect(b).toEqual({ ok: false, retryAfter: 2 })
      }))
  })

  describe("the HTTP Forwarder (section 9.1)", () => {
    it.scoped("posts the revoke to the holder's endpoint and returns its ack; unknown or unreachable holders give nothing", () =>
      Effect.gen(function*() {
        const chain = chainT()
        const r = revoke(A, chain)
        const srv = yield* Server
        const fwd = (endpoints: Record<string, string>, holder: string) =>
          Effect.flatMap(Forwarder, (f) => f.forward(r, holder)).pipe(Effect.provide(httpForwarder(endpoints)))
        const got = yield* fwd({ [E.did]: srv.url }, E.did)
        expect(Option.isSome(got)).toBe(true)
        const answer = Option.getOrThrow(got)
        expect([answer.ack.iss, answer.ack.revoke, answer.ack.out]).toEqual([E.did, identity(r), hashOf(answer.res)])
        expect(answer.fwd).toEqual([])
        expect(Option.isNone(yield* fwd({}, E.did))).toBe(true)
        expect(Option.isNone(yield* fwd({ [E.did]: "http://127.0.0.1:1/writ" }, E.did))).toBe(true)
      }))
  })
})
