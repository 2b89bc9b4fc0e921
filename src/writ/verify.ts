// Section 6.1, verifying one signed object, shared by all five types. The type-specific parts
// (step 5's member table and step 2's binary members) are an `ObjectSpec` declared beside each
// object's Schema (writ.ts, call.ts, tally.ts, revoke.ts, ack.ts); the steps themselves live here
// once, in the spec's order.
import { Effect, Either, Option } from "effect"
import type { Json, JsonError, JsonObject, Reading, Span } from "../kernel/json.js"
import { jsonDepth, readJson } from "../kernel/json.js"
import type { Take } from "../kernel/json-take.js"
import { base64urlLength, decodeBase64url } from "../kernel/base64url.js"
import { hasDidKeyShape } from "../kernel/didkey.js"
import { verifyWithKeyObject } from "../kernel/ed25519.js"
import { type VerificationCacheSync, verificationCacheSync, verifyingKeySync } from "../kernel/verification-cache.js"
import { WritError, writError } from "./reason.js"
import { canonicalText, identityOfText, type ObjectType, signingInput, signingInputOfText } from "./sign.js"
import { has, isInteger, isJsonObject } from "./bound.js"

/** Section 1.1 rule 7 and section 1.6: the nesting limit. */
export const MAX_DEPTH = 64
/** Section 1.6: the longest chain. */
export const MAX_CHAIN = 8

/**
 * How received bytes are read: section 1.1 (rule 7 at 64 levels, integers only), with the spans
 * of the outer three levels (an object, its chain, the chain's writs) and where `sig` sits in
 * each, so canonical bytes and signing inputs come from the text as received (section 1.2, 1.4).
 */
const READ_OPTIONS = { maxDepth: 64, integersOnly: true, spanLevels: 3, cut: "sig" } as const

/** Bytes exactly as received from outside (a request body, a file). Parsed JSON values are passed
 * as plain `Json` instead; a verifier receiving bytes applies section 1.1 while it reads them. */
export class Received {
  #reading: Either.Either<Reading, JsonError> | undefined
  constructor(readonly bytes: Uint8Array | string) {}
  /** The one strict reading of these bytes (section 1.1), made the first time it is asked for:
   * a binding that reads the body to dispatch it and the verifier after it share it. */
  get reading(): Either.Either<Reading, JsonError> {
    return this.readingWith(undefined)
  }
  /** The same reading, made with `take` (json-take.ts) when it is made now: a verifier that holds
   * values read from received text (held chains) offers them; a reading already made is kept. */
  readingWith(take: Take | undefined): Either.Either<Reading, JsonError> {
    if (this.#reading === undefined) this.#reading = readJson(this.bytes, take === undefined ? READ_OPTIONS : { ...READ_OPTIONS, take })
    return this.#reading
  }
}

/** A value read strictly as part of a larger received object (a writ in a call's chain): rules 2
 * to 4 and the nesting limit already hold for it, and its text is in `reading`. */
export class Within {
  constructor(readonly reading: Reading, readonly value: Json) {}
}
export type ObjectInput = Received | Within | Json

/**
 * A body that travels beside a signed object (a tally's result body, an ack's body: sections 6,
 * 9.4, 10): bytes as received, read here with section 1.1 before anything else looks at them, or a
 * value already read strictly as part of a larger object (an answer read whole).
 */
export type BodyInput = Received | { readonly value: Json }

/** The body's value. Received bytes that break section 1.1 (a repeated member or a lone
 * surrogate at any depth, a non-integer) are `noncanonical` at `path`, the body that holds them,
 * never a semantic reason found later; nesting past 64 levels is `too_large`. */
export const readBodySync = (body: BodyInput, path: string): Json | WritError => {
  if (!(body instanceof Received)) return body.value
  const r = body.reading
  return Either.isLeft(r) ? writError(r.left.reason, path, `the body: ${r.left.message}`) : r.right.value
}

export const readBody = (body: BodyInput, path: string): Effect.Effect<Json, WritError> => Effect.suspend(() => result(readBodySync(body, path)))

/** A plain check's outcome as an Effect: its WritError fails, anything else succeeds. */
export const result = <A>(r: A | WritError): Effect.Effect<A, WritError> => (r instanceof WritError ? Effect.fail(r) : Effect.succeed(r))

/** A plain check that returns its first failure or undefined, as an Effect. */
export const failOr = (e: WritError | undefined): Effect.Effect<void, WritError> => (e === undefined ? Effect.void : Effect.fail(e))

/** An object that passed section 6.1 steps 1 to 5: its parsed JSON (unknown members kept, for
 * the signing input and identity), its typed value, its canonical text, and its identity. When it
 * was read from received text: that reading (its chain's writs are read from it too) and, when the
 * text was canonical, the canonical text without `sig` (section 1.4's signing input, less prefix). */
export interface Checked<A> {
  readonly json: JsonObject
  readonly value: A
  readonly canonical: string
  readonly id: string
  readonly reading?: Reading
  readonly withoutSig?: string
}

/** What one object type declares for section 6.1. */
export interface ObjectSpec<A> {
  readonly typ: ObjectType
  /** Section 1.6 byte limit of the canonical form (and of the received bytes). */
  readonly maxBytes: number
  /** Member names this verifier understands (the member table), for `crit` (section 1.7). */
  readonly members: ReadonlyArray<string>
  /** Section 6.1 step 2: the object's own binary members whose value is a string, as [path, value]. */
  readonly binaryMembers: (o: JsonObject) => ReadonlyArray<readonly [string, string]>
  /** Section 6.1 step 5: the remaining members in member-table order, each checked completely,
   * keys judged through `cache` when the verifier has one. The first failure, or the typed value. */
  readonly checkMembers: (o: JsonObject, path: string, cache: VerificationCacheSync | undefined) => A | WritError
  /** A member the verifier offers to the cache as text before reading it (a call's held chain). */
  readonly take?: (cache: VerificationCacheSync) => Take
}

const at = (path: string, member: string): string => (path === "" ? member : `${path}.${member}`)

export const byteLength = (b: Uint8Array | string): number => (typeof b === "string" ? Buffer.byteLength(b, "utf8") : b.length)

/** Section 6.1 steps 1 to 5 for one object of the given type, as a plain function: the first
 * failure, or what step 6 needs. Entry points run it inside their one Effect. */
export const checkObjectSync = <A>(
  spec: ObjectSpec<A>,
  input: ObjectInput,
  path: string,
  cache: VerificationCacheSync | undefined
): Checked<A> | WritError => {
  const read = stepsOneToFour(spec, input, path, cache)
  if (read instanceof WritError) return read
  const { o, canonical, reading, span } = read
  // Step 5: the remaining members, in member-table order.
  const value = spec.checkMembers(o, path, cache)
  if (value instanceof WritError) return value
  const cut = span?.cut
  const withoutSig = cut === undefined ? undefined : reading!.text.slice(span!.start, cut[0]) + reading!.text.slice(cut[1], span!.end)
  // Section 1.5: the identity is the hash of the canonical form just found, hashed once.
  return { json: o, value, canonical, id: identityOfText(canonical), reading, withoutSig }
}

/** Section 6.1 steps 1 to 5, as an Effect. */
export const checkObject = <A>(spec: ObjectSpec<A>, input: ObjectInput, path = ""): Effect.Effect<Checked<A>, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => result(checkObjectSync(spec, input, path, cache)))

const stepsOneToFour = <A>(
  spec: ObjectSpec<A>,
  input: ObjectInput,
  path: string,
  cache: VerificationCacheSync | undefined
): WritError | { readonly o: JsonObject; readonly canonical: string; readonly reading: Reading | undefined; readonly span: Span | undefined } => {
  // Step 1 (received bytes): byte length within section 1.6 before parsing (`too_large`).
  let parsed: Json
  let reading: Reading | undefined
  if (input instanceof Received) {
    if (byteLength(input.bytes) > spec.maxBytes) return writError("too_large", path || undefined, `${spec.typ} over ${spec.maxBytes} bytes`)
    // Step 1 nesting (`too_large`, winning over every later rule), then step 2, section 1.1
    // rules 2 to 4 anywhere in the object (`noncanonical`); the reader applies both as it reads.
    const r = input.readingWith(cache === undefined || spec.take === undefined ? undefined : spec.take(cache))
    if (Either.isLeft(r)) return writError(r.left.reason, path || undefined, r.left.message)
    reading = r.right
    parsed = reading.value
  } else if (input instanceof Within) {
    // Part of an object read strictly within 64 levels: rules 2 to 4 and step 1 nesting hold.
    reading = input.reading
    parsed = input.value
  } else {
    // A value nested in an object that was read strictly: rules 2 to 4 already hold for it.
    // Step 1 nesting.
    if (jsonDepth(input) > MAX_DEPTH) return writError("too_large", path || undefined, "nesting over 64 levels")
    parsed = input
  }
  // Step 1 (canonical bytes after parsing) (`too_large`). Text that was canonical as received is
  // its own canonical form; anything else is serialized (section 1.2).
  const span = reading === undefined || parsed === null || typeof parsed !== "object" ? undefined : reading.spans.get(parsed)
  const canonical = span !== undefined && span.canonical ? reading!.text.slice(span.start, span.end) : canonicalText(parsed)
  if (Buffer.byteLength(canonical, "utf8") > spec.maxBytes) {
    return writError("too_large", path || undefined, `${spec.typ} over ${spec.maxBytes} canonical bytes`)
  }
  // Every protocol object is an object (section 1.1 rule 1 and the member tables).
  if (!isJsonObject(parsed)) return writError("malformed", path || undefined, `a ${spec.typ} is an object`)
  const o = parsed
  // Step 2: section 1.1 rule 5 for the object's own binary members whose value is a string,
  // judged from the characters (nothing is decoded).
  for (const [p, s] of spec.binaryMembers(o)) {
    if (Option.isNone(base64urlLength(s))) return writError("noncanonical", at(path, p), "not canonical base64url")
  }
  // Step 3: `v` is the integer 1 (`unsupported_version`), then `typ` (`wrong_type`).
  if (o.v !== 1) return writError("unsupported_version", at(path, "v"), "v is not 1")
  if (o.typ !== spec.typ) return writError("wrong_type", at(path, "typ"), `expected typ ${spec.typ}`)
  // Step 4: `crit` (section 1.7).
  const crit = critFailure(spec, o, path)
  if (crit !== undefined) return crit
  return { o, canonical, reading, span }
}

/** Section 6.1 step 4: `crit` is an array of strings (`malformed`); then each name, in array
 * order, is understood (`unsupported_critical`) and present (`malformed`). */
const critFailure = (spec: ObjectSpec<unknown>, o: JsonObject, path: string): WritError | undefined => {
  if (!has(o, "crit")) return undefined
  const crit = o.crit
  if (!Array.isArray(crit) || !crit.every((n) => typeof n === "string")) return writError("malformed", at(path, "crit"), "crit is an array of strings")
  for (const name of crit as ReadonlyArray<string>) {
    if (!spec.members.includes(name)) {
      return writError("unsupported_critical", at(path, "crit"), `critical member ${JSON.stringify(name)} is not understood`)
    }
    if (!has(o, name)) return writError("malformed", at(path, "crit"), `critical member ${JSON.stringify(name)} is absent`)
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Step 6: the signature. A check that passed is remembered in the VerificationCache service when
// the context has one (the executor's): the identity covers the signature, so a hit is the same
// bytes under the same key, safe to skip (DESIGN.md).

/** Section 6.1 step 6: `sig` verifies under `signer` (a key already checked by step 5), as a
 * plain function: the failure, or undefined. */
export const checkSignatureSync = <A>(
  spec: ObjectSpec<A>,
  c: Checked<A>,
  signer: string,
  path: string,
  cache: VerificationCacheSync | undefined
): WritError | undefined => {
  const check = `${spec.typ} ${c.id} ${signer}`
  if (cache !== undefined && cache.passed(check)) return undefined
  const key = verifyingKeySync(cache, signer)
  // `sig` passed step 5 (86 characters, 64 bytes) before this step runs.
  const sig = typeof c.json.sig === "string" ? decodeBase64url(c.json.sig) : Option.none()
  const message = c.withoutSig === undefined ? signingInput(spec.typ, 1, c.json) : signingInputOfText(spec.typ, 1, c.withoutSig)
  const ok = Option.isSome(key) && Option.isSome(sig) && verifyWithKeyObject(key.value.object, message, sig.value)
  if (!ok) return writError("bad_signature", at(path, "sig"), `signature does not verify under ${signer}`)
  cache?.remember(check)
  return undefined
}

/** Section 6.1 step 6, as an Effect. */
export const checkSignature = <A>(spec: ObjectSpec<A>, c: Checked<A>, signer: string, path = ""): Effect.Effect<void, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => failOr(checkSignatureSync(spec, c, signer, path, cache)))

/** Section 6.1 in full as a plain function: steps 1 to 5, then the signature under `signerOf(value)`. */
export const verifyObjectSync = <A>(
  spec: ObjectSpec<A>,
  input: ObjectInput,
  signerOf: (a: A) => string,
  path: string,
  cache: VerificationCacheSync | undefined
): Checked<A> | WritError => {
  const c = checkObjectSync(spec, input, path, cache)
  if (c instanceof WritError) return c
  return checkSignatureSync(spec, c, signerOf(c.value), path, cache) ?? c
}

/** Section 6.1 in full (step 6 included), as an Effect. */
export const verifyObject = <A>(
  spec: ObjectSpec<A>,
  input: ObjectInput,
  signerOf: (a: A) => string,
  path = ""
): Effect.Effect<Checked<A>, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => result(verifyObjectSync(spec, input, signerOf, path, cache)))

// ---------------------------------------------------------------------------------------------
// Step 5 member checks shared by the object types. Each is "present, of the required type, a valid
// key where the table says key (`bad_key`), the decoded length of a binary member".

// Plain functions: each returns the member's value or the first failure (a WritError value).
type Check<T> = T | WritError

const missing = (o: JsonObject, name: string, path: string): WritError | undefined =>
  has(o, name) ? undefined : writError("malformed", at(path, name), `${name} is required`)

/** A required member that is a key (section 1.3). A non-string is `malformed`; a string that is
 * not an Ed25519 did:key of a usable point is `bad_key`. The length and prefix are judged before
 * anything is decoded, so a long string costs nothing. */
export const memberKey = (o: JsonObject, name: string, path: string, cache: VerificationCacheSync | undefined): Check<string> => {
  const m = missing(o, name, path)
  if (m !== undefined) return m
  const v = o[name]
  if (typeof v !== "string") return writError("malformed", at(path, name), `${name} is a key string`)
  if (!hasDidKeyShape(v) || Option.isNone(verifyingKeySync(cache, v))) return writError("bad_key", at(path, name), `${name} is not an Ed25519 did:key`)
  return v
}

/** A binary member decoding to exactly `len` bytes, or at least `min` bytes (section 1.1 rule 5).
 * Its length is read from its characters: nothing is decoded. */
export const binaryValue = (v: Json | undefined, p: string, bytes: { len?: number; min?: number }): Check<string> => {
  if (typeof v !== "string") return writError("malformed", p, "a base64url string is required")
  const length = base64urlLength(v)
  if (Option.isNone(length)) return writError("noncanonical", p, "not canonical base64url")
  const n = length.value
  if (bytes.len !== undefined && n !== bytes.len) return writError("malformed", p, `decodes to ${n} bytes, not ${bytes.len}`)
  if (bytes.min !== undefined && n < bytes.min) return writError("malformed", p, `decodes to ${n} bytes, under ${bytes.min}`)
  return v
}

export const memberBinary = (o: JsonObject, name: string, path: string, bytes: { len?: number; min?: number }): Check<string> =>
  missing(o, name, path) ?? binaryValue(o[name], at(path, name), bytes)

/** A hash: 32 bytes (section 1). */
export const memberHash = (o: JsonObject, name: string, path: string): Check<string> => memberBinary(o, name, path, { len: 32 })
/** A hash or null. */
export const memberHashOrNull = (o: JsonObject, name: string, path: string): Check<string | null> =>
  missing(o, name, path) ?? (o[name] === null ? null : binaryValue(o[name], at(path, name), { len: 32 }))
/** `sig`: 64 bytes (section 1.4). */
export const memberSig = (o: JsonObject, path: string): Check<string> => memberBinary(o, "sig", path, { len: 64 })
/** `id` and `nnc`: at least 16 bytes (section 1.6). */
export const memberRandom = (o: JsonObject, name: string, path: string): Check<string> => memberBinary(o, name, path, { min: 16 })

export const memberInteger = (o: JsonObject, name: string, path: string): Check<number> =>
  missing(o, name, path) ?? (isInteger(o[name]) ? (o[name] as number) : writError("malformed", at(path, name), `${name} is an integer`))

export const memberString = (o: JsonObject, name: string, path: string): Check<string> =>
  missing(o, name, path) ?? (typeof o[name] === "string" ? (o[name] as string) : writError("malformed", at(path, name), `${name} is a string`))

export const memberObject = (o: JsonObject, name: string, path: string): Check<JsonObject> =>
  missing(o, name, path) ?? (isJsonObject(o[name]) ? (o[name] as JsonObject) : writError("malformed", at(path, name), `${name} is an object`))

/** An array of objects (a tally's `sub` and `wrt`). */
export const memberObjectArray = (o: JsonObject, name: string, path: string): Check<ReadonlyArray<JsonObject>> => {
  const m = missing(o, name, path)
  if (m !== undefined) return m
  const v = o[name]
  if (!Array.isArray(v)) return writError("malformed", at(path, name), `${name} is an array`)
  for (let i = 0; i < v.length; i++) {
    if (!isJsonObject(v[i])) return writError("malformed", `${at(path, name)}[${i}]`, `${name} holds objects`)
  }
  return v as ReadonlyArray<JsonObject>
}

/** A `chain` member (section 6.1 step 5): an array; at most 8 elements (`too_large`); every element
 * an object (`malformed`). Emptiness is the caller's rule (a call's chain is never empty). */
export const memberChain = (o: JsonObject, name: string, path: string): Check<ReadonlyArray<JsonObject>> =>
  missing(o, name, path) ?? chainShape(o[name], at(path, name))

/** The shape of a chain, shared with section 4's chain verification. */
export const chainShape = <T extends ObjectInput = JsonObject>(v: unknown, p: string): Check<ReadonlyArray<T>> => {
  if (!Array.isArray(v)) return writError("malformed", p, "a chain is an array")
  if (v.length > MAX_CHAIN) return writError("too_large", p, `a chain holds at most ${MAX_CHAIN} writs`)
  for (let i = 0; i < v.length; i++) {
    // An element still held as received bytes is judged an object by its first character.
    const e = v[i]
    const isObj = e instanceof Received ? receivedIsObject(e) : e instanceof Within ? isJsonObject(e.value) : isJsonObject(e)
    if (!isObj) return writError("malformed", `${p}[${i}]`, "a chain holds objects")
  }
  return v as ReadonlyArray<T>
}

/** Whether received bytes hold an object: their first character after JSON whitespace is `{`. */
const receivedIsObject = (r: Received): boolean => {
  const at = (i: number): number => (typeof r.bytes === "string" ? r.bytes.charCodeAt(i) : r.bytes[i])
  const n = r.bytes.length
  let i = 0
  while (i < n && (at(i) === 0x20 || at(i) === 0x09 || at(i) === 0x0a || at(i) === 0x0d)) i++
  return i < n && at(i) === 0x7b
}

/** The string binary members at the given names, for step 2. */
export const stringMembers = (o: JsonObject, names: ReadonlyArray<string>): Array<readonly [string, string]> =>
  names.filter((n) => typeof o[n] === "string").map((n) => [n, o[n] as string] as const)
