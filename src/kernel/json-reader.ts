// The reader behind kernel/json.ts's `readJson`: one pass over a JSON text that builds the value,
// applies Writ v0.1 section 1.1 as it goes, and records the spans the caller asked for, with
// whether each span is already in canonical form (section 1.2). Split from json.ts, which holds
// the rules' statement and the public entry points, to keep each module to one concept.

import { skipContainer, type Take } from "./json-take.js"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }
export type JsonObject = { readonly [k: string]: Json }

export type JsonErrorReason = "too_large" | "noncanonical"

const MAX_SAFE = Number.MAX_SAFE_INTEGER

/** A rule broken at some offset; thrown inside the reader, turned into a JsonError by json.ts. */
export class Fail {
  constructor(readonly reason: JsonErrorReason, readonly message: string) {}
}

/** Nesting past the limit (section 1.1 rule 7). */
export class TooDeep {}

/**
 * Where a container sits in the text it was read from, recorded by {@link readJson} for the
 * outermost levels its caller asks for, so that a verifier can take an object's canonical bytes
 * and its signing input from the received text instead of serializing the value again
 * (DESIGN.md, "One call, walked").
 */
export interface Span {
  /** Index in the text of the container's first character (`{` or `[`). */
  readonly start: number
  /** One past its last character. */
  readonly end: number
  /**
   * Whether `text.slice(start, end)` is already the value's RFC 8785 form with member names in
   * UTF-16 order (Writ section 1.2): no whitespace, members strictly ascending, strings without
   * escapes, integers as `Number::toString` writes them. False only costs a serialization.
   */
  readonly canonical: boolean
  /**
   * For a canonical object holding the member {@link ReadOptions.cut}: the text range whose removal
   * leaves the canonical form of the object without that member (one comma goes with it).
   */
  readonly cut?: readonly [number, number]
}


const hasOwn = Object.prototype.hasOwnProperty

/**
 * One pass over the text: the value, its nesting (rule 7, without a scan of its own), and for the
 * containers asked for, their spans and whether their text is canonical. `canon` is whether the
 * value just read is canonical as written.
 */
export class Reader {
  i = 0
  depth = 0
  canon = true
  readonly spans = new Map<object, Span>()
  /** What `take`'s owner attached to the values it was offered (json-take.ts). */
  readonly notes = new Map<object, unknown>()
  constructor(
    readonly s: string,
    readonly integersOnly: boolean,
    readonly maxDepth: number,
    readonly spanLevels: number,
    readonly cut: string | undefined,
    readonly take?: Take
  ) {}

  /** The offered member's value (json-take.ts): the owner's, when it holds one read from exactly
   * this text at no greater depth, or read here as any other. */
  offered(take: Take): Json {
    const start = this.i
    const end = this.s.charCodeAt(start) === 0x5b ? skipContainer(this.s, start) : -1
    if (end < 0) return this.value()
    const { taken, note } = take.offer(this.s.slice(start, end))
    let v: Json
    if (taken !== undefined && this.depth + taken.depth <= this.maxDepth) {
      this.i = end
      this.canon = taken.canonical
      v = taken.value as Json
      if (this.depth + 1 <= this.spanLevels) this.spans.set(taken.value, { start, end, canonical: taken.canonical })
    } else v = this.value()
    if (v !== null && typeof v === "object") this.notes.set(v, note)
    return v
  }

  fail(message: string): never {
    throw new Fail("noncanonical", `${message} at offset ${this.i}`)
  }

  /** Skips JSON whitespace; true when there was some. */
  ws(): boolean {
    const s = this.s
    const from = this.i
    let i = from
    while (i < s.length) {
      const c = s.charCodeAt(i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++
      else break
    }
    this.i = i
    return i !== from
  }

  /** A value starting at the current character (whitespace before it is the caller's). */
  value(): Json {
    const c = this.s.charCodeAt(this.i)
    switch (c) {
      case 0x7b: return this.object()
      case 0x5b: return this.array()
      case 0x22:
        return this.string()
      case 0x74: this.canon = true; return this.literal("true", true)
      case 0x66: this.canon = true; return this.literal("false", false)
      case 0x6e: this.canon = true; return this.literal("null", null)
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

  enter(): void {
    // Rule 7, as the reader descends: a container past the limit is `too_large`.
    if (++this.depth > this.maxDepth) throw new TooDeep()
  }

  object(): JsonObject {
    const start = this.i
    this.enter()
    this.i++ // {
    const out: Record<string, Json> = {}
    let canonical = !this.ws()
    let prev: string | undefined
    let count = 0
    let cutAt = -1
    let cutFrom = 0
    let cutTo = 0
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++
    } else {
      for (;;) {
        if (this.ws()) canonical = false
        if (this.s.charCodeAt(this.i) !== 0x22) this.fail("expected a member name")
        const memberStart = this.i
        const key = this.string()
        if (!this.canon) canonical = false
        // Section 1.1 rule 4: a repeated member name at any depth.
        if (hasOwn.call(out, key)) this.fail(`duplicate member ${JSON.stringify(key)}`)
        // Section 1.2: canonical text lists members by UTF-16 code units, which is `<` on strings.
        if (prev !== undefined && !(prev < key)) canonical = false
        prev = key
        if (this.ws()) canonical = false
        if (this.s.charCodeAt(this.i) !== 0x3a) this.fail("expected ':'")
        this.i++
        if (this.ws()) canonical = false
        const take = this.take
        const v = take !== undefined && key === take.member && this.depth === take.level ? this.offered(take) : this.value()
        if (!this.canon) canonical = false
        if (key === this.cut) {
          cutAt = count
          cutFrom = memberStart
          cutTo = this.i
        }
        count++
        // An own property even for "__proto__", which plain assignment would treat as the prototype.
        if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
        else out[key] = v
        if (this.ws()) canonical = false
        const c = this.s.charCodeAt(this.i)
        if (c === 0x2c) {
          this.i++
          continue
        }
        if (c === 0x7d) {
          this.i++
          break
        }
        this.fail("expected ',' or '}'")
      }
    }
    if (this.depth <= this.spanLevels) {
      // Without the member, one comma goes too: the one before it, or after it when it is first.
      const cut: readonly [number, number] | undefined =
        !canonical || cutAt < 0 ? undefined : cutAt > 0 ? [cutFrom - 1, cutTo] : count > 1 ? [cutFrom, cutTo + 1] : [cutFrom, cutTo]
      this.spans.set(out, cut === undefined ? { start, end: this.i, canonical } : { start, end: this.i, canonical, cut })
    }
    this.depth--
    this.canon = canonical
    return out
  }

  array(): ReadonlyArray<Json> {
    const start = this.i
    this.enter()
    this.i++ // [
    const out: Array<Json> = []
    let canonical = !this.ws()
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++
    } else {
      for (;;) {
        if (this.ws()) canonical = false
        out.push(this.value())
        if (!this.canon) canonical = false
        if (this.ws()) canonical = false
        const c = this.s.charCodeAt(this.i)
        if (c === 0x2c) {
          this.i++
          continue
        }
        if (c === 0x5d) {
          this.i++
          break
        }
        this.fail("expected ',' or ']'")
      }
    }
    if (this.depth <= this.spanLevels) this.spans.set(out, { start, end: this.i, canonical })
    this.depth--
    this.canon = canonical
    return out
  }

  hex4(): number {
    const h = this.s.slice(this.i, this.i + 4)
    if (!/^[0-9A-Fa-f]{4}$/.test(h)) this.fail("invalid \\u escape")
    this.i += 4
    return parseInt(h, 16)
  }

  string(): string {
    const s = this.s
    let i = this.i + 1 // after the opening quote
    const first = i
    // The common case: no escape, so the text between the quotes is the value and, written as it
    // is, its canonical form (JSON.stringify escapes nothing else a valid string can hold raw).
    for (;;) {
      if (i >= s.length) {
        this.i = i
        this.fail("unterminated string")
      }
      const c = s.charCodeAt(i)
      if (c === 0x22) {
        this.i = i + 1
        this.canon = true
        return s.slice(first, i)
      }
      if (c >= 0xd800 && c <= 0xdbff) {
        // A surrogate pair (a character past U+FFFF) is text like any other; a lone one is not.
        const next = s.charCodeAt(i + 1)
        if (next >= 0xdc00 && next <= 0xdfff) {
          i += 2
          continue
        }
        break
      }
      if (c === 0x5c || c < 0x20 || (c >= 0xdc00 && c <= 0xdfff)) break
      i++
    }
    this.i = i
    this.canon = false
    return this.escapedString(first)
  }

  /** The rest of a string from the first character the fast path does not take. */
  escapedString(first: number): string {
    const s = this.s
    let out = ""
    let start = first
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
    let i = start
    if (s.charCodeAt(i) === 0x2d) i++
    const d0 = s.charCodeAt(i)
    if (d0 === 0x30) i++
    else if (d0 >= 0x31 && d0 <= 0x39) {
      i++
      while (isDigit(s.charCodeAt(i))) i++
    } else {
      this.i = i
      this.fail("invalid number")
    }
    let integral = true
    if (s.charCodeAt(i) === 0x2e) {
      integral = false
      i++
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i
        this.fail("invalid number")
      }
      while (isDigit(s.charCodeAt(i))) i++
    }
    const e = s.charCodeAt(i)
    if (e === 0x65 || e === 0x45) {
      integral = false
      i++
      const sign = s.charCodeAt(i)
      if (sign === 0x2b || sign === 0x2d) i++
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i
        this.fail("invalid number")
      }
      while (isDigit(s.charCodeAt(i))) i++
    }
    this.i = i
    const text = s.slice(start, i)
    if (this.integersOnly) {
      // Section 1.1 rule 2: integers only, no fraction or exponent, within +-(2^53-1).
      if (!integral) this.fail(`number ${text} is not an integer`)
      const digits = s.charCodeAt(start) === 0x2d ? i - start - 1 : i - start
      if (digits > 16 || Math.abs(Number(text)) > MAX_SAFE) this.fail(`integer ${text} is out of range`)
    }
    const n = Number(text)
    // A safe integer without a leading zero (the grammar allows none) is written as
    // Number::toString writes it, except `-0`; anything else is compared.
    this.canon = integral && Math.abs(n) <= MAX_SAFE ? n !== 0 || text === "0" : String(n) === text
    return n === 0 ? 0 : n // -0 reads as 0
  }
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39

