// Lean notation (SPEC §9.1): one test per rule, each with an exact expected rendering.
import { describe, expect, it } from "vitest"
import { compactJson, Hardened, isBare, lensValue } from "../../src/yea/lens/value.js"

describe("scalars", () => {
  it("null is -, booleans are words", () => {
    expect(lensValue(null)).toBe("-")
    expect(lensValue(true)).toBe("true")
    expect(lensValue(false)).toBe("false")
  })
  it("numbers use Number::toString", () => {
    expect(lensValue(1e21)).toBe("1e+21")
    expect(lensValue(1e-7)).toBe("1e-7")
    expect(lensValue(0.1 + 0.2)).toBe("0.30000000000000004")
    expect(lensValue(-0)).toBe("0")
    expect(lensValue(123456789012)).toBe("123456789012")
  })
})

describe("strings", () => {
  it("bare when made of the safe characters", () => {
    expect(lensValue("Ana <ana@x.io> (1/2) ~^=*#$%&!?'+:")).toBe("Ana <ana@x.io> (1/2) ~^=*#$%&!?'+:")
  })
  it("quoted when starting or ending with a space", () => {
    expect(lensValue(" a")).toBe('" a"')
    expect(lensValue("a ")).toBe('"a "')
  })
  it("quoted when it reads as -, true, false or null", () => {
    for (const w of ["-", "true", "false", "null"]) expect(lensValue(w)).toBe(`"${w}"`)
    expect(lensValue("True")).toBe("True")
    expect(lensValue("--")).toBe("--")
  })
  it("quoted when it matches the JSON number grammar, bare otherwise", () => {
    for (const n of ["0", "-1", "1.5", "1e5", "1E+5", "-0.5e-3"]) expect(isBare(n)).toBe(false)
    for (const n of ["01", "1.", ".5", "+1", "1e", "0x10"]) expect(isBare(n)).toBe(true)
    expect(lensValue("42")).toBe('"42"')
  })
  it("quoted when it has a character outside the safe set", () => {
    expect(lensValue("a,b")).toBe('"a,b"')
    expect(lensValue("a;b")).toBe('"a;b"')
    expect(lensValue("é")).toBe('"é"')
    expect(lensValue("")).toBe('""')
    expect(lensValue("[x]")).toBe('"[x]"')
  })
  it("quoting escapes as §10 does: short escapes and lowercase \\u00xx", () => {
    expect(lensValue('q"\\\b\f\n\r\t')).toBe('"q\\"\\\\\\b\\f\\n\\r\\t"')
    expect(lensValue("\u001b[2K")).toBe('"\\u001b[2K"')
  })
  it("spec: characters other than those §10 escapes stay literal inside quotes, U+2028 included", () => {
    expect(lensValue("pay \u202eDSU")).toBe('"pay \u202eDSU"')
    expect(lensValue("a,\u2028b")).toBe('"a,\u2028b"')
    expect(compactJson({ a: "x\u2028y" })).toBe('{"a":"x\u2028y"}')
  })
  it("hardened: invisible and bidi characters inside quotes are made visible", () => {
    const lensValue = Hardened.lensValue
    expect(lensValue("pay \u202eDSU")).toBe('"pay \\u{202e}DSU"')
    expect(lensValue("a\u007fb")).toBe('"a\\u{7f}b"')
    expect(lensValue("a\u200bb")).toBe('"a\\u{200b}b"')
  })
  it("keys follow the same rule", () => {
    // (JavaScript lists the integer-like key "7" first: insertion order as JSON.parse builds it)
    expect(lensValue({ "a b": 1, "x,y": 2, "": 3, true: 4, "7": 5 })).toBe('"7": 5\na b: 1\n"x,y": 2\n"": 3\n"true": 4')
  })
})

describe("objects", () => {
  it("a top-level object renders its entries at indent 0; empty is {}", () => {
    expect(lensValue({ a: 1, b: "x" })).toBe("a: 1\nb: x")
    expect(lensValue({})).toBe("{}")
  })
  it("keys keep insertion order", () => {
    expect(lensValue({ b: 1, a: 2 })).toBe("b: 1\na: 2")
  })
  it("empty containers stay on the key line", () => {
    expect(lensValue({ o: {}, a: [] })).toBe("o: {}\na: []")
  })
  it("a non-empty object nests one level (two spaces) deeper", () => {
    expect(lensValue({ a: { b: { c: null } } })).toBe("a:\n  b:\n    c: -")
  })
})

describe("arrays", () => {
  it("all scalars render inline", () => {
    expect(lensValue({ k: [1, "a b", null, true, "x,y"] })).toBe('k: [1, a b, -, true, "x,y"]')
  })
  it("uniform scalar-only objects render as a table", () => {
    expect(lensValue({ t: [{ a: 1, b: "x y" }, { a: null, b: "p,q" }] })).toBe('t[2]{a,b}:\n  1,x y\n  -,"p,q"')
  })
  it("table header keys are lean strings", () => {
    expect(lensValue({ t: [{ "a,b": 1 }, { "a,b": 2 }] })).toBe('t[2]{"a,b"}:\n  1\n  2')
  })
  it("no table when keys differ in order", () => {
    expect(lensValue({ t: [{ a: 1, b: 2 }, { b: 3, a: 4 }] })).toBe("t[2]:\n  - a: 1\n    b: 2\n  - b: 3\n    a: 4")
  })
  it("no table when keys differ in number", () => {
    expect(lensValue({ t: [{ a: 1 }, { a: 2, b: 3 }] })).toBe("t[2]:\n  - a: 1\n  - a: 2\n    b: 3")
  })
  it("no table when a value is not a scalar", () => {
    expect(lensValue({ t: [{ a: [1] }, { a: [2] }] })).toBe("t[2]:\n  - a: [1]\n  - a: [2]")
  })
  it("no table when an element is an empty object", () => {
    expect(lensValue({ t: [{}, {}] })).toBe("t[2]:\n  - {}\n  - {}")
  })
  it("list items: scalars inline, objects on the dash line with later entries aligned", () => {
    expect(lensValue({ l: [1, { a: 1, b: { c: 2 }, d: [] }] })).toBe("l[2]:\n  - 1\n  - a: 1\n    b:\n      c: 2\n    d: []")
  })
  it("a nested object as the first entry of a list item", () => {
    expect(lensValue({ l: [{ o: { x: 1 } }, 2] })).toBe("l[2]:\n  - o:\n      x: 1\n  - 2")
  })
  it("array items: scalar-only as [a, b], otherwise compact JSON", () => {
    expect(lensValue({ l: [[1, "a b"], [{ x: 1 }, 2], [], 3] })).toBe('l[4]:\n  - [1, a b]\n  - [{"x":1},2]\n  - []\n  - 3')
  })
  it("a top-level array renders under the key items", () => {
    expect(lensValue([1, 2])).toBe("items: [1, 2]")
    expect(lensValue([])).toBe("items: []")
    expect(lensValue([{ a: 1 }, { a: 2 }])).toBe("items[2]{a}:\n  1\n  2")
    expect(lensValue([{ a: 1 }, 5])).toBe("items[2]:\n  - a: 1\n  - 5")
  })
  it("nested arrays indent with their key", () => {
    expect(lensValue({ a: { t: [{ x: 1 }, { x: 2 }] } })).toBe("a:\n  t[2]{x}:\n    1\n    2")
  })
})

describe("compact JSON", () => {
  it("is JSON.stringify: insertion order, no whitespace", () => {
    expect(compactJson({ b: [1, "x"], a: { c: null } })).toBe('{"b":[1,"x"],"a":{"c":null}}')
    expect(compactJson(1e21)).toBe("1e+21")
  })
  it("hardened: shows invisible characters JSON leaves literal", () => {
    expect(Hardened.compactJson({ a: "x\u2028y" })).toBe('{"a":"x\\u{2028}y"}')
  })
  it("never throws on values JSON cannot carry", () => {
    expect(compactJson(undefined)).toBe("null")
    expect(compactJson(10n)).toBe("null")
  })
})
