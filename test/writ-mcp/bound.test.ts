// The bound methods' mapping and answer check (src/bind/writ-mcp/bound.ts), every refusal path:
// the section 6.2 check of the tally is stubbed (client.ts `verifyAnswer` is tested with real
// tallies in binding.test.ts and the gate tests); what is checked here is what bound.ts adds.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { admits, boundRequest, checkBound, checkNamed, matchBound, presentBound, refusalData, withCall } from "../../src/bind/writ-mcp/bound.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { hashOf } from "../../src/writ/sign.js"
import type { CheckedTally } from "../../src/writ/tally.js"
import type { Bounds } from "../../src/writ/bound.js"

const body = { contents: [{ uri: "demo://a", text: "alpha" }] }
const tally = (st: string, out: string | null): JsonObject => ({ st, out, ...(st === "ok" ? {} : { err: { code: "count_exhausted" } }) })
// The stub of section 6.2: the tally as given, as client.ts would return it once verified.
const stub = (t: Json) => Effect.succeed({ json: t, value: t } as unknown as CheckedTally)
const answer = (m: JsonObject) => checkBound("resources/read", m, stub)
const reasonOf = (m: JsonObject) => Effect.map(Effect.flip(answer(m)), (e) => e.reason)

describe("bound methods: ops and args", () => {
  it("each bound method maps to its op and args; the request leaves with the signed args", () => {
    expect(boundRequest("resources/read", { uri: "demo://a" })).toEqual({ method: "resources/read", name: "demo://a", op: "mcp/resources/read", args: { uri: "demo://a" } })
    expect(boundRequest("prompts/get", { name: "p", arguments: { city: "Paris" } })?.op).toBe("mcp/prompts/p")
    expect(boundRequest("tools/call", { name: "t" })?.args).toEqual({})
    expect(boundRequest("resources/list", {})).toBeUndefined()
    const r = boundRequest("resources/read", { uri: "demo://a" })!
    expect(withCall(r, { uri: "demo://a" }, { id: "c" })).toEqual({ uri: "demo://a", _meta: { "io.writ/call": { id: "c" } } })
  })

  it("a leaf admits a URI its act names and its uri bound holds", () => {
    const bnd = { act: { t: "prefix", v: "mcp/resources/read" }, uri: { t: "set", v: ["demo://a"] } } as unknown as Bounds
    expect(admits(bnd, "mcp/resources/read", { uri: "demo://a" })).toBe(true)
    expect(admits(bnd, "mcp/resources/read", { uri: "demo://b" })).toBe(false)
    expect(admits(bnd, "mcp/prompts/p", { uri: "demo://a" })).toBe(false)
  })

  it.effect("refusals: an op or args other than the request's are malformed; an act that does not name it, method_refused", () =>
    Effect.gen(function*() {
      const r = boundRequest("resources/read", { uri: "demo://a" })!
      expect((yield* Effect.flip(matchBound(r, "no"))).reason).toBe("malformed")
      expect((yield* Effect.flip(matchBound(r, { op: "mcp/tools/x", args: { uri: "demo://a" } }))).reason).toBe("malformed")
      expect((yield* Effect.flip(matchBound(r, { op: "mcp/resources/read", args: { uri: "demo://b" } }))).reason).toBe("malformed")
      expect(yield* matchBound(r, { op: "mcp/resources/read", args: { uri: "demo://a" } })).toBeDefined()
      expect((yield* Effect.flip(checkNamed({ act: { t: "prefix", v: "mcp/tools/" } }, r))).reason).toBe("method_refused")
      yield* checkNamed({ act: { t: "prefix", v: "mcp/" } }, r)
      // A tool is left to the Writ check (forbidden_op), not refused here.
      yield* checkNamed({ act: { t: "prefix", v: "mcp/prompts/" } }, boundRequest("tools/call", { name: "t" })!)
    }))
})

describe("bound methods: the answer", () => {
  it.effect("an ok result whose body hashes to out passes; a refusal carried in an error passes with its tally", () =>
    Effect.gen(function*() {
      const ok = yield* answer({ result: presentBound(tally("ok", hashOf(body)), body) })
      expect(ok?.ok).toBe(true)
      expect(ok?.body).toEqual(body)
      const refused = yield* answer({ error: { code: -32001, message: "m", data: refusalData(tally("failed", null), undefined) } })
      expect(refused?.ok).toBe(false)
      // An error with no tally claims nothing was done: passed on as it is.
      expect(yield* answer({ error: { code: -32001, message: "m", data: { reason: "missing_call" } } })).toBeUndefined()
    }))

  it.effect("refusals: no tally, a tally that contradicts the answer's kind, no body, another body", () =>
    Effect.gen(function*() {
      expect(yield* reasonOf({ result: body })).toBe("missing_tally")
      expect(yield* reasonOf({ result: { ...body, _meta: { "io.writ/tally": tally("failed", null), "io.writ/body": "result" } } })).toBe("result_mismatch")
      expect(yield* reasonOf({ error: { code: -32001, message: "m", data: { "io.writ/tally": tally("ok", hashOf(body)) } } })).toBe("result_mismatch")
      expect(yield* reasonOf({ result: { ...body, _meta: { "io.writ/tally": tally("ok", null), "io.writ/body": "result" } } })).toBe("result_mismatch")
      expect(yield* reasonOf({ result: { ...body, _meta: { "io.writ/tally": tally("ok", hashOf(body)) } } })).toBe("result_mismatch")
      expect(yield* reasonOf({ result: presentBound(tally("ok", hashOf(body)), { contents: [] }) })).toBe("result_mismatch")
      const other = { contents: [{ uri: "demo://b", text: "beta" }] }
      expect(yield* reasonOf({ result: presentBound(tally("ok", hashOf(body)), other) })).toBe("result_mismatch")
      expect(yield* reasonOf({ error: { code: -32001, message: "m", data: { "io.writ/tally": tally("failed", hashOf(body)) } } })).toBe("result_mismatch")
    }))
})
