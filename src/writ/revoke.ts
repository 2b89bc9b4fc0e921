// The revoke, spec section 9.1: its wire Schema, its section 6.1 member table, and its checks.
import { Effect, Schema } from "effect"
import type { JsonObject } from "../kernel/json.js"
import { type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"
import { chainLinksFailure, verifyReceivedChainWritsSync } from "./chain.js"
import { WritError, writError } from "./reason.js"
import {
  binaryValue,
  type Checked,
  checkObject,
  checkObjectSync,
  checkSignatureSync,
  memberChain,
  memberKey,
  memberSig,
  type ObjectInput,
  type ObjectSpec,
  result,
  stringMembers
} from "./verify.js"
import { has } from "./bound.js"
import { type CheckedWrit, Writ } from "./writ.js"
import { Hash, Key, signedObject } from "./wire.js"

const revoke = signedObject("Revoke", {
  v: Schema.Literal(1),
  typ: Schema.Literal("revoke"),
  writ: Schema.Union(Hash, Schema.Literal("*")),
  iss: Key,
  chain: Schema.Array(Writ).pipe(Schema.maxItems(8))
})
export const UnsignedRevoke = revoke.Unsigned
export type UnsignedRevoke = typeof UnsignedRevoke.Type
/** A revoke, section 9.1. */
export const Revoke = revoke.Signed
export type Revoke = typeof Revoke.Type

export interface RevokeMembers {
  /** The revoked writ's identity, or `"*"` for every writ `iss` ever issued. */
  readonly writ: string
  readonly iss: string
  readonly chain: ReadonlyArray<JsonObject>
  readonly sig: string
}
export type CheckedRevoke = Checked<RevokeMembers>

export const REVOKE_MAX_BYTES = 65536

export const revokeSpec: ObjectSpec<RevokeMembers> = {
  typ: "revoke",
  maxBytes: REVOKE_MAX_BYTES,
  members: revoke.members,
  // Step 2: `sig`, and `writ` unless it is "*".
  binaryMembers: (o) => stringMembers(o, ["sig", "writ"]).filter(([n, v]) => !(n === "writ" && v === "*")),
  // Step 5 (section 9.1 step 1): writ a hash or "*"; iss a key; chain an array of at most 8
  // objects, empty exactly when writ is "*".
  checkMembers: (o, path, cache) => {
    const at = (m: string) => (path === "" ? m : `${path}.${m}`)
    if (!has(o, "writ")) return writError("malformed", at("writ"), "writ is required")
    const writ = o.writ === "*" ? "*" : binaryValue(o.writ, at("writ"), { len: 32 })
    if (writ instanceof WritError) return writ
    const iss = memberKey(o, "iss", path, cache)
    if (iss instanceof WritError) return iss
    const chain = memberChain(o, "chain", path)
    if (chain instanceof WritError) return chain
    if ((chain.length === 0) !== (writ === "*")) {
      return writError("malformed", at("chain"), "a revoke's chain is empty exactly when writ is \"*\"")
    }
    const sig = memberSig(o, path)
    if (sig instanceof WritError) return sig
    return { writ, iss, chain, sig }
  }
}

/** A revoke that passed section 9.1, with its chain's writs (empty for a key-wide revoke). */
export interface VerifiedRevoke {
  readonly revoke: CheckedRevoke
  readonly chain: ReadonlyArray<CheckedWrit>
}

/** Section 9.1 step 1: section 6.1 steps 1 to 5 on the revoke. */
export const checkRevoke = (input: ObjectInput, path = ""): Effect.Effect<CheckedRevoke, WritError> => checkObject(revokeSpec, input, path)

/** Section 9.1, in its order (which is section 7 steps 1 to 3 for a call), as a plain function. */
export const verifyRevokeSync = (input: ObjectInput, path: string, cache: VerificationCacheSync | undefined): VerifiedRevoke | WritError => {
  // 1. Section 6.1 steps 1 to 5.
  const r = checkObjectSync(revokeSpec, input, path, cache)
  if (r instanceof WritError) return r
  const chainPath = path === "" ? "chain" : `${path}.chain`
  // 2. Every writ in chain passes section 6.1, in array order.
  const chain = verifyReceivedChainWritsSync(r.reading, r.value.chain, chainPath, cache)
  if (chain instanceof WritError) return chain
  // 3. The revoke's signature verifies under iss (`bad_signature`).
  const sig = checkSignatureSync(revokeSpec, r, r.value.iss, path, cache)
  if (sig !== undefined) return sig
  // 4. Unless writ is "*": the chain is valid (section 4); its leaf is `writ` (`chain_broken`);
  //    iss issued some writ in the chain (`no_standing`).
  if (r.value.writ !== "*") {
    const links = chainLinksFailure(chain, chainPath)
    if (links !== undefined) return links
    if (chain[chain.length - 1].id !== r.value.writ) {
      return writError("chain_broken", path === "" ? "writ" : `${path}.writ`, "the chain's leaf is not the revoked writ")
    }
    if (!chain.some((w) => w.value.iss === r.value.iss)) {
      return writError("no_standing", path === "" ? "iss" : `${path}.iss`, "iss issued no writ in the chain")
    }
  }
  return { revoke: r, chain }
}

/** Section 9.1 as an operation: one span, the cache read once. */
export const verifyRevoke: (input: ObjectInput, path?: string) => Effect.Effect<VerifiedRevoke, WritError> = Effect.fn("writ.verifyRevoke")(
  function* (input: ObjectInput, path = "") {
    return yield* result(verifyRevokeSync(input, path, yield* verificationCacheSync))
  }
)

/** Whether a revoke covers a chain (section 9.4 step 6, section 7 step 7): it names a writ in the
 * chain, or it is key-wide and a writ in the chain was issued by its `iss`. */
export const revokeCovers = (r: RevokeMembers, chain: ReadonlyArray<CheckedWrit>): boolean =>
  r.writ === "*" ? chain.some((w) => w.value.iss === r.iss) : chain.some((w) => w.id === r.writ)
