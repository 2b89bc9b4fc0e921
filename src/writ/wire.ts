// The value Schemas of spec section 1 (keys, hashes, signatures, nonces, integers) and the shape
// every signed object shares: its member table plus `crit` (section 1.7) and `sig` (section 1.4),
// open to members this version does not define (section 1.7: ignored, but signed).
//
// Each value Schema states as much of its section 1 rule as a Schema can, so that the generated
// JSON Schemas refuse what the verifier refuses: base64url members are canonical (rule 5: no
// padding, no non-zero trailing bits, never a length of 1 modulo 4) and of the decoded length of
// their member. What only the verifier can check (a did:key point's order, a signature) stays there.
import { Schema } from "effect"
import type { Json } from "../kernel/json.js"
import { isDidKey } from "../kernel/didkey.js"

/** A key, section 1.3: an Ed25519 did:key whose point is usable (not of small order). */
export const Key = Schema.String.pipe(
  Schema.filter((s) => isDidKey(s), { message: () => "not an Ed25519 did:key" }),
  Schema.annotations({ identifier: "Key", jsonSchema: { type: "string", pattern: "^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+$" } })
)

// Section 1.1 rule 5. A base64url string of n characters carries 6n bits; the bits after the last
// whole byte must be zero, so the last character is one whose value is a multiple of 4 (n = 3 mod 4,
// two spare bits) or of 16 (n = 2 mod 4, four spare bits).
const B64 = "[A-Za-z0-9_-]"
const SPARE_2 = "[AEIMQUYcgkosw048]"
const SPARE_4 = "[AQgw]"
/** Exactly `chars` characters, canonical. */
const fixedB64 = (chars: number): string =>
  `^${B64}{${chars - 1}}${chars % 4 === 3 ? SPARE_2 : chars % 4 === 2 ? SPARE_4 : B64}$`
/** Any canonical length. */
const anyB64 = `^(?:${B64}{4})*(?:${B64}{2}${SPARE_2}|${B64}${SPARE_4})?$`

/** A hash, section 1: base64url SHA-256, 43 characters (32 bytes). */
export const Hash = Schema.String.pipe(Schema.pattern(new RegExp(fixedB64(43))), Schema.annotations({ identifier: "Hash" }))
/** A signature, section 1.4: 86 characters (64 bytes). */
export const Signature = Schema.String.pipe(Schema.pattern(new RegExp(fixedB64(86))), Schema.annotations({ identifier: "Signature" }))
/** `id` and `nnc`, section 1.6: at least 16 random bytes, 22 characters or more. */
export const Nonce = Schema.String.pipe(
  Schema.minLength(22),
  Schema.pattern(new RegExp(anyB64)),
  Schema.annotations({ identifier: "Nonce" })
)
/** Section 1.1 rule 2 integers. */
export const Int = Schema.Int.pipe(Schema.between(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER))

const isPlain = (o: object): boolean => {
  const proto = Object.getPrototypeOf(o)
  return proto === Object.prototype || proto === null
}
/** Any JSON value (section 1.1), as the strict reader yields it. */
const isJson = (u: unknown): u is Json =>
  u === null || typeof u === "boolean" || typeof u === "string" || (typeof u === "number" && Number.isFinite(u)) ||
  (Array.isArray(u) ? u.every(isJson) : typeof u === "object" && isPlain(u) && Object.values(u).every(isJson))

/** Section 1.7: a member this version does not define is ignored, and signed like any other. Its
 * JSON Schema is every JSON type (no constraint). */
export const UnknownMember: Schema.Schema<Json> = Schema.declare(isJson, {
  identifier: "UnknownMember",
  jsonSchema: { type: ["null", "boolean", "number", "string", "array", "object"] }
})
const unknownMembers = Schema.Record({ key: Schema.String, value: UnknownMember })

/** A signed object type (section 1.4): its unsigned Schema (what an issuer builds), its signed
 * Schema, and its member table (section 1.7: the names `crit` may list), all from one field list. */
export const signedObject = <const F extends Schema.Struct.Fields>(identifier: string, fields: F) => {
  const members: ReadonlyArray<string> = [...Object.keys(fields), "crit", "sig"]
  // Section 1.7: `crit` names members this verifier understands; every one but `crit` itself is
  // required, so an understood name is also a present one.
  const crit = Schema.optional(Schema.Array(Schema.Literal(...(members as [string, ...Array<string>]))))
  const unsignedFields = { ...fields, crit }
  return {
    members,
    Unsigned: Schema.Struct(unsignedFields, unknownMembers).annotations({ identifier: `Unsigned${identifier}` }),
    Signed: Schema.Struct({ ...unsignedFields, sig: Signature }, unknownMembers).annotations({ identifier })
  }
}
