// Generators shared by the Writ property tests: bounds of the six section 3 types, a random
// narrowing of a bound (the "child narrows parent when" column of section 3), and a random widening
// (a value that column refuses). Writs are signed with the corpus builder's deterministic keys
// (scripts/conformance.ts), which derives them from fixed seeds through the kernel's Signer.
import { Effect, Either } from "effect"
import { FastCheck as fc } from "effect"
import type { Obj, V } from "../support/writ-builders.js"
import { narrows } from "../../src/writ/bound.js"

export type Bound = { readonly t: string; readonly v: V }
export const TYPES = ["max", "count", "total", "prefix", "set", "window"] as const
export type BoundType = (typeof TYPES)[number]

const segment = fc.constantFrom("a", "b", "shop", "books", "x1", "é")
export const prefixValue: fc.Arbitrary<string> = fc
  .tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([segs, slash]) => segs.join("/") + (slash ? "/" : ""))
const setElement = fc.oneof(fc.constantFrom("EUR", "GBP", "a", "b", "1", ""), fc.integer({ min: -3, max: 5 }))
const sameElement = (a: string | number, b: string | number) => typeof a === typeof b && a === b
export const setValue = fc.uniqueArray(setElement, { maxLength: 6, comparator: sameElement })
const windowValue = fc.tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: -1000, max: 1000 })).map(([a, b]) => (a <= b ? [a, b] : [b, a]))
const nonNeg = fc.integer({ min: 0, max: 1_000_000 })

/** A valid bound of type `t`. */
export const boundOf = (t: BoundType): fc.Arbitrary<Bound> => {
  switch (t) {
    case "max":
    case "count":
    case "total":
      return nonNeg.map((v) => ({ t, v }))
    case "prefix":
      return prefixValue.map((v) => ({ t, v }))
    case "set":
      return setValue.map((v) => ({ t, v }))
    case "window":
      return windowValue.map((v) => ({ t, v }))
  }
}
export const anyBound: fc.Arbitrary<Bound> = fc.constantFrom(...TYPES).chain(boundOf)

/** A bound that narrows `b` (section 3 table), chosen at random, `b` itself included. */
export const narrowOf = (b: Bound): fc.Arbitrary<Bound> => {
  switch (b.t) {
    case "max":
    case "count":
    case "total":
      return fc.integer({ min: 0, max: b.v as number }).map((v) => ({ t: b.t, v }))
    case "prefix": {
      const p = b.v as string
      return fc.tuple(fc.array(segment, { maxLength: 2 }), fc.boolean()).map(([ext, slash]) => {
        // Section 3.1: P matches S when S = P, or P ends with "/" and S begins with P, or S begins
        // with P + "/".
        if (p.endsWith("/")) return { t: "prefix", v: p + ext.join("/") + (ext.length > 0 && slash ? "/" : "") }
        if (ext.length === 0) return { t: "prefix", v: slash ? p + "/" : p }
        return { t: "prefix", v: `${p}/${ext.join("/")}${slash ? "/" : ""}` }
      })
    }
    case "set":
      return fc.subarray(b.v as Array<string | number>).map((v) => ({ t: "set", v }))
    case "window": {
      const [lo, hi] = b.v as [number, number]
      return fc.integer({ min: lo, max: hi }).chain((l) => fc.integer({ min: l, max: hi }).map((h) => ({ t: "window", v: [l, h] })))
    }
    default:
      throw new Error(`no narrowing for ${b.t}`)
  }
}

/** A bound of the same type that does not narrow `b`; `k` >= 1 and `pick` choose among widenings. */
export const widenBound = (b: Bound, k: number, pick: number, fresh: string | number = `zz${k}`): Bound => {
  switch (b.t) {
    case "max":
    case "count":
    case "total":
      return { t: b.t, v: (b.v as number) + k }
    case "prefix": {
      const p = b.v as string
      const segs = p.replace(/\/$/, "").split("/")
      const options = p.endsWith("/")
        ? [p.slice(0, -1), ...(segs.length > 1 ? [segs.slice(0, -1).join("/") + "/" + segs[segs.length - 1] + "x/"] : [])]
        : [p + "x", ...(segs.length > 1 ? [segs.slice(0, -1).join("/"), segs.slice(0, -1).join("/") + "/"] : [])]
      return { t: "prefix", v: options[pick % options.length] }
    }
    case "set": {
      const v = b.v as Array<string | number>
      const extra = v.some((e) => sameElement(e, fresh)) ? `${String(fresh)}-${v.length}` : fresh
      const at = pick % (v.length + 1)
      return { t: "set", v: [...v.slice(0, at), extra, ...v.slice(at)] }
    }
    case "window": {
      const [lo, hi] = b.v as [number, number]
      return { t: "window", v: pick % 3 === 0 ? [lo - k, hi] : pick % 3 === 1 ? [lo, hi + k] : [lo - k, hi + k] }
    }
    default:
      throw new Error(`no widening for ${b.t}`)
  }
}

/** A bound of another type with a valid value (a retyping, section 4 step 4). */
export const retype = (b: Bound): Bound => {
  switch (b.t) {
    case "max":
      return { t: "count", v: b.v }
    case "count":
      return { t: "total", v: b.v }
    case "total":
      return { t: "max", v: b.v }
    case "prefix":
      return { t: "set", v: [b.v as string] }
    case "set":
      return { t: "prefix", v: "a" }
    default:
      return { t: "max", v: 0 }
  }
}

/** The `narrows` operation's verdict: "accept" or the reason. */
export const narrowsVerdict = (child: unknown, parent: unknown): string =>
  Either.match(Effect.runSync(Effect.either(narrows(child, parent))), { onLeft: (e) => e.reason, onRight: () => "accept" })

export type { Obj, V }
