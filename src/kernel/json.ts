/**
 * Strict JSON reader.
 *
 * `JSON.parse` silently keeps the last of duplicate members, accepts lone surrogate escapes, and
 * turns every number into a double, so it cannot enforce Writ v0.1 section 1.1. This reader applies
 * those rules while it reads:
 *  - nesting deeper than `maxDepth` (default 64, section 1.1 rule 7) is `too_large`, found while
 *    reading (never deeper than the limit) and winning over every rule but UTF-8: a text that breaks
 *    another rule is scanned for its depth before it is refused;
 *  - any syntax error, trailing data, invalid UTF-8 (rule 1, rule 3), a duplicate member name at any
 *    depth (rule 4), a `\u` escape of an unpaired surrogate (rule 3) and, when `integersOnly`, a
 *    number with a fraction or exponent or outside +-(2^53-1) (rule 2) is `noncanonical`;
 *  - `-0` reads as `0`.
 * The protocols map these two outcomes onto their own reason codes.
 */
import { Data, Effect, Either, Predicate } from "effect"
import type { Take } from "./json-take.js"
import { Fail, type Json, type JsonErrorReason, type JsonObject, Reader, type Span, TooDeep } from "./json-reader.js"

export type { Json, JsonErrorReason, JsonObject, Span } from "./json-reader.js"

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


const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

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


export interface ReadOptions extends ParseOptions {
  /** Record a {@link Span} for every container at nesting levels 1 to `spanLevels`. Default 0. */
  readonly spanLevels?: number
  /** The member whose removal {@link Span.cut} describes (Writ's `sig`, section 1.4). */
  readonly cut?: string
  /** A member offered to its owner as text before it is read (json-take.ts). */
  readonly take?: Take
}

/** One strict reading: the value, the text it was read from, and the spans asked for. */
export interface Reading {
  readonly value: Json
  readonly text: string
  readonly spans: ReadonlyMap<object, Span>
  /** What `take`'s owner attached to the values it was offered. */
  readonly notes?: ReadonlyMap<object, unknown>
}


const toText = (input: string | Uint8Array): string => {
  if (typeof input === "string") return input
  try {
    return decoder.decode(input)
  } catch {
    throw new Fail("noncanonical", "input is not valid UTF-8")
  }
}

const tooDeep = (maxDepth: number) => new JsonError({ reason: "too_large", message: `nesting deeper than ${maxDepth} levels` })

/**
 * Reads one JSON value under the rules above, in one pass, with the spans `options` asks for.
 * Never throws. Rule 7 wins over every other rule but UTF-8 (as a bracket scan before reading
 * would make it): a text that breaks another rule is scanned for its depth before it is refused.
 */
export const readJson = (input: string | Uint8Array, options: ReadOptions = {}): Either.Either<Reading, JsonError> => {
  const maxDepth = options.maxDepth ?? 64
  let text: string
  try {
    text = toText(input)
  } catch (e) {
    return Either.left(new JsonError({ reason: "noncanonical", message: (e as Fail).message }))
  }
  const r = new Reader(text, options.integersOnly ?? true, maxDepth, options.spanLevels ?? 0, options.cut, options.take)
  try {
    r.ws()
    const value = r.value()
    r.ws()
    if (r.i !== text.length) r.fail("trailing data")
    return Either.right(r.notes.size === 0 ? { value, text, spans: r.spans } : { value, text, spans: r.spans, notes: r.notes })
  } catch (e) {
    if (e instanceof TooDeep) return Either.left(tooDeep(maxDepth))
    // Rule 7 first: a text deeper than the limit is `too_large` whatever else is wrong with it.
    if (scanDepth(text) > maxDepth) return Either.left(tooDeep(maxDepth))
    if (e instanceof Fail) return Either.left(new JsonError({ reason: e.reason, message: e.message }))
    // A RangeError from a pathological input (e.g. a huge string) is still a rejection, not a crash.
    return Either.left(new JsonError({ reason: "too_large", message: String(e) }))
  }
}

/** Reads one JSON value under the rules above. Never throws. */
export const parseJson = (input: string | Uint8Array, options: ParseOptions = {}): Either.Either<Json, JsonError> =>
  Either.map(readJson(input, options), (r) => r.value)

/** `parseJson` as an Effect. */
export const parseJsonEffect = (input: string | Uint8Array, options?: ParseOptions): Effect.Effect<Json, JsonError> =>
  Either.match(parseJson(input, options), { onLeft: Effect.fail, onRight: Effect.succeed })

export const isJsonObject: (v: unknown) => v is JsonObject = Predicate.isRecord as (v: unknown) => v is JsonObject
