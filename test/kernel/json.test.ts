import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc } from "effect"
import { encodeCanonical, jsonDepth, parseJson, parseJsonEffect, scanDepth, type Json } from "../../src/kernel/index.js"
import { depth } from "../support/depth.js"

const reason = (input: string | Uint8Array, opts?: Parameters<typeof parseJson>[1]) =>
  Either.match(parseJson(input, opts), { onLeft: (e) => e.reason, onRight: () => "ok" })

describe("strict JSON reader (Writ section 1.1)", () => {
  it("reads ordinary JSON", () => {
    expect(Either.getOrThrow(parseJson('{"a":[1,-2,"x",true,false,null],"b":{}}'))).toEqual({ a: [1, -2, "x", true, false, null], b: {} })
  })
  it("reads -0 as 0", () => {
    const v = Either.getOrThrow(parseJson("[-0]")) as Array<number>
    expect(Object.is(v[0], 0)).toBe(true)
  })
  it.each([
    ['{"a":1,"a":2}', "duplicate member"],
    ['{"a":{"b":1,"b":1}}', "nested duplicate"],
    ['["\\ud800"]', "lone high surrogate escape"],
    ['["\\udc00"]', "lone low surrogate escape"],
    ['["\\ud800\\u0041"]', "high surrogate followed by a non-surrogate"],
    ["[1.5]", "fraction"],
    ["[1e3]", "exponent"],
    ["[1.0]", "integer with a zero fraction"],
    ["[9007199254740992]", "2^53"],
    ["[-9007199254740992]", "-2^53"],
    ['{"a":1} 2', "trailing data"],
    ['{"a":1', "truncated"],
    ["", "empty"],
    ["[01]", "leading zero"],
    ['["\t"]', "raw control character"],
    ["[1,]", "trailing comma"],
    ["{'a':1}", "single quotes"],
    ["[NaN]", "NaN"],
    ['["\\x"]', "bad escape"],
    ["[\"\ud800\"]", "raw lone surrogate in a JS string"]
  ])("rejects %s (%s) as noncanonical", (input) => {
    expect(reason(input)).toBe("noncanonical")
  })
  it("rejects invalid UTF-8 bytes as noncanonical", () => {
    expect(reason(Uint8Array.from([0x5b, 0x22, 0xff, 0x22, 0x5d]))).toBe("noncanonical")
  })
  it("accepts the largest safe integers", () => {
    expect(reason("[9007199254740991,-9007199254740991]")).toBe("ok")
  })
  it("keeps a member named __proto__ as data", () => {
    const v = Either.getOrThrow(parseJson('{"__proto__":{"x":1}}')) as Record<string, Json>
    expect(Object.keys(v)).toEqual(["__proto__"])
    expect(encodeCanonical(v, "utf16")).toBe('{"__proto__":{"x":1}}')
  })
  it("accepts 64 levels and refuses 65 as too_large, before any other rule", () => {
    expect(reason("[".repeat(64) + "]".repeat(64))).toBe("ok")
    expect(reason("[".repeat(65) + "]".repeat(65))).toBe("too_large")
    expect(reason("[".repeat(65) + "1.5" + "]".repeat(65))).toBe("too_large")
    expect(reason('[1.5,' + "[".repeat(64) + "]".repeat(64) + "]")).toBe("too_large")
  })
  it("does not count brackets inside strings", () => {
    expect(scanDepth('["[[[[", {"a":"}}]"}]')).toBe(2)
  })
  it("never throws on huge input", () => {
    expect(reason("[".repeat(200_000))).toBe("too_large")
    expect(reason('"' + "a".repeat(1_000_000))).toBe("noncanonical")
  })
  it("accepts non-integers when integersOnly is false", () => {
    expect(Either.getOrThrow(parseJson("[1.5,1e21]", { integersOnly: false }))).toEqual([1.5, 1e21])
  })
})

describe("canonical encoding (RFC 8785)", () => {
  it("sorts by UTF-16 code units or by code point as asked", () => {
    // U+E000 is one UTF-16 unit above the surrogates that encode U+1F600.
    const v = { "\ue000": 1, "\u{1f600}": 2 }
    expect(encodeCanonical(v, "utf16")).toBe('{"\u{1f600}":2,"\ue000":1}')
    expect(encodeCanonical(v, "codepoint")).toBe('{"\ue000":1,"\u{1f600}":2}')
  })
  it("escapes strings per RFC 8785", () => {
    expect(encodeCanonical(["\u0000\b\t\n\f\r\"\\/\u001f\u007f\u00e9"], "utf16")).toBe('["\\u0000\\b\\t\\n\\f\\r\\"\\\\/\\u001f\u007f\u00e9"]')
  })
  const anyJson = fc.letrec<{ v: Json }>((tie) => ({
    v: fc.oneof(
      { depthSize: "small" },
      fc.constant(null), fc.boolean(), fc.maxSafeInteger(), fc.string({ unit: "grapheme" }),
      fc.array(tie("v"), { maxLength: 4 }),
      fc.dictionary(fc.string({ unit: "grapheme", maxLength: 4 }), tie("v"), { maxKeys: 4 })
    )
  })).v
  it.prop("is a fixed point: encode(parse(encode(v))) = encode(v)", [anyJson], ([v]) => {
    const once = encodeCanonical(v, "utf16")
    const again = encodeCanonical(Either.getOrThrow(parseJson(once)), "utf16")
    expect(again).toBe(once)
    expect(jsonDepth(v)).toBe(scanDepth(once))
  }, { fastCheck: { numRuns: depth(1000) } })
  it.effect("parseJsonEffect fails in the error channel with the reason", () =>
    Effect.gen(function* () {
      expect((yield* Effect.flip(parseJsonEffect('{"a":1,"a":2}'))).reason).toBe("noncanonical")
      expect(yield* parseJsonEffect("[1]")).toEqual([1])
    }))
  it.prop(
    "parse rejects every duplicate-member mutation",
    [fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.integer(), { minKeys: 1, maxKeys: 5 })],
    ([o]) => {
      const text = encodeCanonical(o, "utf16")
      const k = Object.keys(o)[0]
      const dup = text.slice(0, -1) + "," + JSON.stringify(k) + ":0}"
      expect(reason(dup)).toBe("noncanonical")
    },
    { fastCheck: { numRuns: depth(1000) } }
  )
})
