// Section 1.1 and 1.2 as properties (fast-check, fixed seeds, 1,000 runs each):
//  - the canonical encoding is a fixed point: encode(parse(encode(v))) = encode(v), and any
//    whitespace and member order of the same value reads back to the same canonical text;
//  - the strict reader rejects every mutation section 1.1 forbids, wherever it sits in a document:
//    a duplicate member (also spelled with escapes), a `\u` escape of an unpaired surrogate, bytes
//    that are not valid UTF-8 inside a string, a
//    fraction, an exponent, an integer outside +-(2^53-1) (all `noncanonical`), and nesting over 64
//    levels (`too_large`, even when another violation sits inside it);
//  - 64 levels are accepted and 65 refused, whatever the containers.
import { Either } from "effect"
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { parseJson, type Json } from "../../src/kernel/json.js"
import { canonicalText } from "../../src/writ/sign.js"
import { depth } from "../support/depth.js"

const RUNS = depth(1000)

// ---- generators --------------------------------------------------------------------------------

/** Strings of any Unicode code points (well-formed UTF-16), including controls and astral ones. */
const anyString = fc.oneof(fc.string({ unit: "binary", maxLength: 8 }), fc.string({ unit: "grapheme-ascii", maxLength: 8 }))
const safeInt = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.maxSafeInteger(), fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0))

/** JSON values that section 1.1 admits (integers only), at most 5 levels deep. */
const { value: jsonValue } = fc.letrec<{ value: Json; leaf: Json; container: Json }>((tie) => ({
  leaf: fc.oneof(safeInt, anyString, fc.boolean(), fc.constant(null)) as fc.Arbitrary<Json>,
  container: fc.oneof(
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(anyString, tie("value"), { maxKeys: 4 })
  ) as fc.Arbitrary<Json>,
  value: fc.oneof({ depthSize: "small", maxDepth: 4 }, tie("leaf"), tie("container"))
}))

/** A non-canonical rendering of a value: random whitespace, member order reversed or kept, strings
 * with every character escaped or not. */
const render = (v: Json, ws: string, reverse: boolean, escapeAll: boolean): string => {
  const str = (s: string) =>
    escapeAll ? `"${Array.from({ length: s.length }, (_, i) => `\\u${s.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")}"` : JSON.stringify(s)
  const go = (x: Json): string => {
    if (x === null || typeof x !== "object") return typeof x === "string" ? str(x) : JSON.stringify(x)
    if (Array.isArray(x)) return `[${ws}${x.map(go).join(`${ws},${ws}`)}${ws}]`
    const keys = Object.keys(x)
    if (reverse) keys.reverse()
    return `{${ws}${keys.map((k) => `${str(k)}${ws}:${ws}${go((x as Record<string, Json>)[k])}`).join(`${ws},${ws}`)}${ws}}`
  }
  return `${ws}${go(v)}${ws}`
}
const whitespace = fc.constantFrom("", " ", "\n", "\t", " \r\n ")

/** Where a fragment sits: a path of containers, each with valid siblings before and after it. */
type Step = { readonly kind: "array"; readonly before: Array<Json>; readonly after: Array<Json> } | { readonly kind: "object"; readonly key: string; readonly before: Record<string, Json>; readonly after: Record<string, Json> }
const smallValue = fc.oneof(safeInt, anyString, fc.boolean(), fc.constant(null), fc.array(safeInt, { maxLength: 3 })) as fc.Arbitrary<Json>
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("array" as const), before: fc.array(smallValue, { maxLength: 2 }), after: fc.array(smallValue, { maxLength: 2 }) }),
  fc.record({
    kind: fc.constant("object" as const),
    key: fc.string({ maxLength: 4 }),
    before: fc.dictionary(fc.string({ minLength: 5, maxLength: 6 }), smallValue, { maxKeys: 2 }),
    after: fc.dictionary(fc.string({ minLength: 7, maxLength: 8 }), smallValue, { maxKeys: 2 })
  })
)
const path = fc.array(step, { maxLength: 12 })

/** Embeds fragment text at the end of `path` (siblings' keys never collide with the step's key,
 * by length). */
const embed = (p: ReadonlyArray<Step>, fragment: string): string =>
  p.reduceRight((inner, s) => {
    if (s.kind === "array") return `[${[...s.before.map((x) => canonicalText(x)), inner, ...s.after.map((x) => canonicalText(x))].join(",")}]`
    const members = [
      ...Object.entries(s.before).map(([k, x]) => `${JSON.stringify(k)}:${canonicalText(x)}`),
      `${JSON.stringify(s.key)}:${inner}`,
      ...Object.entries(s.after).map(([k, x]) => `${JSON.stringify(k)}:${canonicalText(x)}`)
    ]
    return `{${members.join(",")}}`
  }, fragment)

const reasonOf = (text: string): string => Either.match(parseJson(text), { onLeft: (e) => e.reason, onRight: () => "accept" })

// Fragments that break one rule of section 1.1 (the reason section 1.1 gives them).
const digits = fc.integer({ min: 1, max: 5 }).chain((n) => fc.array(fc.constantFrom(..."0123456789"), { minLength: n, maxLength: n }).map((d) => d.join("")))
const fraction = fc.tuple(fc.integer({ min: -99999, max: 99999 }), digits).map(([i, d]) => `${i}.${d}`)
const exponent = fc.tuple(fc.integer({ min: -999, max: 999 }), fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.integer({ min: 0, max: 30 })).map(([i, e, s, k]) => `${i}${e}${s}${k}`)
const outOfRange = fc.tuple(fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }), fc.boolean()).map(([n, neg]) => `${neg ? "-" : ""}${n}`)
const hex4 = (n: number) => n.toString(16).padStart(4, "0")
const loneSurrogate = fc.tuple(
  fc.oneof(fc.integer({ min: 0xd800, max: 0xdbff }).map((h) => ({ h, lone: "high" as const })), fc.integer({ min: 0xdc00, max: 0xdfff }).map((h) => ({ h, lone: "low" as const }))),
  fc.string({ unit: fc.constantFrom(..."abcXYZ 0123"), maxLength: 3 }),
  fc.string({ unit: fc.constantFrom(..."abcXYZ 0123"), maxLength: 3 }),
  fc.boolean(),
  fc.boolean()
).map(([{ h }, pre, post, asKey, upper]) => {
  // A high surrogate followed by anything but a low surrogate escape, or a low one standing alone
  // (the preceding text holds no high surrogate: it is ASCII).
  const esc = `\\u${upper ? hex4(h).toUpperCase() : hex4(h)}`
  const s = `"${pre}${esc}${post}"`
  return asKey ? `{${s}:1}` : s
})
const duplicate = fc.tuple(
  fc.string({ maxLength: 4 }),
  fc.dictionary(fc.string({ minLength: 5, maxLength: 6 }), smallValue, { maxKeys: 3 }),
  smallValue,
  smallValue,
  fc.boolean()
).map(([k, others, v1, v2, escapeSecond]) => {
  const entries = Object.entries(others).map(([n, x]) => `${JSON.stringify(n)}:${canonicalText(x)}`)
  const second = escapeSecond ? `"${[...k].map((_, i) => `\\u${hex4(k.charCodeAt(i))}`).join("")}"` : JSON.stringify(k)
  const mid = Math.floor(entries.length / 2)
  return `{${[JSON.stringify(k) + ":" + canonicalText(v1), ...entries.slice(0, mid), second + ":" + canonicalText(v2), ...entries.slice(mid)].join(",")}}`
})

/** Depth of the path's containers (each step is one level). */
const depthOf = (p: ReadonlyArray<Step>) => p.length

// ---- properties --------------------------------------------------------------------------------

describe("section 1.2: the canonical encoding is a fixed point", () => {
  it.prop("encode(parse(encode(v))) = encode(v)", [jsonValue], ([v]) => {
    const e = canonicalText(v)
    const back = parseJson(e)
    expect(Either.isRight(back)).toBe(true)
    expect(canonicalText(Either.getOrThrow(back))).toBe(e)
  }, { fastCheck: { numRuns: RUNS, seed: 0x5eed01 } })

  it.prop("any whitespace, member order and escaping of the same value reads back to the same canonical text", [jsonValue, whitespace, fc.boolean(), fc.boolean()], ([v, ws, reverse, escapeAll]) => {
    const text = render(v, ws, reverse, escapeAll)
    const back = parseJson(text)
    expect(Either.isRight(back)).toBe(true)
    expect(canonicalText(Either.getOrThrow(back))).toBe(canonicalText(v))
  }, { fastCheck: { numRuns: RUNS, seed: 0x5eed02 } })
})

describe("section 1.1: the strict reader rejects every forbidden mutation, anywhere", () => {
  const rejects = (name: string, fragment: fc.Arbitrary<string>, reason: "noncanonical", seed: number) =>
    it.prop(`${name} -> ${reason}`, [path, fragment], ([p, f]) => {
      expect(reasonOf(embed(p, f))).toBe(reason)
    }, { fastCheck: { numRuns: RUNS, seed: seed } })
  rejects("a duplicate member (rule 4), also spelled with escapes", duplicate, "noncanonical", 0x5eed03)
  rejects("a \\u escape of an unpaired surrogate (rule 3), in a value or a member name", loneSurrogate, "noncanonical", 0x5eed04)
  rejects("a fraction (rule 2), including .0", fraction, "noncanonical", 0x5eed05)
  rejects("an exponent (rule 2)", exponent, "noncanonical", 0x5eed06)
  rejects("an integer outside +-(2^53-1) (rule 2)", outOfRange, "noncanonical", 0x5eed07)

  // Invalid sequences: a stray continuation byte, bytes never used, an overlong encoding, an
  // encoded surrogate (CESU style), a truncated sequence, and a code point above U+10FFFF.
  const bad = fc.constantFrom([0x80], [0xff], [0xfe], [0xc0, 0x80], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xf4, 0x90, 0x80, 0x80])
  const ascii = fc.string({ unit: fc.constantFrom(..."abcXYZ 0123"), maxLength: 3 })
  it.prop("a string that is not valid UTF-8 (rule 3) -> noncanonical", [path, ascii, bad, ascii], ([p, pre, bytes, post]) => {
    // The marker is replaced by the invalid bytes inside a string literal, anywhere in the document.
    const text = embed(p, JSON.stringify(`${pre}\u0000MARK\u0000${post}`).replace("\\u0000MARK\\u0000", "\u0001"))
    const [before, after] = text.split("\u0001")
    const doc = Buffer.concat([Buffer.from(before, "utf8"), Buffer.from(bytes), Buffer.from(after, "utf8")])
    expect(Either.match(parseJson(new Uint8Array(doc)), { onLeft: (e) => e.reason, onRight: () => "accept" })).toBe("noncanonical")
  }, { fastCheck: { numRuns: RUNS, seed: 0x5eed0a } })

  const inner = fc.oneof(smallValue.map((v) => canonicalText(v)), fraction, exponent, outOfRange, loneSurrogate, duplicate)
  it.prop("nesting over 64 levels -> too_large, before any other rule (rule 7)", [path, fc.integer({ min: 0, max: 20 }), fc.constantFrom("[", '{"k":'), inner], ([p, extra, open, f]) => {
    // The fragment's containers plus the path's reach level 65 + extra, before `f` adds any.
    const wraps = 65 + extra - depthOf(p)
    const close = open === "[" ? "]" : "}"
    expect(reasonOf(embed(p, open.repeat(wraps) + f + close.repeat(wraps)))).toBe("too_large")
  }, { fastCheck: { numRuns: RUNS, seed: 0x5eed08 } })

  it.prop("exactly 64 levels are accepted and read back canonically; one more is too_large", [path, fc.constantFrom("[", '{"k":'), smallValue.filter((v) => v === null || typeof v !== "object")], ([p, open, leaf]) => {
    const close = open === "[" ? "]" : "}"
    const wraps = 64 - depthOf(p)
    const ok = embed(p, open.repeat(wraps) + canonicalText(leaf) + close.repeat(wraps))
    const back = parseJson(ok)
    expect(Either.isRight(back)).toBe(true)
    expect(canonicalText(Either.getOrThrow(back))).toBe(canonicalText(JSON.parse(ok) as Json))
    expect(reasonOf(embed(p, open.repeat(wraps + 1) + canonicalText(leaf) + close.repeat(wraps + 1)))).toBe("too_large")
  }, { fastCheck: { numRuns: RUNS, seed: 0x5eed09 } })
})
