/**
 * Lens lean notation for any JSON value (SPEC §9.1), in two renderings built by one factory:
 *  - `Spec` is byte-identical to the specification (§9.1, §9.2, §10): strings are quoted as §10
 *    says and every other character is literal, inside quotes too (U+2028 included);
 *  - `Hardened` additionally escapes control and invisible characters (printable.ts) wherever
 *    service-written text appears, for text from untrusted services (README, "Lens").
 *
 * Every function here is total: it accepts any JavaScript value (Lens is applied to frames from
 * untrusted services, already parsed) and never throws. Values that JSON cannot carry (undefined,
 * functions, bigints) render as `-`, like `null`.
 */
import { Predicate } from "effect"
import { printable } from "./printable.js"

export type Obj = { readonly [k: string]: unknown }

export const isObject: (v: unknown) => v is Obj = Predicate.isRecord

/** A scalar in the sense of §9.1: null, a boolean, a number or a string (anything not a container). */
export const isScalar = (v: unknown): boolean => typeof v !== "object" || v === null

/** Own-property presence, so that keys such as `toString` never read the prototype. */
export const has = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)
export const get = (o: unknown, k: string): unknown => (isObject(o) && has(o, k) ? o[k] : undefined)

const BARE = /^[A-Za-z0-9_@./+\-:() '!?&%$#*=<>~^]+$/
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/
const RESERVED = new Set(["-", "true", "false", "null"])

/** §9.1: a string may be written bare unless a reader could take it for something else. */
export const isBare = (s: string): boolean =>
  BARE.test(s) && !s.startsWith(" ") && !s.endsWith(" ") && !RESERVED.has(s) && !JSON_NUMBER.test(s)

/** How service-written text is passed through: as is (spec) or escaped (hardened). */
export type Escape = (text: string) => string

/** The lean-notation functions for one rendering. */
export const makeLean = (esc: Escape) => {
  /**
   * §10 string quoting (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00xx` lowercase; everything else
   * literal), which is what `JSON.stringify` writes for a string, followed by printable escaping so
   * that bidi, zero-width and other invisible characters stay visible inside quotes too.
   */
  const quote = (s: string): string => esc(JSON.stringify(s))

  /** A string (value or key) under the §9.1 string rule. */
  const leanString = (s: string): string => (isBare(s) ? s : quote(s))

  /** ECMAScript Number::toString (`1.5`, `1e+21`, `1e-7`; `-0` is `0`). */
  const leanNumber = (n: number): string => String(n)

  /** The scalar rendering of §9.1; containers fall back to {@link inline}. */
  const leanScalar = (v: unknown): string => {
    if (v === null || v === undefined) return "-"
    if (typeof v === "boolean") return v ? "true" : "false"
    if (typeof v === "number") return leanNumber(v)
    if (typeof v === "string") return leanString(v)
    if (typeof v === "object") return inline(v)
    return "-"
  }

  /**
   * Compact JSON (§9.2): exactly `JSON.stringify(v)` (insertion order, no whitespace), then printable
   * escaping of characters JSON leaves literal. Values JSON cannot represent give `null`.
   */
  const compactJson = (v: unknown): string => {
    let s: string | undefined
    try {
      s = JSON.stringify(v)
    } catch {
      s = undefined // a bigint or a cycle: not JSON
    }
    return esc(s ?? "null")
  }

  /** A scalar list `[a, b, c]` (every element a scalar). */
  const scalarList = (a: ReadonlyArray<unknown>): string => `[${a.map(leanScalar).join(", ")}]`

  /**
   * A value on one line, as a list item (§9.1): scalars as scalars, `{}` for an empty object, a
   * scalar-only array as `[a, b]`, anything else as compact JSON.
   */
  const inline = (v: unknown): string => {
    if (Array.isArray(v)) return v.every(isScalar) ? scalarList(v) : compactJson(v)
    if (isObject(v)) return Object.keys(v).length === 0 ? "{}" : compactJson(v)
    return leanScalar(v)
  }

  const pad = (n: number): string => "  ".repeat(n)

  /** The table form applies when every element is a non-empty object with the same keys in the same order and scalar values only. */
  const tableKeys = (a: ReadonlyArray<unknown>): ReadonlyArray<string> | undefined => {
    const first = a[0]
    if (!isObject(first)) return undefined
    const keys = Object.keys(first)
    if (keys.length === 0) return undefined
    for (const e of a) {
      if (!isObject(e)) return undefined
      const ks = Object.keys(e)
      if (ks.length !== keys.length) return undefined
      for (let i = 0; i < ks.length; i++) if (ks[i] !== keys[i] || !isScalar(e[ks[i]])) return undefined
    }
    return keys
  }

  /** The lines of one list element at indent `n` (the `- ` marker sits at indent n). */
  const itemLines = (e: unknown, n: number, out: Array<string>): void => {
    if (isObject(e) && Object.keys(e).length > 0) {
      // Entries at n+1 so later ones align under the first; the first moves onto the dash line.
      const start = out.length
      objectLines(e, n + 1, out)
      out[start] = pad(n) + "- " + out[start].slice(pad(n + 1).length)
      return
    }
    out.push(pad(n) + "- " + inline(e))
  }

  /** The lines of the entry `key: value` at indent `n` (§9.1 object rules). */
  const entryLines = (key: string, v: unknown, n: number, out: Array<string>): void => {
    const k = leanString(key)
    if (Array.isArray(v)) {
      if (v.length === 0) {
        out.push(`${pad(n)}${k}: []`)
        return
      }
      if (v.every(isScalar)) {
        out.push(`${pad(n)}${k}: ${scalarList(v)}`)
        return
      }
      const keys = tableKeys(v)
      if (keys !== undefined) {
        out.push(`${pad(n)}${k}[${v.length}]{${keys.map(leanString).join(",")}}:`)
        for (const row of v as ReadonlyArray<Obj>) out.push(pad(n + 1) + keys.map((c) => leanScalar(row[c])).join(","))
        return
      }
      out.push(`${pad(n)}${k}[${v.length}]:`)
      for (const e of v) itemLines(e, n + 1, out)
      return
    }
    if (isObject(v)) {
      if (Object.keys(v).length === 0) {
        out.push(`${pad(n)}${k}: {}`)
        return
      }
      out.push(`${pad(n)}${k}:`)
      objectLines(v, n + 1, out)
      return
    }
    out.push(`${pad(n)}${k}: ${leanScalar(v)}`)
  }

  /** The entries of an object, one per key in insertion order, at indent `n`. */
  const objectLines = (o: Obj, n: number, out: Array<string>): void => {
    for (const key of Object.keys(o)) entryLines(key, o[key], n, out)
  }

  /**
   * The lean rendering of a whole value (§9.1): a top-level object renders its entries at indent 0
   * (`{}` when empty), a top-level array as if under the key `items`, a scalar as a scalar.
   */
  const valueLines = (v: unknown, out: Array<string>): void => {
    if (isObject(v)) {
      if (Object.keys(v).length === 0) out.push("{}")
      else objectLines(v, 0, out)
      return
    }
    if (Array.isArray(v)) {
      entryLines("items", v, 0, out)
      return
    }
    out.push(leanScalar(v))
  }

  const lensValue = (v: unknown): string => {
    const out: Array<string> = []
    valueLines(v, out)
    return out.join("\n")
  }

  return { quote, leanString, leanNumber, leanScalar, compactJson, inline, entryLines, objectLines, valueLines, lensValue }
}

export type Lean = ReturnType<typeof makeLean>

const identity: Escape = (t) => t

/** The specification's rendering (§9.1): what `lensValue` and friends are. */
export const Spec: Lean = makeLean(identity)
/** The hardened rendering: printable escaping of service-written text. */
export const Hardened: Lean = makeLean(printable)

export const { quote, leanString, leanNumber, leanScalar, compactJson, inline, entryLines, objectLines, valueLines, lensValue } = Spec
