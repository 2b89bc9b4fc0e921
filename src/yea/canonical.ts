// YEA canonical JSON (SPEC §10), used for every hash and signature in YEA.
//
// YEA differs from Writ's RFC 8785 in one visible way: member names are sorted by Unicode code
// point, not by UTF-16 code unit (the two disagree only for names mixing astral characters with
// U+E000..U+FFFF). And it is stricter about what has a canonical form at all: only integers in
// [-(2^53-1), 2^53-1] (§10 "Numbers"), and no lone surrogates (a lone surrogate has no UTF-8 form,
// so "all other characters are literal UTF-8" cannot be satisfied). The kernel provides the
// serializer; the rules of what may enter it live here.
import { Data, Either } from "effect"
import { encodeCanonical, utf8 } from "../kernel/canonical.js"
import { parseJson, type Json } from "../kernel/json.js"

/** The value has no YEA canonical form; `path` names the offending member (`$.a[2]`). */
export class NoCanonicalForm extends Data.TaggedError("NoCanonicalForm")<{
  readonly path: string
  readonly message: string
}> {}

/** A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const isWellFormed = (s: string): boolean => !LONE_SURROGATE.test(s)

const isPlainObject = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** First reason `v` has no canonical form, or undefined. Walks the value once. */
const firstProblem = (v: unknown, path: string): NoCanonicalForm | undefined => {
  if (v === null || typeof v === "boolean") return undefined
  if (typeof v === "number") {
    // §10: integers only, in [-(2^53-1), 2^53-1]. isSafeInteger is exactly that range.
    return Number.isSafeInteger(v) ? undefined : new NoCanonicalForm({ path, message: `number ${v} is not an integer in ±(2^53-1)` })
  }
  if (typeof v === "string") {
    return isWellFormed(v) ? undefined : new NoCanonicalForm({ path, message: "string contains a lone surrogate" })
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = firstProblem(v[i], `${path}[${i}]`)
      if (p) return p
    }
    return undefined
  }
  if (typeof v === "object" && isPlainObject(v)) {
    for (const k of Object.keys(v)) {
      if (!isWellFormed(k)) return new NoCanonicalForm({ path, message: "member name contains a lone surrogate" })
      const p = firstProblem((v as Record<string, unknown>)[k], `${path}.${k}`)
      if (p) return p
    }
    return undefined
  }
  return new NoCanonicalForm({ path, message: `${typeof v} is not a JSON value` })
}

/** `canonical(v)` of §10, or why `v` has none. */
export const canonical = (v: unknown): Either.Either<string, NoCanonicalForm> => {
  const p = firstProblem(v, "$")
  return p ? Either.left(p) : Either.right(encodeCanonical(v as Json, "codepoint"))
}

/** `utf8(canonical(v))`: the bytes YEA hashes and signs. */
export const canonicalBytes = (v: unknown): Either.Either<Uint8Array, NoCanonicalForm> => Either.map(canonical(v), utf8)

/**
 * Reads `text` strictly (duplicate members, lone surrogates, bad UTF-8 rejected) and requires it to
 * be exactly the canonical encoding of what it holds. Used for grant tokens, which are defined as
 * `canonical(blocks)` (§6.2): any other spelling of the same blocks (`1.0`, `-0`, `1e9`, spaces,
 * another member order) is refused rather than normalized, so a token has one byte form.
 */
export const readCanonical = (bytes: Uint8Array | string): Either.Either<Json, NoCanonicalForm> => {
  const parsed = parseJson(bytes, { integersOnly: true })
  if (Either.isLeft(parsed)) return Either.left(new NoCanonicalForm({ path: "$", message: parsed.left.message }))
  const text = typeof bytes === "string" ? bytes : new TextDecoder().decode(bytes)
  return Either.flatMap(canonical(parsed.right), (c) =>
    c === text ? Either.right(parsed.right) : Either.left(new NoCanonicalForm({ path: "$", message: "not in canonical form" }))
  )
}
