// The JWS profile of Appendix D (non-normative): a Writ object as the payload of an RFC 7515 JWS
// in compact serialization, signed again by the key that signed the object.
//
//   - payload: the complete signed object, `sig` included, in canonical form (section 1.2); its
//     identity is computed on the object as always, never on the JWS;
//   - protected header: exactly `alg` "EdDSA", `typ` "writ-<object type>+jws", and `kid`, the
//     did:key of the object's signer (`iss` of a writ, revoke or ack, `from` of a call, the
//     executor of a tally); any other member, or any other `alg`, is refused;
//   - the JWS signature is a second Ed25519 signature by that key over the JWS signing input
//     (RFC 7515 section 5.1). It authenticates the envelope for JOSE tooling; it never replaces the
//     object's own signature, which `unwrap` checks exactly as section 6.1 says.
//
// As panva/jose does, `unwrap` validates the untrusted envelope completely (three base64url
// segments, a strict JSON header with exactly the three members) before any cryptography.
import { Effect, Either, Schema } from "effect"
import { Stackless } from "../kernel/stackless.js"
import { decodeBase64url, encodeBase64url } from "../kernel/base64url.js"
import { encodeCanonical, utf8 } from "../kernel/canonical.js"
import { isDidKey, publicKeyFromDidKey } from "../kernel/didkey.js"
import { verify as ed25519Verify } from "../kernel/ed25519.js"
import { isJsonObject, type JsonObject, parseJson } from "../kernel/json.js"
import { Signer } from "../kernel/services.js"
import { verifyAck } from "./ack.js"
import { checkCall, verifyCallSignatures } from "./call.js"
import { ownKey } from "./issue.js"
import type { WritError } from "./reason.js"
import { verifyRevoke } from "./revoke.js"
import { canonicalText, type ObjectType } from "./sign.js"
import { verifyTallyObject } from "./tally.js"
import { MAX_DEPTH, Received } from "./verify.js"
import { verifyWrit } from "./writ.js"

/** The envelope's own failures (the object inside fails with its section 11 `WritError`). Codes
 * outside section 11 are namespaced (section 11, last paragraph). Defined here once. */
export const JwsReason = Schema.Literal(
  /** Not three base64url segments, or a header or payload that is not strict JSON. */
  "jws/malformed",
  /** A header member other than `alg`, `typ`, `kid`, a missing one, a `typ` not of this profile, or
   * a `typ` naming another object type than the payload's (Appendix D: `typ` is
   * "writ-<object type>+jws" of the object it carries). */
  "jws/bad_header",
  /** An `alg` other than "EdDSA". */
  "jws/bad_alg",
  /** `kid` is not the object's signer. */
  "jws/kid_mismatch",
  /** The JWS signature does not verify under `kid`. */
  "jws/bad_signature"
)
export type JwsReason = typeof JwsReason.Type

export class JwsError extends Stackless(Schema.TaggedError<JwsError>()("JwsError", {
  reason: JwsReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
})) {}

const jwsError = (reason: JwsReason, path: string, message: string) => new JwsError({ reason, path, message })

/** The protected header of Appendix D: exactly these three members. */
export const JwsHeader = Schema.Struct({
  alg: Schema.Literal("EdDSA"),
  typ: Schema.Literal("writ-writ+jws", "writ-call+jws", "writ-tally+jws", "writ-revoke+jws", "writ-ack+jws"),
  kid: Schema.String
})
export type JwsHeader = typeof JwsHeader.Type

const objectTypes: ReadonlyArray<ObjectType> = ["writ", "call", "tally", "revoke", "ack"]
const headerMembers = ["alg", "kid", "typ"]

/** `typ` of the header for an object type. */
export const jwsTyp = (t: ObjectType): JwsHeader["typ"] => `writ-${t}+jws` as JwsHeader["typ"]

/** The object's signer as the object itself names it; a tally names its signer only through the
 * writ it answers, so for a tally the JWS `kid` is checked by verifying the tally under it. */
const namedSigner = (t: ObjectType, o: JsonObject): string | undefined =>
  t === "call" ? (typeof o.from === "string" ? o.from : undefined) : t === "tally" ? undefined : typeof o.iss === "string" ? o.iss : undefined

/** Section 6.1 on the object, its own signature under `signer` (for a tally) included; a chain's
 * writs (call, revoke) and a revoke's section 9.1 checks too, as the verifier of each type does. */
const verifyInner = (t: ObjectType, input: Received | JsonObject, signer: string): Effect.Effect<JsonObject, WritError> => {
  switch (t) {
    case "writ":
      return Effect.map(verifyWrit(input), (c) => c.json)
    case "call":
      return Effect.flatMap(checkCall(input), (c) => Effect.as(verifyCallSignatures(c), c.json))
    case "tally":
      return Effect.map(verifyTallyObject(input, signer), (c) => c.json)
    case "revoke":
      return Effect.map(verifyRevoke(input), (r) => r.revoke.json)
    case "ack":
      return Effect.map(verifyAck(input), (c) => c.json)
  }
}

const objectType = (o: JsonObject, path: string): Effect.Effect<ObjectType, JwsError> =>
  typeof o.typ === "string" && (objectTypes as ReadonlyArray<string>).includes(o.typ)
    ? Effect.succeed(o.typ as ObjectType)
    : Effect.fail(jwsError("jws/malformed", path, "not a Writ object (typ is not writ, call, tally, revoke or ack)"))

/** Appendix D: wraps a signed Writ object as a compact JWS signed by the Signer, which must be the
 * object's signer (`jws/kid_mismatch`). The object is verified first (section 6.1), so what we
 * wrap is what a Writ verifier accepts. */
export const wrap: (object: JsonObject) => Effect.Effect<string, JwsError | WritError, Signer> = Effect.fn("writ.jws.wrap")(
  function*(object: JsonObject) {
    const t = yield* objectType(object, "payload")
    const kid = yield* ownKey
    const named = namedSigner(t, object)
    if (named !== undefined && named !== kid) {
      return yield* Effect.fail(jwsError("jws/kid_mismatch", "kid", `the object is signed by ${named}, not by this key`))
    }
    const verified = yield* verifyInner(t, object, kid)
    const header: JwsHeader = { alg: "EdDSA", typ: jwsTyp(t), kid }
    const h = encodeBase64url(utf8(encodeCanonical(header, "utf16")))
    const p = encodeBase64url(utf8(canonicalText(verified)))
    const signingInput = utf8(`${h}.${p}`)
    const signer = yield* Signer
    const sig = yield* signer.sign(signingInput)
    return `${h}.${p}.${encodeBase64url(sig)}`
  }
)

/** What `unwrap` yields: the object (verified under section 6.1), its type, and the header. */
export interface Unwrapped {
  readonly header: JwsHeader
  readonly type: ObjectType
  readonly object: JsonObject
}

const segment = (s: string, path: string): Effect.Effect<Uint8Array, JwsError> => {
  const b = decodeBase64url(s)
  return b._tag === "Some" && b.value.length > 0
    ? Effect.succeed(b.value)
    : Effect.fail(jwsError("jws/malformed", path, "not a non-empty canonical base64url segment"))
}

/** Reads the protected header strictly: JSON with no repeated member, exactly `alg`, `typ` and
 * `kid`; then `alg` is "EdDSA" (`jws/bad_alg`), `typ` is this profile's, `kid` a did:key. */
const readHeader = (bytes: Uint8Array): Effect.Effect<JwsHeader, JwsError> =>
  Effect.gen(function*() {
    const parsed = parseJson(bytes, { maxDepth: 4, integersOnly: true })
    if (Either.isLeft(parsed)) return yield* Effect.fail(jwsError("jws/malformed", "header", parsed.left.message))
    const h = parsed.right
    if (!isJsonObject(h)) return yield* Effect.fail(jwsError("jws/malformed", "header", "the header is a JSON object"))
    const names = Object.keys(h).sort()
    const extra = names.filter((n) => !headerMembers.includes(n))
    if (extra.length > 0) return yield* Effect.fail(jwsError("jws/bad_header", `header.${extra[0]}`, "the header has exactly alg, typ and kid"))
    const missing = headerMembers.filter((n) => !names.includes(n))
    if (missing.length > 0) return yield* Effect.fail(jwsError("jws/bad_header", `header.${missing[0]}`, "the header has exactly alg, typ and kid"))
    if (h.alg !== "EdDSA") return yield* Effect.fail(jwsError("jws/bad_alg", "header.alg", `alg ${JSON.stringify(h.alg)} is not EdDSA`))
    if (typeof h.typ !== "string" || !objectTypes.some((t) => jwsTyp(t) === h.typ)) {
      return yield* Effect.fail(jwsError("jws/bad_header", "header.typ", "typ is writ-<object type>+jws"))
    }
    if (!isDidKey(h.kid)) return yield* Effect.fail(jwsError("jws/bad_header", "header.kid", "kid is an Ed25519 did:key"))
    return { alg: "EdDSA", typ: h.typ as JwsHeader["typ"], kid: h.kid }
  })

/** Appendix D: unwraps a compact JWS. The envelope is validated first, then its signature under
 * `kid`, then the payload is read as received bytes (section 1.1) and verified as its type's
 * verifier does (section 6.1), with `kid` as its signer (`jws/kid_mismatch` otherwise). */
export const unwrap: (compact: string) => Effect.Effect<Unwrapped, JwsError | WritError> = Effect.fn("writ.jws.unwrap")(
  function*(compact: string) {
    const parts = compact.trim().split(".")
    if (parts.length !== 3) return yield* Effect.fail(jwsError("jws/malformed", "jws", "a compact JWS has three segments"))
    const header = yield* readHeader(yield* segment(parts[0], "header"))
    const payload = yield* segment(parts[1], "payload")
    const sig = yield* segment(parts[2], "signature")
    const pub = publicKeyFromDidKey(header.kid)
    if (pub._tag === "None" || !ed25519Verify(pub.value, utf8(`${parts[0]}.${parts[1]}`), sig)) {
      return yield* Effect.fail(jwsError("jws/bad_signature", "signature", "the JWS signature does not verify under kid"))
    }
    const parsed = parseJson(payload, { maxDepth: MAX_DEPTH, integersOnly: true })
    if (Either.isLeft(parsed) || !isJsonObject(parsed.right)) {
      // The object's own verifier names what is wrong with bytes that do not read (section 6.1).
      const t = objectTypes.find((x) => jwsTyp(x) === header.typ)!
      yield* verifyInner(t, new Received(payload), header.kid)
      return yield* Effect.fail(jwsError("jws/malformed", "payload", "the payload is a JSON object"))
    }
    const t = yield* objectType(parsed.right, "payload")
    if (jwsTyp(t) !== header.typ) {
      // A header fault, not a signer one: `kid` may well be the object's signer.
      return yield* Effect.fail(jwsError("jws/bad_header", "header.typ", `typ ${header.typ} but the payload is a ${t}`))
    }
    const named = namedSigner(t, parsed.right)
    if (named !== undefined && named !== header.kid) {
      return yield* Effect.fail(jwsError("jws/kid_mismatch", "header.kid", `kid is not the object's signer ${named}`))
    }
    const object = yield* verifyInner(t, new Received(payload), header.kid)
    // Appendix D: the payload is the object in canonical form (section 1.2), byte for byte.
    if (Buffer.from(payload).toString("utf8") !== canonicalText(object)) {
      return yield* Effect.fail(jwsError("jws/malformed", "payload", "the payload is not the object's canonical form"))
    }
    return { header, type: t, object }
  }
)
