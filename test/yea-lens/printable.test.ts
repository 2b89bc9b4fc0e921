// Printable escaping: which code points are made visible, one test per class.
import { describe, expect, it } from "vitest"
import { est } from "../../src/yea/lens/estimate.js"
import { isUnprintable, printable } from "../../src/yea/lens/printable.js"

describe("printable", () => {
  it("escapes C0 controls except TAB, and DEL", () => {
    expect(printable("a\nb\rc\u0000d\u001be\u007f")).toBe("a\\u{a}b\\u{d}c\\u{0}d\\u{1b}e\\u{7f}")
    expect(printable("a\tb")).toBe("a\tb")
  })
  it("escapes C1 controls", () => {
    expect(printable("\u0085\u009b")).toBe("\\u{85}\\u{9b}")
  })
  it("escapes format characters (bidi, zero-width, soft hyphen, Arabic number sign)", () => {
    expect(printable("\u202e\u2066\u200b\u200d\u00ad\u0600\ufeff")).toBe(
      "\\u{202e}\\u{2066}\\u{200b}\\u{200d}\\u{ad}\\u{600}\\u{feff}"
    )
  })
  it("escapes line and paragraph separators", () => {
    expect(printable("a\u2028b\u2029c")).toBe("a\\u{2028}b\\u{2029}c")
  })
  it("escapes default-ignorable code points that are not format characters", () => {
    expect(printable("\u034f\u115f\u1160\u3164\uffa0\u17b4\u2065\ufff0")).toBe(
      "\\u{34f}\\u{115f}\\u{1160}\\u{3164}\\u{ffa0}\\u{17b4}\\u{2065}\\u{fff0}"
    )
  })
  it("escapes tag characters and the supplementary variation selectors as one code point each", () => {
    expect(printable("x\u{e0001}\u{e0041}\u{e0100}")).toBe("x\\u{e0001}\\u{e0041}\\u{e0100}")
  })
  it("escapes lone surrogates", () => {
    expect(printable("a\ud800b\udc00")).toBe("a\\u{d800}b\\u{dc00}")
  })
  it("keeps emoji presentation selectors, letters of every script, symbols and spaces", () => {
    const kept = "ok \u2764\ufe0f \u263a\ufe0e café 東京 שלום \u2800 \u00a0 😀 ~"
    expect(printable(kept)).toBe(kept)
    expect(isUnprintable(0xfe0f)).toBe(false)
    expect(isUnprintable(0xfe00)).toBe(false)
  })
  it("does not touch backslashes", () => {
    expect(printable("a\\u{a}")).toBe("a\\u{a}")
  })
})

describe("est (SPEC §8)", () => {
  it("counts letter runs, digit groups of up to three, indentation runs and other visible characters", () => {
    expect(est("hello world")).toBe(2)
    expect(est("1234567")).toBe(3)
    expect(est("a\n  b")).toBe(3)
    expect(est("a\n b")).toBe(2) // a newline before a single space is not a token
    expect(est("a\nb")).toBe(2)
    expect(est("{}: ,")).toBe(4)
    expect(est(" \t\r\f\v")).toBe(0)
    expect(est("")).toBe(0)
  })
  it("counts code points, not UTF-16 units", () => {
    expect(est("😀")).toBe(1)
    expect(est("é東")).toBe(2)
    expect(est("\u{e0041}\u{e0042}")).toBe(2)
  })
  it("letter runs are ASCII only", () => {
    expect(est("café")).toBe(2)
  })
})
