// The strict reader's one pass yields the value, the spans of the outer levels and
// whether each span's text is already canonical (section 1.2), with where `sig` sits (section 1.4).
// The oracle is the serializer: a span called canonical must be exactly encodeCanonical's text.
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { type Json, type JsonObject, parseJson, readJson, type Reading } from "../../src/kernel/json.js"

const OPTIONS = { maxDepth: 64, integersOnly: true, spanLevels: 3, cut: "sig" } as const

const read = (text: string): Reading => {
  const r = readJson(text, OPTIONS)
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
}
const spanOf = (r: Reading, v: Json) => r.spans.get(v as object)
const without = (o: JsonObject, name: string): JsonObject => Object.fromEntries(Object.entries(o).filter(([k]) => k !== name))

const json: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    fc.string({ unit: "binary" }),
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom("sig", "a", "b", "é", "\ud83d\ude00", "A"), fc.string({ maxLength: 3 })), tie("v"), { maxKeys: 5 })
  )
})).v

describe("readJson spans", () => {
  it("takes a canonical text as its own canonical form, and cuts `sig` out of it exactly", () => {
    const text = '{"a":[1,{"b":"x"}],"sig":"AAAA","typ":"writ","v":1}'
    const r = read(text)
    const o = r.value as JsonObject
    const s = spanOf(r, o)!
    expect(s.canonical).toBe(true)
    expect(text.slice(s.start, s.end)).toBe(text)
    expect(text.slice(s.start, s.cut![0]) + text.slice(s.cut![1], s.end)).toBe(encodeCanonical(without(o, "sig"), "utf16"))
    // `sig` first, last and alone: one comma goes with it, or none.
    for (const t of ['{"sig":"A","z":1}', '{"a":1,"sig":"A"}', '{"sig":"A"}']) {
      const q = read(t)
      const p = spanOf(q, q.value)!
      expect(t.slice(p.start, p.cut![0]) + t.slice(p.cut![1], p.end)).toBe(encodeCanonical(without(q.value as JsonObject, "sig"), "utf16"))
    }
  })

  it("calls a text non-canonical for whitespace, member order, an escape, -0, and nested faults", () => {
    for (const t of [
      '{ "a":1}', '{"a":1 }', '{"a": 1}', '[1, 2]', '{"b":1,"a":2}', '{"a":"\\u0041"}', '{"a":"\\n"}', '{"a":-0}',
      '{"a":[{"c":1,"b":2}]}', '{"a":{"x":[1 ]}}'
    ]) {
      const r = read(t)
      expect({ t, canonical: spanOf(r, r.value)!.canonical }).toEqual({ t, canonical: false })
    }
    // Spans only for the levels asked for.
    const r = readJson('{"a":{"b":{"c":{"d":1}}}}', { spanLevels: 2 })
    const v = Either.getOrThrow(r).value as { a: { b: object } }
    expect(Either.getOrThrow(r).spans.has(v.a)).toBe(true)
    expect(Either.getOrThrow(r).spans.has(v.a.b)).toBe(false)
  })

  it.prop("a span called canonical is exactly the serializer's text; a canonical text without escapes is always called so", [json], ([v]) => {
    const canonical = encodeCanonical(v, "utf16")
    for (const text of [canonical, JSON.stringify(v), JSON.stringify(v, null, 1)]) {
      const r = read(text)
      expect(encodeCanonical(r.value, "utf16")).toBe(canonical)
      for (const [value, s] of r.spans) {
        const own = encodeCanonical(value as Json, "utf16")
        if (s.canonical) expect(text.slice(s.start, s.end)).toBe(own)
        // Complete for texts without escapes (a string holding an escape is serialized again).
        if (text === canonical && !text.includes("\\")) expect(s.canonical).toBe(true)
        if (s.cut !== undefined) {
          expect(text.slice(s.start, s.cut[0]) + text.slice(s.cut[1], s.end)).toBe(encodeCanonical(without(value as JsonObject, "sig"), "utf16"))
        }
      }
    }
  })

  it("finds rule 7 while reading, and lets it win over a later fault as the bracket scan did", () => {
    const deep = "[".repeat(65) + "]".repeat(65)
    expect(Either.getLeft(parseJson(deep)).pipe((e) => e._tag === "Some" && e.value.reason)).toBe("too_large")
    // A duplicate member before the depth: still too_large.
    expect(Either.getLeft(parseJson('{"a":1,"a":2,"b":' + deep + "}")).pipe((e) => e._tag === "Some" && e.value.reason)).toBe("too_large")
    // A fault and no excess depth: noncanonical.
    expect(Either.getLeft(parseJson('{"a":1,"a":2}')).pipe((e) => e._tag === "Some" && e.value.reason)).toBe("noncanonical")
    // Exactly 64 levels read.
    expect(Either.isRight(parseJson("[".repeat(64) + "]".repeat(64)))).toBe(true)
  })
})
