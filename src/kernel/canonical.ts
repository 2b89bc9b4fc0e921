/**
 * Canonical JSON serialization in the style of RFC 8785 (JCS). The member-name order is a
 * parameter because the two protocols differ: Writ v0.1 (section 1.2) sorts by UTF-16 code units as
 * RFC 8785 does; YEA (its section 10) sorts by Unicode code point. Each protocol picks its order in
 * its own module; the kernel only provides the machinery.
 */
import { String as Str } from "effect"
import type { Json } from "./json.js"

export type KeyOrder = "utf16" | "codepoint"

const encoder = new TextEncoder()

export const utf8 = (s: string): Uint8Array => encoder.encode(s)

/**
 * RFC 8785 section 3.2.2.2 string escaping. ES2019's well-formed `JSON.stringify` is exactly it:
 * `"` and `\` escaped, U+0008/9/A/C/D as \b \t \n \f \r, other controls as lowercase \u00xx,
 * lone surrogates as \udxxx, everything else literal.
 */
export const escapeJsonString = (s: string): string => JSON.stringify(s)

/** RFC 8785 number serialization is ECMAScript Number::toString; -0 becomes 0. */
export const encodeNumber = (n: number): string => {
  if (!Number.isFinite(n)) throw new RangeError("non-finite number has no JSON form")
  return Object.is(n, -0) ? "0" : String(n)
}


const compareCodePoint = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(i)!
    if (x !== y) return x - y
    if (x > 0xffff) i++
  }
  return a.length - b.length
}

export const compareKeys = (order: KeyOrder): ((a: string, b: string) => number) =>
  order === "utf16" ? Str.Order : compareCodePoint

export const encodeCanonical = (value: Json, keyOrder: KeyOrder): string => {
  const cmp = compareKeys(keyOrder)
  const enc = (v: Json): string => {
    if (v === null) return "null"
    switch (typeof v) {
      case "boolean": return v ? "true" : "false"
      case "number": return encodeNumber(v)
      case "string": return escapeJsonString(v)
    }
    if (Array.isArray(v)) return `[${(v as ReadonlyArray<Json>).map(enc).join(",")}]`
    const o = v as { readonly [k: string]: Json }
    // An optional member an encoder left `undefined` is absent, as JSON.stringify treats it.
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort(cmp)
    let out = "{"
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) out += ","
      out += escapeJsonString(keys[i]) + ":" + enc(o[keys[i]])
    }
    return out + "}"
  }
  return enc(value)
}
