// Every case of conformance/lens.json and printable.json, read in place from ../shared (skipped
// with a notice where it is absent), plus the quantity renderings and `uses` well-formedness of
// uses.json, which Lens relies on for its `uses` attribute.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { checkLensCase, checkPrintableCase } from "../../src/yea/lens/conformance.js"
import { isWellFormedUses, lensQuantity } from "../../src/yea/lens/fields.js"
import { sharedPath } from "../support/shared.js"

const dir = sharedPath("reference", "yea", "conformance")
const load = (file: string): any => JSON.parse(readFileSync(join(dir!, file), "utf8"))

describe.skipIf(!dir)("conformance/lens.json", () => {
  const cases: Array<any> = dir ? load("lens.json") : []
  it("has cases", () => expect(cases.length).toBeGreaterThan(0))
  it.each(cases.map((c, i) => [`${i} ${c.name}`, c] as const))("%s", (_n, c) => {
    expect(checkLensCase(c)).toBeUndefined()
  })
})

describe.skipIf(!dir)("conformance/printable.json", () => {
  const cases: Array<any> = dir ? load("printable.json") : []
  it("has cases", () => expect(cases.length).toBeGreaterThan(0))
  it.each(cases.map((c, i) => [`${i} ${JSON.stringify(c.text)}`, c] as const))("%s", (_n, c) => {
    expect(checkPrintableCase(c)).toBeUndefined()
  })
})

describe.skipIf(!dir)("conformance/uses.json (the parts Lens uses)", () => {
  const file: { quantities: Array<any>; wellFormed: Array<any> } = dir ? load("uses.json") : { quantities: [], wellFormed: [] }
  it.each(file.quantities.map((c) => [JSON.stringify(c.quantity), c] as const))("quantity %s", (_n, c) => {
    expect(lensQuantity(c.quantity)).toBe(c.lens)
  })
  it.each(file.wellFormed.map((c) => [String(c.name), c] as const))("uses %s", (_n, c) => {
    expect(isWellFormedUses(c.uses)).toBe(c.valid)
  })
})

describe("the checks report failures", () => {
  it("a wrong expected lens is a one-line failure naming the case", () => {
    const r = checkLensCase({ name: "x", type: "value", input: { a: 1 }, lens: "a: 2" })
    expect(r).toBe('lens case "x": expected "a: 2", got "a: 1"')
  })
  it("an unknown case type fails", () => {
    expect(checkLensCase({ name: "x", type: "frob", input: 1, lens: "1" })).toMatch(/unknown type "frob"/)
  })
  it("a case without input or lens fails", () => {
    expect(checkLensCase({ name: "x", type: "value", lens: "1" })).toMatch(/no "input"/)
    expect(checkLensCase({ name: "x", type: "value", input: 1 })).toMatch(/no expected/)
    expect(checkLensCase(null)).toMatch(/malformed/)
  })
  it("an est member is checked against the estimate", () => {
    expect(checkLensCase({ name: "x", type: "value", input: { a: 1 }, lens: "a: 1", est: 3 })).toBeUndefined()
    expect(checkLensCase({ name: "x", type: "value", input: { a: 1 }, lens: "a: 1", est: 4 })).toMatch(/expected est 4, got 3/)
  })
  it("a printable mismatch is reported escaped on one line", () => {
    const r = checkPrintableCase({ text: "a\nb", printable: "a\nb" })
    expect(r).toBe('printable case "a\\nb": expected "a\\nb", got "a\\\\u{a}b"')
    expect(checkPrintableCase({ text: 1 })).toMatch(/malformed/)
  })
})
