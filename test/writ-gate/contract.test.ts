// The gate's request contract and mapping checks as functions (docs/writ-gate.md), each refusal
// with its code and place; the end-to-end tests in gate.test.ts drive the same checks over HTTP.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkRequest, matchRoute, rebuild } from "../../src/bind/writ-gate/contract.js"
import { fold, readMapping } from "../../src/bind/writ-gate/mapping.js"

const mapping = {
  upstream: "http://127.0.0.1:9",
  routes: {
    create: { method: "POST", path: "/v1/orders", act: "orders/create", bind: { amount: "$.total_cents", who: "$.buyer.id" } },
    ship: { method: "post", path: "/v1/orders/{id}/ship", act: "orders/ship", bind: { order: "{id}" } }
  }
}
const enc = (s: string) => new TextEncoder().encode(s)
const outcome = <A>(eff: Effect.Effect<A, { reason: string; path?: string | undefined }>) =>
  Effect.map(Effect.either(eff), (r) => (r._tag === "Left" ? `${r.left.reason} ${r.left.path ?? ""}`.trim() : r.right))

describe("writ gate: request contract and mapping", () => {
  it.effect("extracts exactly the bound values, and rebuilds the request from them alone", () =>
    Effect.gen(function*() {
      const m = yield* readMapping(JSON.stringify(mapping))
      const create = matchRoute(m, "POST", "/v1/orders")!
      expect(yield* checkRequest(create.route, create.params, "", enc(' {"buyer":{"id":"b1"}, "total_cents":5} '))).toEqual({ amount: 5, who: "b1" })
      const r = rebuild(create.route, { amount: 5, who: "b1" })
      expect([r.method, r.path, new TextDecoder().decode(r.body)]).toEqual(["POST", "/v1/orders", '{"buyer":{"id":"b1"},"total_cents":5}'])
      const ship = matchRoute(m, "POST", "/v1/orders/a%2Fb/ship")!
      expect(ship.params).toEqual({ id: "a/b" })
      expect(yield* checkRequest(ship.route, ship.params, "", enc(""))).toEqual({ order: "a/b" })
      // The path is filled from the signed value, percent-encoded.
      expect(rebuild(ship.route, { order: "a/b" })).toEqual({ method: "POST", path: "/v1/orders/a%2Fb/ship", body: undefined })
      expect(matchRoute(m, "GET", "/v1/orders")).toBeUndefined()
      expect(matchRoute(m, "POST", "/v1/orders//ship")).toBeUndefined()
    }))

  it.effect("refuses every break of the contract with its code and place", () =>
    Effect.gen(function*() {
      const m = yield* readMapping(JSON.stringify(mapping))
      const create = matchRoute(m, "POST", "/v1/orders")!
      const ship = matchRoute(m, "POST", "/v1/orders/o1/ship")!
      const c = (body: string, query = "") => outcome(checkRequest(create.route, create.params, query, enc(body)))
      expect(yield* c('{"total_cents":5,"buyer":{"id":"b"}}', "?x=1")).toBe("gate/unbound_query query")
      expect(yield* c('{"total_cents":5,"buyer":{"id":"b","ID":"c"}}')).toBe("gate/ambiguous_member $.buyer.ID")
      expect(yield* c('{"total_cents":5,"buyer":{"id":"b"},"extra":[{"a":1,"A":2}]}')).toBe("gate/ambiguous_member $.extra[0].A")
      expect(yield* c('{"total_cents":5,"buyer":{"id":"b","name":"x"}}')).toBe("gate/unbound_member $.buyer.name")
      expect(yield* c('{"total_cents":5,"buyer":"b"}')).toBe("malformed $.buyer")
      expect(yield* c('{"total_cents":5}')).toBe("malformed $.buyer")
      expect(yield* c('{"total_cents":5.5,"buyer":{"id":"b"}}')).toBe("noncanonical body")
      expect(yield* c('{"total_cents":"\\ud800","buyer":{"id":"b"}}')).toBe("noncanonical body")
      expect(yield* c("null")).toBe("malformed body")
      expect(yield* c("")).toBe("noncanonical body")
      expect(yield* c("[".repeat(65) + "]".repeat(65))).toBe("too_large body")
      expect(yield* c(`{"total_cents":5,"buyer":{"id":"${"x".repeat(70000)}"}}`)).toBe("too_large body")
      const s = (body: string, params = ship.params) => outcome(checkRequest(ship.route, params, "", enc(body)))
      expect(yield* s('{"a":1}')).toBe("gate/unbound_member body")
      expect(yield* s("", { id: "." })).toBe("malformed path.id")
      expect(yield* s("   ")).toEqual({ order: "o1" })
    }))

  it.effect("refuses a mapping that is ambiguous or malformed in itself", () =>
    Effect.gen(function*() {
      const route = mapping.routes.create
      const m = (routes: Record<string, unknown>, upstream = mapping.upstream) => outcome(Effect.asVoid(readMapping(JSON.stringify({ upstream, routes }))))
      expect(yield* m({ a: route, b: { ...route, path: "/v2/orders" } })).toBe("gate/bad_mapping routes")
      expect(yield* m({ a: { ...route, path: "/v1/{x}/{x}", bind: { ...route.bind, p: "{x}" } } })).toBe("gate/bad_mapping routes.a.path")
      expect(yield* m({ a: { ...route, bind: { ...route.bind, p: "{x}" } } })).toBe("gate/bad_mapping routes.a.bind.p")
      expect(yield* m({ a: { ...route, path: "/v1/{x}", bind: { ...route.bind, p: "{x}", q: "{x}" } } })).toBe("gate/bad_mapping routes.a.bind")
      expect(yield* m({ a: { ...route, reverse: { method: "POST", path: "/v1/{order}/cancel", id: "$.id", ttl: 60 } } })).toBe("gate/bad_mapping routes.a.reverse.path")
      expect(yield* m({ a: route }, "ftp://example")).toBe("gate/bad_mapping mapping")
      expect(yield* outcome(Effect.asVoid(readMapping('{"upstream":"http://a","upstream":"http://b","routes":{}}')))).toBe("gate/bad_mapping mapping")
      // Folding: the long s and the Kelvin sign fold onto ASCII.
      expect([fold("total_centſ"), fold("\u212Aey")]).toEqual(["total_cents", "key"])
    }))
})
