// A member offered as text before it is read (src/kernel/json-take.ts): the reader finds the
// value's extent by a bracket scan, offers that exact text, and takes its owner's value only when
// the owner holds one and the depth still holds; whatever the owner answers, the reading is the
// one a reader without the offer makes (same value, same errors), apart from the identity of the
// taken value.
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { type Json, readJson, type Reading } from "../../src/kernel/json.js"
import { skipContainer, type Take } from "../../src/kernel/json-take.js"

const OPTIONS = { maxDepth: 64, integersOnly: true, spanLevels: 3, cut: "sig" } as const

/** An owner holding values by their exact text, counting what it was offered. */
const owner = (held: ReadonlyMap<string, { value: Json & object; canonical: boolean; depth: number }>) => {
  const offered: Array<string> = []
  const take: Take = {
    member: "chain",
    level: 1,
    offer: (text) => {
      offered.push(text)
      const taken = held.get(text)
      return taken === undefined ? { note: `miss ${text.length}` } : { taken, note: "hit" }
    }
  }
  return { take, offered }
}
const read = (text: string, take?: Take): Either.Either<Reading, unknown> => readJson(text, take === undefined ? OPTIONS : { ...OPTIONS, take })
const reason = (r: Either.Either<Reading, unknown>) => (Either.isLeft(r) ? (r.left as { reason: string }).reason : "ok")

describe("skipContainer", () => {
  it("finds the extent of an array or object, brackets inside strings and escapes included", () => {
    const s = `x[1,"]",{"a":"\\"]}"},[[]]]tail`
    expect(s.slice(1, skipContainer(s, 1))).toBe(`[1,"]",{"a":"\\"]}"},[[]]]`)
    expect(skipContainer(`{"a":[1,2]}`, 0)).toBe(11)
    // Text that ends first: no extent.
    expect(skipContainer(`[1,[2]`, 0)).toBe(-1)
    expect(skipContainer(`["]`, 0)).toBe(-1)
  })

  it("is the exact extent of any JSON value it starts on", () => {
    const value = fc.jsonValue().filter((v) => v !== null && typeof v === "object")
    fc.assert(fc.property(value, fc.string({ maxLength: 4 }), (v, tail) => {
      const text = JSON.stringify(v)
      expect(skipContainer(text + tail, 0)).toBe(text.length)
    }), { numRuns: 200 })
  })
})

describe("a member offered as text", () => {
  const chainText = `[{"a":1,"b":"x]"},{"c":[2]}]`
  const doc = `{"chain":${chainText},"from":"k","v":1}`

  it("offers the exact text of the member at the given level, and notes the owner's answer", () => {
    const { take, offered } = owner(new Map())
    const r = read(doc, take)
    expect(Either.isRight(r)).toBe(true)
    expect(offered).toEqual([chainText])
    const reading = Either.getOrThrow(r)
    const chain = (reading.value as { chain: Json }).chain as object
    expect(reading.notes?.get(chain)).toBe(`miss ${chainText.length}`)
    expect(reading.value).toEqual(Either.getOrThrow(read(doc)).value)
    // The same member name deeper down is not offered.
    const deeper = owner(new Map())
    read(`{"x":{"chain":[1]}}`, deeper.take)
    expect(deeper.offered).toEqual([])
  })

  it("takes the owner's value for exactly held text: the same value, span and canonical flags", () => {
    const value = Either.getOrThrow(read(chainText)).value as Json & object
    const { take } = owner(new Map([[chainText, { value, canonical: true, depth: 3 }]]))
    const taken = Either.getOrThrow(read(doc, take))
    const plain = Either.getOrThrow(read(doc))
    const chain = (taken.value as { chain: Json }).chain as object
    expect(chain).toBe(value)
    expect(taken.notes?.get(chain)).toBe("hit")
    expect(taken.value).toEqual(plain.value)
    const plainChain = (plain.value as { chain: Json }).chain as object
    expect(taken.spans.get(chain)).toEqual(plain.spans.get(plainChain))
    expect(taken.spans.get(taken.value as object)).toEqual(plain.spans.get(plain.value as object))
    expect(encodeCanonical(taken.value, "utf16")).toBe(encodeCanonical(plain.value, "utf16"))
  })

  it("reads the text itself when the held value would sit past the nesting limit", () => {
    const deep = "[".repeat(63) + "]".repeat(63)
    const value = Either.getOrThrow(read(deep)).value as Json & object
    const { take } = owner(new Map([[deep, { value, canonical: true, depth: 63 }]]))
    const text = `{"chain":${deep}}`
    // 64 levels: held, taken.
    expect((Either.getOrThrow(read(text, take)).value as { chain: Json }).chain).toBe(value)
    // 65 levels: too_large, as without the offer.
    const deeper = `{"chain":[${deep}]}`
    const value2 = Either.getOrThrow(read(`[${deep}]`, undefined)).value
    expect(reason(read(`[${deep}]`))).toBe("ok")
    const { take: take2 } = owner(new Map([[`[${deep}]`, { value: value2 as Json & object, canonical: true, depth: 64 }]]))
    expect(reason(read(deeper, take2))).toBe("too_large")
    expect(reason(read(deeper))).toBe("too_large")
  })

  it("reports every error a reader without the offer reports, whatever the owner holds", () => {
    const value = Either.getOrThrow(read(chainText)).value as Json & object
    const { take } = owner(new Map([[chainText, { value, canonical: true, depth: 3 }]]))
    fc.assert(fc.property(fc.integer({ min: 0, max: doc.length - 1 }), fc.constantFrom(..."{}[]\",:0 1a\\"), (at, ch) => {
      const text = doc.slice(0, at) + ch + doc.slice(at + 1)
      const a = read(text, take)
      const b = read(text)
      expect(reason(a)).toBe(reason(b))
      if (Either.isRight(a) && Either.isRight(b)) expect(a.right.value).toEqual(b.right.value)
    }), { numRuns: 300 })
  })
})
