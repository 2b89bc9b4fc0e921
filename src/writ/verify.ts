// Section 6.1, verifying one signed object, shared by all five types. The type-specific parts
// (step 5's member table and step 2's binary members) are an `ObjectSpec` declared beside each
// object's Schema (writ.ts, call.ts, tally.ts, revoke.ts, ack.ts); the steps themselves live here
// once, in the spec's order.
import { Effect, Either, Option } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { jsonDepth, parseJson } from "../kernel/json.js"
import { utf8 } from "../kernel/canonical.js"
import { base64urlLength, decodeBase64url } from "../kernel/base64url.js"
import { hasDidKeyShape } from "../kernel/didkey.js"
import { verifyWithKeyObject } from "../kernel/ed25519.js"
import { VerificationCache, verifyingKey } from "../kernel/verification-cache.js"
import { type WritError, writError } from "./reason.js"
import { canonicalText, identity, type ObjectType, signingInput } from "./sign.js"
import { has, isInteger, isJsonObject } from "./bound.js"

/** Section 1.1 rule 7 and section 1.6: the nesting limit. */
export const MAX_DEPTH = 64
/** Section 1.6: the longest chain. */
export const MAX_CHAIN = 8

/** Bytes exactly as received from outside (a request body, a file). Parsed JSON values are passed
 * as plain `Json` instead; a verifier receiving bytes applies section 1.1 while it reads them. */
export class Received {
  constructor(readonly bytes: Uint8Array | string) {}
}
export type ObjectInput = Received | Json

/**
 * A body that travels beside a signed object (a tally's result body, an ack's body: sections 6,
 * 9.4, 10): bytes as received, read here with section 1.1 before anything else looks at them, or a
 * value already read strictly as part of a larger object (an answer read whole).
 */
export type BodyInput = Received | { readonly value: Json }

/** The body's value. Received bytes that break section 1.1 (a repeated member or a lone
 * surrogate at any depth, a non-integer) are `noncanonical` at `path`, the body that holds them,
 * never a semantic reason found later; nesting past 64 levels is `too_large`. */
export const readBody = (body: BodyInput, path: string): Effect.Effect<Json, WritError> =>
  Effect.suspend(() => {
    if (!(body instanceof Received)) return Effect.succeed(body.value)
    const r = parseJson(body.bytes, { maxDepth: MAX_DEPTH, integersOnly: true })
    return Either.isLeft(r) ? Effect.fail(writError(r.left.reason, path, `the body: ${r.left.message}`)) : Effect.succeed(r.right)
  })

/** An object that passed section 6.1 steps 1 to 5: its parsed JSON (unknown members kept, for
 * the signing input and identity), its typed value, its canonical text, and its identity. */
export interface Checked<A> {
  readonly json: JsonObject
  readonly value: A
  readonly canonical: string
  readonly id: string
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
  /** Section 6.1 step 5: the remaining members in member-table order, each checked completely. */
  readonly checkMembers: (o: JsonObject, path: string) => Effect.Effect<A, WritError>
}

const at = (path: string, member: string): string => (path === "" ? member : `${path}.${member}`)

const byteLength = (b: Uint8Array | string): number => (typeof b === "string" ? utf8(b).length : b.length)

/** Section 6.1 steps 1 to 5 for one object of the given type. */
export const checkObject = <A>(spec: ObjectSpec<A>, input: ObjectInput, path = ""): Effect.Effect<Checked<A>, WritError> =>
  Effect.gen(function* () {
    // Step 1 (received bytes): byte length within section 1.6 before parsing (`too_large`).
    let parsed: Json
    if (input instanceof Received) {
      if (byteLength(input.bytes) > spec.maxBytes) {
        return yield* Effect.fail(writError("too_large", path || undefined, `${spec.typ} over ${spec.maxBytes} bytes`))
      }
      // Step 1 nesting (`too_large`, found before anything else is read), then step 2, section 1.1
      // rules 2 to 4 anywhere in the object (`noncanonical`); the reader applies both as it reads.
      const r = parseJson(input.bytes, { maxDepth: MAX_DEPTH, integersOnly: true })
      if (Either.isLeft(r)) return yield* Effect.fail(writError(r.left.reason, path || undefined, r.left.message))
      parsed = r.right
    } else {
      // A value nested in an object that was read strictly: rules 2 to 4 already hold for it.
      // Step 1 nesting.
      if (jsonDepth(input) > MAX_DEPTH) return yield* Effect.fail(writError("too_large", path || undefined, "nesting over 64 levels"))
      parsed = input
    }
    // Step 1 (canonical bytes after parsing) (`too_large`).
    const canonical = canonicalText(parsed)
    if (utf8(canonical).length > spec.maxBytes) {
      return yield* Effect.fail(writError("too_large", path || undefined, `${spec.typ} over ${spec.maxBytes} canonical bytes`))
    }
    // Every protocol object is an object (section 1.1 rule 1 and the member tables).
    if (!isJsonObject(parsed)) return yield* Effect.fail(writError("malformed", path || undefined, `a ${spec.typ} is an object`))
    const o = parsed
    // Step 2: section 1.1 rule 5 for the object's own binary members whose value is a string,
    // judged from the characters (nothing is decoded).
    for (const [p, s] of spec.binaryMembers(o)) {
      if (Option.isNone(base64urlLength(s))) return yield* Effect.fail(writError("noncanonical", at(path, p), "not canonical base64url"))
    }
    // Step 3: `v` is the integer 1 (`unsupported_version`), then `typ` (`wrong_type`).
    if (o.v !== 1) return yield* Effect.fail(writError("unsupported_version", at(path, "v"), "v is not 1"))
    if (o.typ !== spec.typ) return yield* Effect.fail(writError("wrong_type", at(path, "typ"), `expected typ ${spec.typ}`))
    // Step 4: `crit` (section 1.7).
    yield* checkCrit(spec, o, path)
    // Step 5: the remaining members, in member-table order.
    const value = yield* spec.checkMembers(o, path)
    return { json: o, value, canonical, id: identity(o) }
  })

/** Section 6.1 step 4: `crit` is an array of strings (`malformed`); then each name, in array
 * order, is understood (`unsupported_critical`) and present (`malformed`). */
const checkCrit = (spec: ObjectSpec<unknown>, o: JsonObject, path: string): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    if (!has(o, "crit")) return
    const crit = o.crit
    if (!Array.isArray(crit) || !crit.every((n) => typeof n === "string")) {
      return yield* Effect.fail(writError("malformed", at(path, "crit"), "crit is an array of strings"))
    }
    for (const name of crit as ReadonlyArray<string>) {
      if (!spec.members.includes(name)) {
        return yield* Effect.fail(writError("unsupported_critical", at(path, "crit"), `critical member ${JSON.stringify(name)} is not understood`))
      }
      if (!has(o, name)) return yield* Effect.fail(writError("malformed", at(path, "crit"), `critical member ${JSON.stringify(name)} is absent`))
    }
  })

// ---------------------------------------------------------------------------------------------
// Step 6: the signature. A check that passed is remembered in the VerificationCache service when
// the context has one (the executor's): the identity covers the signature, so a hit is the same
// bytes under the same key, safe to skip (DESIGN.md).

/** Section 6.1 step 6: `sig` verifies under `signer` (a key already checked by step 5). */
export const checkSignature = <A>(spec: ObjectSpec<A>, c: Checked<A>, signer: string, path = ""): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    const check = `${spec.typ} ${c.id} ${signer}`
    const cache = yield* Effect.serviceOption(VerificationCache)
    if (Option.isSome(cache) && (yield* cache.value.passed(check))) return
    const key = yield* verifyingKey(signer)
    // `sig` passed step 5 (86 characters, 64 bytes) before this step runs.
    const sig = typeof c.json.sig === "string" ? decodeBase64url(c.json.sig) : Option.none()
    const ok =
      Option.isSome(key) &&
      Option.isSome(sig) &&
      verifyWithKeyObject(key.value.object, signingInput(spec.typ, 1, c.json), sig.value)
    if (!ok) return yield* Effect.fail(writError("bad_signature", at(path, "sig"), `signature does not verify under ${signer}`))
    if (Option.isSome(cache)) yield* cache.value.remember(check)
  })

/** Section 6.1 in full: steps 1 to 5, then the signature under `signerOf(value)` (step 6). */
export const verifyObject = <A>(
  spec: ObjectSpec<A>,
  input: ObjectInput,
  signerOf: (a: A) => string,
  path = ""
): Effect.Effect<Checked<A>, WritError> =>
  Effect.gen(function* () {
    const c = yield* checkObject(spec, input, path)
    yield* checkSignature(spec, c, signerOf(c.value), path)
    return c
  })

// ---------------------------------------------------------------------------------------------
// Step 5 member checks shared by the object types. Each is "present, of the required type, a valid
// key where the table says key (`bad_key`), the decoded length of a binary member".

type Check<T> = Effect.Effect<T, WritError>

const missing = (o: JsonObject, name: string, path: string): Check<never> | undefined =>
  has(o, name) ? undefined : Effect.fail(writError("malformed", at(path, name), `${name} is required`))

/** A required member that is a key (section 1.3). A non-string is `malformed`; a string that is
 * not an Ed25519 did:key of a usable point is `bad_key`. The length and prefix are judged before
 * anything is decoded, so a long string costs nothing (issue 11 item 2). */
export const memberKey = (o: JsonObject, name: string, path: string): Check<string> =>
  missing(o, name, path) ??
  Effect.suspend(() => {
    const v = o[name]
    if (typeof v !== "string") return Effect.fail(writError("malformed", at(path, name), `${name} is a key string`))
    const notKey = writError("bad_key", at(path, name), `${name} is not an Ed25519 did:key`)
    if (!hasDidKeyShape(v)) return Effect.fail(notKey)
    return Effect.flatMap(verifyingKey(v), (k) => (Option.isSome(k) ? Effect.succeed(v) : Effect.fail(notKey)))
  })

/** A binary member decoding to exactly `len` bytes, or at least `min` bytes (section 1.1 rule 5).
 * Its length is read from its characters: nothing is decoded. */
export const binaryValue = (v: Json | undefined, p: string, bytes: { len?: number; min?: number }): Check<string> =>
  Effect.suspend(() => {
    if (typeof v !== "string") return Effect.fail(writError("malformed", p, "a base64url string is required"))
    const length = base64urlLength(v)
    if (Option.isNone(length)) return Effect.fail(writError("noncanonical", p, "not canonical base64url"))
    const n = length.value
    if (bytes.len !== undefined && n !== bytes.len) return Effect.fail(writError("malformed", p, `decodes to ${n} bytes, not ${bytes.len}`))
    if (bytes.min !== undefined && n < bytes.min) return Effect.fail(writError("malformed", p, `decodes to ${n} bytes, under ${bytes.min}`))
    return Effect.succeed(v)
  })

export const memberBinary = (o: JsonObject, name: string, path: string, bytes: { len?: number; min?: number }): Check<string> =>
  missing(o, name, path) ?? binaryValue(o[name], at(path, name), bytes)

/** A hash: 32 bytes (section 1). */
export const memberHash = (o: JsonObject, name: string, path: string): Check<string> => memberBinary(o, name, path, { len: 32 })
/** A hash or null. */
export const memberHashOrNull = (o: JsonObject, name: string, path: string): Check<string | null> =>
  missing(o, name, path) ?? (o[name] === null ? Effect.succeed(null) : binaryValue(o[name], at(path, name), { len: 32 }))
/** `sig`: 64 bytes (section 1.4). */
export const memberSig = (o: JsonObject, path: string): Check<string> => memberBinary(o, "sig", path, { len: 64 })
/** `id` and `nnc`: at least 16 bytes (section 1.6). */
export const memberRandom = (o: JsonObject, name: string, path: string): Check<string> => memberBinary(o, name, path, { min: 16 })

export const memberInteger = (o: JsonObject, name: string, path: string): Check<number> =>
  missing(o, name, path) ??
  (isInteger(o[name]) ? Effect.succeed(o[name] as number) : Effect.fail(writError("malformed", at(path, name), `${name} is an integer`)))

export const memberString = (o: JsonObject, name: string, path: string): Check<string> =>
  missing(o, name, path) ??
  (typeof o[name] === "string" ? Effect.succeed(o[name] as string) : Effect.fail(writError("malformed", at(path, name), `${name} is a string`)))

export const memberObject = (o: JsonObject, name: string, path: string): Check<JsonObject> =>
  missing(o, name, path) ??
  (isJsonObject(o[name]) ? Effect.succeed(o[name] as JsonObject) : Effect.fail(writError("malformed", at(path, name), `${name} is an object`)))

/** An array of objects (a tally's `sub` and `wrt`). */
export const memberObjectArray = (o: JsonObject, name: string, path: string): Check<ReadonlyArray<JsonObject>> =>
  missing(o, name, path) ??
  Effect.suspend(() => {
    const v = o[name]
    if (!Array.isArray(v)) return Effect.fail(writError("malformed", at(path, name), `${name} is an array`))
    for (let i = 0; i < v.length; i++) {
      if (!isJsonObject(v[i])) return Effect.fail(writError("malformed", `${at(path, name)}[${i}]`, `${name} holds objects`))
    }
    return Effect.succeed(v as ReadonlyArray<JsonObject>)
  })

/** A `chain` member (section 6.1 step 5): an array; at most 8 elements (`too_large`); every element
 * an object (`malformed`). Emptiness is the caller's rule (a call's chain is never empty). */
export const memberChain = (o: JsonObject, name: string, path: string): Check<ReadonlyArray<JsonObject>> =>
  missing(o, name, path) ?? chainShape(o[name], at(path, name))

/** The shape of a chain, shared with section 4's chain verification. */
export const chainShape = <T extends ObjectInput = JsonObject>(v: unknown, p: string): Check<ReadonlyArray<T>> =>
  Effect.suspend(() => {
    if (!Array.isArray(v)) return Effect.fail(writError("malformed", p, "a chain is an array"))
    if (v.length > MAX_CHAIN) return Effect.fail(writError("too_large", p, `a chain holds at most ${MAX_CHAIN} writs`))
    for (let i = 0; i < v.length; i++) {
      // An element still held as received bytes is judged an object by its first character.
      const e = v[i]
      const isObj = e instanceof Received ? receivedIsObject(e) : isJsonObject(e)
      if (!isObj) return Effect.fail(writError("malformed", `${p}[${i}]`, "a chain holds objects"))
    }
    return Effect.succeed(v as ReadonlyArray<T>)
  })

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
