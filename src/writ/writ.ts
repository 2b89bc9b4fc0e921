// The writ, spec section 2: its wire Schema, its section 6.1 member table, and verification.
import { Effect, Schema } from "effect"
import type { JsonObject } from "../kernel/json.js"
import type { VerificationCacheSync } from "../kernel/verification-cache.js"
import { Bounds, checkBoundsSync } from "./bound.js"
import { WritError } from "./reason.js"
import { Hash, Int, Key, Nonce, signedObject } from "./wire.js"
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
  verifyObject,
  verifyObjectSync
} from "./verify.js"

// Section 2.

const writ = signedObject("Writ", {
  v: Schema.Literal(1),
  typ: Schema.Literal("writ"),
  iss: Key,
  hld: Key,
  bnd: Bounds,
  prv: Schema.NullOr(Hash),
  exp: Int,
  nnc: Nonce
})
/** A writ without its signature: what an issuer builds before signing (section 1.4). */
export const UnsignedWrit = writ.Unsigned
export type UnsignedWrit = typeof UnsignedWrit.Type
/** A writ, section 2. */
export const Writ = writ.Signed
export type Writ = typeof Writ.Type

/** Section 1.6. */
export const WRIT_MAX_BYTES = 4096

/** Section 6.1 for a writ. */
export const writSpec: ObjectSpec<Writ> = {
  typ: "writ",
  maxBytes: WRIT_MAX_BYTES,
  members: writ.members,
  // Step 2: `sig`, `prv`, `nnc`.
  binaryMembers: (o) => stringMembers(o, ["sig", "prv", "nnc"]),
  // Step 5, the table of section 2 in order.
  checkMembers: (o: JsonObject, path: string, cache) => {
    const iss = memberKey(o, "iss", path, cache)
    if (iss instanceof WritError) return iss
    const hld = memberKey(o, "hld", path, cache)
    if (hld instanceof WritError) return hld
    const bnd = checkBoundsSync(o.bnd, path === "" ? "bnd" : `${path}.bnd`)
    if (bnd instanceof WritError) return bnd
    const prv = memberHashOrNull(o, "prv", path)
    if (prv instanceof WritError) return prv
    const exp = memberInteger(o, "exp", path)
    if (exp instanceof WritError) return exp
    const nnc = memberRandom(o, "nnc", path)
    if (nnc instanceof WritError) return nnc
    const sig = memberSig(o, path)
    if (sig instanceof WritError) return sig
    const crit = o.crit as ReadonlyArray<string> | undefined
    return { v: 1, typ: "writ", iss, hld, bnd, prv, exp, nnc, ...(crit === undefined ? {} : { crit }), sig } as Writ
  }
}

export type CheckedWrit = Checked<Writ>

/** Section 6.1 steps 1 to 5 on a writ (no signature). */
export const checkWrit = (input: ObjectInput, path = ""): Effect.Effect<CheckedWrit, WritError> => checkObject(writSpec, input, path)

/** Section 6.1 on a writ: steps 1 to 6, signed by `iss`. */
// Not a span of its own: it runs once per writ inside the chain and call spans, where a span and
// its call-site trace per writ cost more than the reused chain's whole verification.
export const verifyWrit = (input: ObjectInput, path = ""): Effect.Effect<CheckedWrit, WritError> =>
  verifyObject(writSpec, input, (w) => w.iss, path)

/** Section 6.1 on a writ as a plain function, for entry points that verify inside one Effect. */
export const verifyWritSync = (input: ObjectInput, path: string, cache: VerificationCacheSync | undefined): CheckedWrit | WritError =>
  verifyObjectSync(writSpec, input, (w) => w.iss, path, cache)
