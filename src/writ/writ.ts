// The writ, spec section 2: its wire Schema, its section 6.1 member table, and verification.
import { Effect, Schema } from "effect"
import type { JsonObject } from "../kernel/json.js"
import { isDidKey } from "../kernel/didkey.js"
import { Bounds, checkBounds } from "./bound.js"
import type { WritError } from "./reason.js"
import {
  type Checked,
  checkObject,
  memberHashOrNull,
  memberInteger,
  memberKey,
  memberRandom,
  memberSig,
  type ObjectInput,
  type ObjectSpec,
  stringMembers,
  verifyObject
} from "./verify.js"

// ---------------------------------------------------------------------------------------------
// Wire value schemas shared by every object type.

/** A key, section 1.3: an Ed25519 did:key whose point is usable (not of small order). */
export const Key = Schema.String.pipe(
  Schema.filter((s) => isDidKey(s), { message: () => "not an Ed25519 did:key" }),
  Schema.annotations({ identifier: "Key", jsonSchema: { type: "string", pattern: "^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+$" } })
)
const b64 = (n: number | [number]) =>
  Schema.String.pipe(Schema.pattern(Array.isArray(n) ? new RegExp(`^[A-Za-z0-9_-]{${n[0]},}$`) : new RegExp(`^[A-Za-z0-9_-]{${n}}$`)))
/** A hash, section 1: base64url SHA-256, 43 characters. */
export const Hash = b64(43).pipe(Schema.annotations({ identifier: "Hash" }))
/** A signature, section 1.4: 86 characters. */
export const Signature = b64(86).pipe(Schema.annotations({ identifier: "Signature" }))
/** `id` and `nnc`: at least 16 random bytes, 22 characters or more. */
export const Nonce = b64([22]).pipe(Schema.annotations({ identifier: "Nonce" }))
/** Section 1.1 rule 2 integers. */
export const Int = Schema.Int.pipe(
  Schema.greaterThanOrEqualTo(-Number.MAX_SAFE_INTEGER),
  Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)
)
/** `crit`, section 1.7. */
export const Crit = Schema.optional(Schema.Array(Schema.String))

/** Section 1.4: a signed object is its unsigned members plus `sig`, the signature over them. */
export const signedSchema = <F extends Schema.Struct.Fields>(identifier: string, unsignedFields: F) =>
  Schema.Struct({ ...unsignedFields, sig: Signature }).pipe(Schema.annotations({ identifier }))

// ---------------------------------------------------------------------------------------------
// Section 2.

export const unsignedWritFields = {
  v: Schema.Literal(1),
  typ: Schema.Literal("writ"),
  iss: Key,
  hld: Key,
  bnd: Bounds,
  prv: Schema.NullOr(Hash),
  exp: Int,
  nnc: Nonce,
  crit: Crit
}
/** A writ without its signature: what an issuer builds before signing (section 1.4). */
export const UnsignedWrit = Schema.Struct(unsignedWritFields)
export type UnsignedWrit = typeof UnsignedWrit.Type
/** A writ, section 2. */
export const Writ = signedSchema("Writ", unsignedWritFields)
export type Writ = typeof Writ.Type

/** Section 1.6. */
export const WRIT_MAX_BYTES = 4096

/** Section 6.1 for a writ. */
export const writSpec: ObjectSpec<Writ> = {
  typ: "writ",
  maxBytes: WRIT_MAX_BYTES,
  members: ["v", "typ", "iss", "hld", "bnd", "prv", "exp", "nnc", "crit", "sig"],
  // Step 2: `sig`, `prv`, `nnc`.
  binaryMembers: (o) => stringMembers(o, ["sig", "prv", "nnc"]),
  // Step 5, the table of section 2 in order.
  checkMembers: (o: JsonObject, path: string) =>
    Effect.gen(function* () {
      const iss = yield* memberKey(o, "iss", path)
      const hld = yield* memberKey(o, "hld", path)
      const bnd = yield* checkBounds(o.bnd, path === "" ? "bnd" : `${path}.bnd`)
      const prv = yield* memberHashOrNull(o, "prv", path)
      const exp = yield* memberInteger(o, "exp", path)
      const nnc = yield* memberRandom(o, "nnc", path)
      const sig = yield* memberSig(o, path)
      const crit = o.crit as ReadonlyArray<string> | undefined
      return { v: 1, typ: "writ", iss, hld, bnd, prv, exp, nnc, ...(crit === undefined ? {} : { crit }), sig } as Writ
    })
}

export type CheckedWrit = Checked<Writ>

/** Section 6.1 steps 1 to 5 on a writ (no signature). */
export const checkWrit = (input: ObjectInput, path = ""): Effect.Effect<CheckedWrit, WritError> => checkObject(writSpec, input, path)

/** Section 6.1 on a writ: steps 1 to 6, signed by `iss`. */
export const verifyWrit = (input: ObjectInput, path = ""): Effect.Effect<CheckedWrit, WritError> =>
  verifyObject(writSpec, input, (w) => w.iss, path)
