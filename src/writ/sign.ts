// Signing input (section 1.4), signing, and object identity (section 1.5): one function each,
// shared by the five signed object types and by every signer (issuing and the executor), so a
// signature or hash can never be computed two ways.
import { Effect } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { encodeBase64url } from "../kernel/base64url.js"
import { encodeCanonical, utf8 } from "../kernel/canonical.js"
import { hashB64, hashTextB64 } from "../kernel/hash.js"
import { Signer } from "../kernel/services.js"

export type ObjectType = "writ" | "call" | "tally" | "revoke" | "ack"

/** Section 1.2: the canonical text of a value (RFC 8785, member names by UTF-16 code units). */
export const canonicalText = (value: Json): string => encodeCanonical(value, "utf16")

/** Section 1.2: the canonical bytes of a value. */
export const canonicalBytes = (value: Json): Uint8Array => utf8(canonicalText(value))

/** Section 1 "Hash": base64url SHA-256 of the canonical bytes of a value (an `out` commitment). */
export const hashOf = (value: Json): string => hashB64(canonicalBytes(value))

/** The object with `sig` removed. */
export const withoutSig = (o: JsonObject): JsonObject => {
  const { sig: _sig, ...rest } = o
  return rest
}

const NUL = new Uint8Array([0])

/** Section 1.4: `<typ> "/" <v> 0x00 <canonical form of the object with sig removed>`. */
export const signingInput = (typ: ObjectType, v: number, o: JsonObject): Uint8Array =>
  signingInputOfText(typ, v, canonicalText(withoutSig(o)))

/** Section 1.4 from the canonical text of the object without `sig` (a verifier that read it off
 * canonical received text has it without serializing): the one place the bytes are assembled. */
export const signingInputOfText = (typ: ObjectType, v: number, unsignedCanonical: string): Uint8Array => {
  const b = Buffer.from(`${typ}/${v}\u0000${unsignedCanonical}`, "utf8")
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
}

/** An object before its signature: the encoded side of an `Unsigned*` Schema (src/writ/wire.ts). */
export type UnsignedObject = { readonly v: 1; readonly typ: ObjectType; readonly [member: string]: Json }

/** Section 1.4: `unsigned` with `sig`, the `Signer`'s Ed25519 signature over its signing input as
 * an object of its own `typ`. The one signing function: issuing and the executor both use it. */
export const signObject = <U extends UnsignedObject>(unsigned: U): Effect.Effect<U & { readonly sig: string }, never, Signer> =>
  Effect.map(Effect.flatMap(Signer, (signer) => signer.sign(signingInput(unsigned.typ, unsigned.v, unsigned))), (sig) => ({
    ...unsigned,
    sig: encodeBase64url(sig)
  }))

/** Section 1.5: the identity of a signed object, the hash of its whole canonical form, `sig` included. */
export const identity = (o: JsonObject): string => identityOfText(canonicalText(o))

/** Section 1.5 from the object's canonical text, when the verifier already holds it. */
export const identityOfText = (canonical: string): string => hashTextB64(canonical)

/** Identities by object type (section 1.5); one function underneath, named for the reader. */
export const writIdentity: (writ: JsonObject) => string = identity
export const callIdentity: (call: JsonObject) => string = identity
export const tallyIdentity: (tally: JsonObject) => string = identity
export const revokeIdentity: (revoke: JsonObject) => string = identity
export const ackIdentity: (ack: JsonObject) => string = identity
/** `out` of a tally or an ack: the hash of a result body's canonical form (sections 6, 9.4). */
export const bodyHash: (body: Json) => string = hashOf
