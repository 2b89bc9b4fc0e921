/**
 * Strict JSON reader.
 *
 * `JSON.parse` silently keeps the last of duplicate members, accepts lone surrogate escapes, and
 * turns every number into a double, so it cannot enforce Writ v0.1 section 1.1. This reader applies
 * those rules while it reads:
 *  - nesting deeper than `maxDepth` (default 64, section 1.1 rule 7) is `too_large`, found by a
 *    bracket scan before any value is built or any other rule is applied;
 *  - any syntax error, trailing data, invalid UTF-8 (rule 1, rule 3), a duplicate member name at any
 *    depth (rule 4), a `\u` escape of an unpaired surrogate (rule 3) and, when `integersOnly`, a
 *    number with a fraction or exponent or outside +-(2^53-1) (rule 2) is `noncanonical`;
 *  - `-0` reads as `0`.
 * The protocols map these two outcomes onto their own reason codes.
 */
import { Data, Effect, Either, Predicate } from "effect"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }
export type JsonObject = { readonly [k: string]: Json }

export type JsonErrorReason = "too_large" | "noncanonical"

export class JsonError extends Data.TaggedError("JsonError")<{
  readonly reason: JsonErrorReason
  readonly message: string
}> {}

export interface ParseOptions {
  /** Deepest allowed nesting of arrays and objects, the outermost being level 1. Default 64. */
  readonly maxDepth?: number
  /** Accept only integers within +-(2^53-1) (Writ). Default true; YEA passes false. */
  readonly integersOnly?: boolean
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

class Fail {
  constructor(readonly reason: JsonErrorReason, readonly message: string) {}
}

/** Nesting depth of the deepest container in `text`, counted outside string literals. */
export const scanDepth = (text: string): number => {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // skip the escaped character
      else if (c === 0x22) inString = false
      continue
    }
    if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      depth++
      if (depth > max) max = depth
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return max
}

/** Depth of an already-built value, by the same counting rule. */
export const jsonDepth = (value: Json): number => {
  if (value === null || typeof value !== "object") return 0
  let inner = 0
  const items: ReadonlyArray<Json> = Array.isArray(value) ? value : Object.values(value)
  for (const v of items) {
    const d = jsonDepth(v)
    if (d > inner) inner = d
  }
  return inner + 1
}

class Reader {
  i = 0
  constructor(readonly s: string, readonly integersOnly: boolean) {}

  fail(message: string): never {
    throw new Fail("noncanonical", `${message} at offset ${this.i}`)
  }

  ws(): void {
    const s = this.s
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++
      else break
    }
  }

  value(): Json {
    this.ws()
    const c = this.s.charCodeAt(this.i)
    switch (c) {
      case 0x7b: return this.object()
      case 0x5b: return this.array()
      case 0x22: return this.string()
      case 0x74: return this.literal("true", true)
      case 0x66: return this.literal("false", false)
      case 0x6e: return this.literal("null", null)
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number()
        return this.fail(Number.isNaN(c) ? "unexpected end of input" : "unexpected character")
    }
  }

  literal<T extends Json>(word: string, v: T): T {
    if (this.s.startsWith(word, this.i)) {
      this.i += word.length
      return v
    }
    return this.fail("invalid literal")
  }

  object(): JsonObject {
    this.i++ // {
    const out: Record<string, Json> = {}
    const seen = new Set<string>()
    this.ws()
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++
      return out
    }
    for (;;) {
      this.ws()
      if (this.s.charCodeAt(this.i) !== 0x22) this.fail("expected a member name")
      const key = this.string()
      // Section 1.1 rule 4: a repeated member name at any depth.
      if (seen.has(key)) this.fail(`duplicate member ${JSON.stringify(key)}`)
      seen.add(key)
      this.ws()
      if (this.s.charCodeAt(this.i) !== 0x3a) this.fail("expected ':'")
      this.i++
      const v = this.value()
      // defineProperty, not assignment: a member named "__proto__" must stay an ordinary member.
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
      this.ws()
      const c = this.s.charCodeAt(this.i)
      if (c === 0x2c) {
        this.i++
        continue
      }
      if (c === 0x7d) {
        this.i++
        return out
      }
      this.fail("expected ',' or '}'")
    }
  }

  array(): ReadonlyArray<Json> {
    this.i++ // [
    const out: Array<Json> = []
    this.ws()
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++
      return out
    }
    for (;;) {
      out.push(this.value())
      this.ws()
      const c = this.s.charCodeAt(this.i)
      if (c === 0x2c) {
        this.i++
        continue
      }
      if (c === 0x5d) {
        this.i++
        return out
      }
      this.fail("expected ',' or ']'")
    }
  }

  hex4(): number {
    const h = this.s.slice(this.i, this.i + 4)
    if (!/^[0-9A-Fa-f]{4}$/.test(h)) this.fail("invalid \\u escape")
    this.i += 4
    return parseInt(h, 16)
  }

  string(): string {
    const s = this.s
    this.i++ // opening quote
    let out = ""
    let start = this.i
    for (;;) {
      if (this.i >= s.length) this.fail("unterminated string")
      const c = s.charCodeAt(this.i)
      if (c === 0x22) {
        out += s.slice(start, this.i)
        this.i++
        return out
      }
      if (c < 0x20) this.fail("control character in string")
      if (c >= 0xd800 && c <= 0xdfff) {
        // Raw surrogates only reach here when the caller passed a JS string; a lone one is not
        // valid UTF-8 text (rule 3).
        const next = s.charCodeAt(this.i + 1)
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          this.i += 2
          continue
        }
        this.fail("unpaired surrogate")
      }
      if (c !== 0x5c) {
        this.i++
        continue
      }
      out += s.slice(start, this.i)
      this.i++
      const e = s.charCodeAt(this.i)
      this.i++
      switch (e) {
        case 0x22: out += "\""; break
        case 0x5c: out += "\\"; break
        case 0x2f: out += "/"; break
        case 0x62: out += "\b"; break
        case 0x66: out += "\f"; break
        case 0x6e: out += "\n"; break
        case 0x72: out += "\r"; break
        case 0x74: out += "\t"; break
        case 0x75: {
          const u = this.hex4()
          if (u >= 0xd800 && u <= 0xdbff) {
            // Section 1.1 rule 3: a high surrogate escape must be followed by a low one.
            if (s.charCodeAt(this.i) !== 0x5c || s.charCodeAt(this.i + 1) !== 0x75) this.fail("unpaired surrogate escape")
            this.i += 2
            const lo = this.hex4()
            if (lo < 0xdc00 || lo > 0xdfff) this.fail("unpaired surrogate escape")
            out += String.fromCharCode(u, lo)
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            this.fail("unpaired surrogate escape")
          } else out += String.fromCharCode(u)
          break
        }
        default:
          this.i--
          this.fail("invalid escape")
      }
      start = this.i
    }
  }

  number(): number {
    const s = this.s
    const start = this.i
    if (s.charCodeAt(this.i) === 0x2d) this.i++
    const d0 = s.charCodeAt(this.i)
    if (d0 === 0x30) this.i++
    else if (d0 >= 0x31 && d0 <= 0x39) {
      while (this.isDigit(s.charCodeAt(this.i))) this.i++
    } else this.fail("invalid number")
    let integral = true
    if (s.charCodeAt(this.i) === 0x2e) {
      integral = false
      this.i++
      if (!this.isDigit(s.charCodeAt(this.i))) this.fail("invalid number")
      while (this.isDigit(s.charCodeAt(this.i))) this.i++
    }
    const e = s.charCodeAt(this.i)
    if (e === 0x65 || e === 0x45) {
      integral = false
      this.i++
      const sign = s.charCodeAt(this.i)
      if (sign === 0x2b || sign === 0x2d) this.i++
      if (!this.isDigit(s.charCodeAt(this.i))) this.fail("invalid number")
      while (this.isDigit(s.charCodeAt(this.i))) this.i++
    }
    const text = s.slice(start, this.i)
    if (this.integersOnly) {
      // Section 1.1 rule 2: integers only, no fraction or exponent, within +-(2^53-1).
      if (!integral) this.fail(`number ${text} is not an integer`)
      const digits = text.startsWith("-") ? text.slice(1) : text
      if (digits.length > 16 || Number(digits) > MAX_SAFE) this.fail(`integer ${text} is out of range`)
    }
    const n = Number(text)
    return n === 0 ? 0 : n // -0 reads as 0
  }

  isDigit(c: number): boolean {
    return c >= 0x30 && c <= 0x39
  }
}

const toText = (input: string | Uint8Array): string => {
  if (typeof input === "string") return input
  try {
    return decoder.decode(input)
  } catch {
    throw new Fail("noncanonical", "input is not valid UTF-8")
  }
}

/** Reads one JSON value under the rules above. Never throws. */
export const parseJson = (input: string | Uint8Array, options: ParseOptions = {}): Either.Either<Json, JsonError> => {
  const maxDepth = options.maxDepth ?? 64
  try {
    const text = toText(input)
    // Rule 7 first: refuse deep input without building it.
    if (scanDepth(text) > maxDepth) {
      return Either.left(new JsonError({ reason: "too_large", message: `nesting deeper than ${maxDepth} levels` }))
    }
    const r = new Reader(text, options.integersOnly ?? true)
    const v = r.value()
    r.ws()
    if (r.i !== text.length) r.fail("trailing data")
    return Either.right(v)
  } catch (e) {
    if (e instanceof Fail) return Either.left(new JsonError({ reason: e.reason, message: e.message }))
    // A RangeError from a pathological input (e.g. a huge string) is still a rejection, not a crash.
    return Either.left(new JsonError({ reason: "too_large", message: String(e) }))
  }
}

/** `parseJson` as an Effect. */
export const parseJsonEffect = (input: string | Uint8Array, options?: ParseOptions): Effect.Effect<Json, JsonError> =>
  Either.match(parseJson(input, options), { onLeft: Effect.fail, onRight: Effect.succeed })

export const isJsonObject: (v: unknown) => v is JsonObject = Predicate.isRecord as (v: unknown) => v is JsonObject
