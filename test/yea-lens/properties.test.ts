// Property tests (fast-check, 1000 runs each): Lens is total and deterministic over any JSON value
// and any frame shape, never lets an unprintable character through, and budget fitting either
// fits or has nothing left to elide while never changing a proposal (other than its data) or a
// capability entry.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeCanonical, utf8 } from "../../src/kernel/canonical.js"
import { hashB64 } from "../../src/kernel/hash.js"
import type { Json } from "../../src/kernel/json.js"
import { fitReply } from "../../src/yea/lens/budget.js"
import { est } from "../../src/yea/lens/estimate.js"
import { isUnprintable } from "../../src/yea/lens/printable.js"
import { lensReplyHardened as lensReply } from "../../src/yea/lens/reply.js"
import { Hardened } from "../../src/yea/lens/value.js"
import { depth } from "../support/depth.js"
const { lensValue } = Hardened

const RUNS = { numRuns: depth(1000) }
const json = fc.jsonValue({ stringUnit: "binary", maxDepth: 4 })
const text = fc.oneof(fc.string({ unit: "binary", maxLength: 30 }), fc.string({ maxLength: 30 }))

/** Any code point other than the line feed separating lines must be printable. */
const allPrintable = (s: string): boolean => {
  for (const ch of s) if (ch !== "\n" && isUnprintable(ch.codePointAt(0)!)) return false
  return true
}

const KINDS = ["BRIEF", "ANSWER", "PROPOSALS", "CLARIFY", "RECEIPT", "ERROR", "EVENT", "STATUS"]
const field = (keys: ReadonlyArray<string>, value: fc.Arbitrary<unknown>) =>
  fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length })
const loose = fc.oneof(json, text)
const effect = field(["op", "target", "field", "from", "to", "detail"], fc.oneof(fc.constantFrom("create", "update", "delete", "send", "other"), loose))
const proposalLike = field(["id", "summary", "effects", "uses", "risk", "undo", "expires", "hash", "data"], fc.oneof(loose, fc.array(effect, { maxLength: 3 })))
const frame = fc
  .tuple(
    fc.oneof(fc.constantFrom(...KINDS), loose),
    field(
      ["data", "proposals", "receipt", "more", "service", "capabilities", "question", "options", "code", "message", "fix", "need", "consent", "retry", "progress", "auto", "replay", "lens"],
      fc.oneof(loose, fc.array(proposalLike, { maxLength: 3 }), proposalLike)
    )
  )
  .map(([kind, rest]) => ({ yea: 1, id: "s", re: "c", kind, ...rest }))

describe("Lens is total and deterministic", () => {
  it("for any JSON value", () => {
    fc.assert(
      fc.property(json, (v) => {
        const a = lensValue(v)
        expect(lensValue(structuredClone(v))).toBe(a)
        expect(allPrintable(a)).toBe(true)
      }),
      RUNS
    )
  })
  it("for any frame shape, known kind or not", () => {
    fc.assert(
      fc.property(frame, (f) => {
        const a = lensReply(f)
        expect(lensReply(structuredClone(f))).toBe(a)
        expect(typeof a).toBe("string")
        expect(allPrintable(a)).toBe(true)
      }),
      RUNS
    )
  })
})

// ---- fitting -----------------------------------------------------------------------------------

const scalar = fc.oneof(fc.integer(), fc.string({ maxLength: 12 }), fc.boolean(), fc.constant(null))
const wordy = fc.string({ unit: fc.constantFrom("a", "b", " ", ",", "1", "é", "😀"), minLength: 0, maxLength: 600 })
const data: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    wordy,
    fc.array(tie("node"), { maxLength: 12 }),
    fc.array(fc.record({ a: fc.integer(), b: fc.string({ maxLength: 8 }) }), { maxLength: 30 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), tie("node"), { maxKeys: 4 })
  )
})).node

const quantity = fc.record(
  { amount: fc.integer({ min: 0, max: 100000 }), scale: fc.integer({ min: 0, max: 4 }), unit: fc.constantFrom("USD", "EUR") },
  { requiredKeys: ["amount"] }
)
const proposal = fc
  .record(
    {
      id: fc.string({ minLength: 1, maxLength: 8 }),
      capability: fc.constant("shop.order"),
      summary: wordy,
      effects: fc.array(
        fc.record(
          { op: fc.constantFrom("create", "update", "delete", "send", "other"), target: fc.string({ maxLength: 20 }), detail: wordy, to: scalar },
          { requiredKeys: ["op", "target"] }
        ),
        { maxLength: 4 }
      ),
      uses: fc.dictionary(fc.constantFrom("spend", "emails", "rows"), quantity, { maxKeys: 2 }),
      risk: fc.constantFrom("low", "medium", "high"),
      undo: fc.oneof(fc.constant(null), fc.record({ window: fc.integer({ min: 0, max: 10 ** 6 }) })),
      expires: fc.integer({ min: 0, max: 2 * 10 ** 9 }),
      data
    },
    { requiredKeys: ["id", "capability", "summary", "effects", "risk", "undo", "expires"] }
  )
  .map((p) => ({ ...p, hash: proposalHash(p) }))

/** SPEC §5.1: b64url(sha256(canonical(proposal without hash and data))). */
function proposalHash(p: Record<string, unknown>): string {
  const { hash: _h, data: _d, ...rest } = p
  return hashB64(utf8(encodeCanonical(rest as Json, "codepoint")))
}

const capability = fc.record({
  name: fc.string({ minLength: 1, maxLength: 12 }),
  kind: fc.constantFrom("ask", "intent"),
  summary: wordy,
  params: fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.constantFrom("string", "int", "date"), { maxKeys: 4 })
})

const reply = fc.oneof(
  fc.record({ kind: fc.constant("PROPOSALS"), proposals: fc.array(proposal, { maxLength: 6 }) }),
  fc.record({ kind: fc.constant("ANSWER"), data }),
  fc.record({
    kind: fc.constant("RECEIPT"),
    auto: fc.boolean(),
    receipt: fc.record({
      id: fc.constant("r_1"),
      summary: wordy,
      undo: fc.constant(null),
      effects: fc.array(fc.record({ op: fc.constant("create"), target: wordy }), { maxLength: 3 }),
      result: data
    })
  }),
  fc.record({ kind: fc.constant("BRIEF"), service: fc.record({ id: fc.constant("s"), name: fc.constant("S") }), capabilities: fc.array(capability, { maxLength: 10 }) })
)

const ROOTS: Record<string, ReadonlyArray<string>> = { ANSWER: ["data"], RECEIPT: ["receipt", "result"] }

/** Independently of the fitting code: nothing in the fitted reply could still be elided. */
const nothingLeft = (r: any): boolean => {
  const done = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.length === 0
    if (typeof v === "string") {
      const n = Array.from(v).length
      return n <= 200 || (n === 201 && v.endsWith("…"))
    }
    if (typeof v === "object" && v !== null) return Object.values(v).every(done)
    return true
  }
  if (r.kind === "PROPOSALS") return r.proposals.length === 0
  if (r.kind === "BRIEF") return r.capabilities.length === 0
  return done(ROOTS[r.kind].reduce((v: any, k) => v?.[k], r))
}

/** How often the generated cases reach each branch (printed when LENS_PROBE is set). */
const stats = { elided: 0, listRoot: 0, exhausted: 0 }

describe("budget fitting", () => {
  it("fits the budget or leaves nothing to elide; proposals (but data) and capabilities are never altered", () => {
    fc.assert(
      fc.property(reply, fc.integer({ min: 0, max: 1500 }), (r, budget) => {
        const before = structuredClone(r)
        let n = 0
        const f = fitReply(r, budget, () => `h_${n++}`)
        expect(r).toEqual(before) // the input is not mutated
        const out = f.reply as any
        const cost = est(lensReply(out))
        expect(cost <= budget || nothingLeft(out)).toBe(true)
        if (f.elided.length > 0) stats.elided++
        if (f.elided.some((e) => e.path === "proposals" || e.path === "capabilities")) stats.listRoot++
        if (cost > budget) stats.exhausted++
        if (out.kind === "PROPOSALS") {
          expect(out.proposals.length).toBeLessThanOrEqual((before as any).proposals.length)
          out.proposals.forEach((p: any, i: number) => {
            const o = (before as any).proposals[i]
            for (const k of ["id", "capability", "effects", "summary", "uses", "risk", "undo", "expires", "hash"]) expect(p[k]).toEqual(o[k])
            expect(Object.keys(p)).toEqual(Object.keys(o))
            expect(proposalHash(p)).toBe(o.hash)
          })
        }
        if (out.kind === "BRIEF") expect(out.capabilities).toEqual((before as any).capabilities.slice(0, out.capabilities.length))
        if (out.kind === "RECEIPT") {
          const { result: _a, ...kept } = out.receipt
          const { result: _b, ...orig } = (before as any).receipt
          expect(kept).toEqual(orig)
        }
        // Every More entry has a distinct handle, with a remainder behind it.
        const handles = (out.more ?? []).map((m: any) => m.handle)
        expect(new Set(handles).size).toBe(handles.length)
        expect(f.elided.map((e) => e.handle).sort()).toEqual([...handles].sort())
      }),
      // Its written depth in every run: the coverage checked below needs it.
      { numRuns: 1000 }
    )
    if (process.env.LENS_PROBE) console.log(stats)
    // The generators must reach elision, list roots and exhaustion, or this property tests little.
    expect(stats.elided).toBeGreaterThan(100)
    expect(stats.listRoot).toBeGreaterThan(20)
    expect(stats.exhausted).toBeGreaterThan(20)
  })
})
