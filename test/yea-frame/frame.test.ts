// Frames (SPEC §2.1, §3, §4, §5, §7): the runtime's decoding, the Effect Schemas and the JSON
// Schemas published in schema/yea/ accept exactly the same frames.
import { describe, expect, it } from "@effect/vitest"
import { Either, JSONSchema, Schema } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { decodeReplyEither, decodeRequestEither, ReplyFrame, RequestFrame, replyTo } from "../../src/yea/frame.js"
import { repoRoot } from "../support/shared.js"
import { validate } from "./json-schema.js"
import { depth } from "../support/depth.js"

const published = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(repoRoot, "schema", "yea", name), "utf8")) as Record<string, unknown>

const proof = { key: "ed25519:AAAA", ts: 1790000000, sig: "c2ln" }
const proposal = {
  id: "p_1",
  capability: "shop.order",
  summary: "Order",
  effects: [{ op: "create", target: "order/1" }],
  uses: { spend: { amount: 2287, scale: 2, unit: "USD" } },
  risk: "low",
  undo: { window: 600 },
  expires: 1790000600,
  hash: "h"
}
const receipt = { id: "r_1", proposal: "p_1", capability: "shop.order", summary: "Order", at: 1, effects: [], undo: null }

const requests: ReadonlyArray<Record<string, unknown>> = [
  { yea: 1, id: "1", verb: "HELLO", agent: { name: "claude", key: "ed25519:x" }, budget: 800 },
  { yea: 1, id: "2", verb: "ASK", capability: "calendar.find", params: { day: "2026-09-24" }, budget: 600 },
  { yea: 1, id: "3", verb: "INTENT", capability: "c", goal: "g", params: {}, auto: true, grants: ["pg1.x"], proof },
  { yea: 1, id: "4", verb: "COMMIT", proposal: "p_1", hash: "Qm9", grants: ["pg1.x"], proof },
  { yea: 1, id: "5", verb: "UNDO", receipt: "r_91", grants: ["pg1.x"], proof },
  { yea: 1, id: "6", verb: "EXPAND", handle: "h_3kd", budget: 1500 }
]
const replies: ReadonlyArray<Record<string, unknown>> = [
  { yea: 1, id: "s1", re: "1", kind: "BRIEF", service: { id: "cal", name: "Cal", summary: "s" }, capabilities: [
    { name: "calendar.find", kind: "ask", summary: "Search", params: { "query?": "string", n: { a: "int" }, items: [{ sku: "string" }] } },
    { name: "calendar.reschedule", kind: "intent", risk: "low" }
  ] },
  { yea: 1, id: "s2", re: "2", kind: "ANSWER", data: { a: [1, 2] }, more: [{ handle: "h", path: "data.a", remaining: 2, est: 5 }] },
  { yea: 1, id: "s3", re: "3", kind: "PROPOSALS", proposals: [proposal] },
  { yea: 1, id: "s4", re: "3", kind: "CLARIFY", question: "Which?", options: [{ label: "a", params: { x: 1 } }] },
  { yea: 1, id: "s5", re: "4", kind: "RECEIPT", receipt, replay: true },
  { yea: 1, id: "s6", re: "4", kind: "ERROR", code: "invalid_params", message: "m", fix: [{ say: "s", params: { to: "x" } }], retry: null },
  { yea: 1, id: "s7", re: "4", kind: "EVENT", message: "working", progress: 0.5 }
]

const KEYS = ["yea", "id", "verb", "kind", "re", "budget", "grants", "proof", "capability", "params", "goal", "auto", "proposal", "hash",
  "receipt", "handle", "agent", "service", "capabilities", "data", "more", "proposals", "question", "options", "code", "message", "fix",
  "need", "consent", "retry", "progress", "replay", "lens", "zzz"]

const scalar = fc.constantFrom<unknown>(null, true, false, 0, 1, -1, 0.5, 2, 1.5, 2 ** 53, 1_000_001, "", "x", "HELLO", "COMMIT",
  "ANSWER", "EVENT", "low", "bad_frame", "a".repeat(257), "ed25519:AAAA")
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" }, scalar, fc.array(tie("v"), { maxLength: 2 }), fc.dictionary(fc.constantFrom(...KEYS, "amount", "label", "say", "name", "op", "target", "key", "ts", "sig"), tie("v"), { maxKeys: 3, noNullPrototype: true }),
    fc.constantFrom<unknown>(proof, proposal, receipt, { ...proposal, risk: "extreme" }, { ...proposal, uses: { spend: { amount: 1, currency: "USD" } } }, ["pg1.a"], Array(17).fill("g")))
})).v

/** A known-good frame with up to three members replaced, removed or added. */
const mutated = (bases: ReadonlyArray<Record<string, unknown>>) =>
  fc.tuple(fc.constantFrom(...bases), fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.option(json, { nil: undefined })), { maxLength: 3 })).map(
    ([base, edits]) => {
      const f: Record<string, unknown> = { ...base }
      for (const [k, v] of edits) {
        if (v === undefined) delete f[k]
        else f[k] = v
      }
      return f
    }
  )

describe("frames: runtime, Effect Schema and published JSON Schema agree", () => {
  const requestJson = published("frame-request.schema.json")
  const replyJson = published("frame-reply.schema.json")

  it("the published files are what the Schemas generate", () => {
    expect(requestJson).toEqual(JSON.parse(JSON.stringify(requestJson)))
    // The generator opens objects (§2.1 unknown fields) and bounds integers; the rest is JSONSchema.make's.
    expect(Object.keys((JSONSchema.make(RequestFrame) as { $defs: object }).$defs).sort()).toEqual(
      Object.keys(requestJson.$defs as object).sort()
    )
  })

  it("accepts every example frame of the spec's shapes", () => {
    for (const r of requests) {
      expect(Either.isRight(decodeRequestEither(r))).toBe(true)
      expect(validate(requestJson, r)).toBe(true)
    }
    for (const r of replies) {
      expect(Either.isRight(decodeReplyEither(r))).toBe(true)
      expect(validate(replyJson, r)).toBe(true)
    }
  })

  it("requests: same verdict for every mutated frame", () => {
    fc.assert(
      fc.property(mutated(requests), (f) => {
        const runtime = Either.isRight(decodeRequestEither(f))
        expect(Schema.is(RequestFrame)(f)).toBe(runtime)
        expect(validate(requestJson, f)).toBe(runtime)
      }),
      { numRuns: depth(3000), seed: 7 }
    )
  })

  it("replies: same verdict for every mutated frame", () => {
    fc.assert(
      fc.property(mutated(replies), (f) => {
        const runtime = Either.isRight(decodeReplyEither(f))
        expect(Schema.is(ReplyFrame)(f)).toBe(runtime)
        expect(validate(replyJson, f)).toBe(runtime)
      }),
      { numRuns: depth(3000), seed: 8 }
    )
  })
})

describe("request decoding names the §7 code", () => {
  const code = (f: unknown) => Either.match(decodeRequestEither(f), { onLeft: (e) => e.reason, onRight: () => "ok" })
  it("refuses non-objects, a wrong version, a missing id and unknown verbs with bad_frame", () => {
    expect(code([])).toBe("bad_frame")
    expect(code({ yea: 2, id: "1", verb: "HELLO" })).toBe("bad_frame")
    expect(code({ yea: 1, verb: "HELLO" })).toBe("bad_frame")
    expect(code({ yea: 1, id: "1", verb: "GET" })).toBe("bad_frame")
    expect(code({ yea: 1, id: "1", verb: "toString" })).toBe("bad_frame")
    expect(code({ yea: 1, id: "1", verb: "COMMIT", proposal: "p" })).toBe("bad_frame")
    expect(code({ yea: 1, id: "1", verb: "HELLO", budget: -1 })).toBe("bad_frame")
    expect(code({ yea: 1, id: "1", verb: "HELLO", grants: Array(17).fill("g") })).toBe("bad_frame")
  })
  it("ignores unknown members (§2.1)", () => {
    expect(code({ yea: 1, id: "1", verb: "HELLO", future: { x: 1 } })).toBe("ok")
  })
  it("answers a frame without a usable id with re \"\"", () => {
    expect(replyTo({ id: 5 })).toBe("")
    expect(replyTo({ id: "a".repeat(257) })).toBe("")
    expect(replyTo({ id: "7" })).toBe("7")
  })
})
