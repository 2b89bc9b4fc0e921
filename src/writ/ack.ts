// The ack, spec section 9.4: its wire Schema, its section 6.1 member table, and the check of a
// tally against an executor's ack of a revoke.
import { Effect, Either, Schema } from "effect"
import type { Json } from "../kernel/json.js"
import { has, isJsonObject } from "./bound.js"
import { isStandingOp } from "./call.js"
import { type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"
import { verifyChainSync } from "./chain.js"
import { WritError, writError } from "./reason.js"
import { revokeCovers, verifyRevokeSync } from "./revoke.js"
import { hashOf } from "./sign.js"
import { verifyTallyObjectSync } from "./tally.js"
import {
  type Checked,
  checkObject,
  memberHash,
  memberInteger,
  memberKey,
  memberSig,
  type ObjectInput,
  type ObjectSpec,
  stringMembers,
  verifyObject,
  verifyObjectSync,
  type BodyInput,
  readBodySync,
  result
} from "./verify.js"
import { Hash, Int, Key, signedObject } from "./wire.js"

const ack = signedObject("Ack", {
  v: Schema.Literal(1),
  typ: Schema.Literal("ack"),
  revoke: Hash,
  iss: Key,
  rcv: Int,
  out: Hash
})
export const UnsignedAck = ack.Unsigned
export type UnsignedAck = typeof UnsignedAck.Type
/** An ack, section 9.4. */
export const Ack = ack.Signed
export type Ack = typeof Ack.Type

/** The ack's body, `{"held": [{"call", "tally"}...], "open": [<call identity>...]}`. */
export const AckBody = Schema.Struct({
  held: Schema.Array(Schema.Struct({ call: Hash, tally: Hash })),
  open: Schema.Array(Hash)
}).pipe(Schema.annotations({ identifier: "AckBody" }))
export type AckBody = typeof AckBody.Type

export interface AckMembers {
  readonly revoke: string
  readonly iss: string
  readonly rcv: number
  readonly out: string
  readonly sig: string
}
export type CheckedAck = Checked<AckMembers>

export const ACK_MAX_BYTES = 4096

export const ackSpec: ObjectSpec<AckMembers> = {
  typ: "ack",
  maxBytes: ACK_MAX_BYTES,
  members: ack.members,
  // Step 2: `sig`, `revoke`, `out`.
  binaryMembers: (o) => stringMembers(o, ["sig", "revoke", "out"]),
  // Step 5, the table of section 9.4 in order.
  checkMembers: (o, path, cache) => {
    const revoke = memberHash(o, "revoke", path)
    if (revoke instanceof WritError) return revoke
    const iss = memberKey(o, "iss", path, cache)
    if (iss instanceof WritError) return iss
    const rcv = memberInteger(o, "rcv", path)
    if (rcv instanceof WritError) return rcv
    const out = memberHash(o, "out", path)
    if (out instanceof WritError) return out
    const sig = memberSig(o, path)
    if (sig instanceof WritError) return sig
    return { revoke, iss, rcv, out, sig }
  }
}

/** Section 6.1 steps 1 to 5 on an ack. */
export const checkAckObject = (input: ObjectInput, path = ""): Effect.Effect<CheckedAck, WritError> => checkObject(ackSpec, input, path)

/** Section 6.1 on an ack, signed by its `iss`. */
export const verifyAck = (input: ObjectInput, path = ""): Effect.Effect<CheckedAck, WritError> =>
  verifyObject(ackSpec, input, (a) => a.iss, path)

/** What `checkAck` concluded: the ack says nothing about the tally, or accounts for it. */
export type AckOutcome = "silent" | "accounted"

/** Section 9.4, steps 1 to 7: check tally `tally` (answering a call under `chain`, root to the
 * tally's writ) against ack `ack` with body `body` of revoke `revoke`. A failure at step 7 is
 * `revoked`: the tally is `signed_unauthorized` (its signer's two statements contradict). */
export const checkAck: (input: CheckAckInput) => Effect.Effect<AckOutcome, WritError> = Effect.fn("writ.checkAck")(function* (input: CheckAckInput) {
  // The steps as plain code, the cache read once.
  return yield* result(checkAckSteps(input, yield* verificationCacheSync))
})

/** What section 9.4 checks a tally against. */
export interface CheckAckInput {
  readonly revoke: ObjectInput
  readonly ack: ObjectInput
  /** The ack body; absent when the verifier holds none. */
  readonly body?: BodyInput | undefined
  readonly chain: unknown
  readonly tally: ObjectInput
}

const checkAckSteps = (input: {
  readonly revoke: ObjectInput
  readonly ack: ObjectInput
  /** The ack body; absent when the verifier holds none. */
  readonly body?: BodyInput | undefined
  readonly chain: unknown
  readonly tally: ObjectInput
}, cache: VerificationCacheSync | undefined): AckOutcome | WritError => {
  // 1. R passes section 9.1.
  const verified = verifyRevokeSync(input.revoke, "revoke", cache)
  if (verified instanceof WritError) return verified
  const R = verified.revoke
  // 2. A passes section 6.1 with signer A.iss.
  const A = verifyObjectSync(ackSpec, input.ack, (a) => a.iss, "ack", cache)
  if (A instanceof WritError) return A
  // 3. A.revoke is R's identity (`ack_mismatch`).
  if (A.value.revoke !== R.id) return writError("ack_mismatch", "ack.revoke", "the ack names another revoke")
  // 4. A.out is the hash of B's canonical form (`ack_mismatch`); B is an object whose held and
  //    open are arrays (`malformed`).
  //    B is read strictly first (section 1.1): a body that breaks it is `noncanonical` at `res`.
  const B = input.body === undefined ? undefined : readBodySync(input.body, "res")
  if (B instanceof WritError) return B
  if (B === undefined || A.value.out !== hashOf(B)) {
    return writError("ack_mismatch", "ack.out", "the ack body does not hash to out")
  }
  if (!isJsonObject(B) || !Array.isArray(B.held) || !Array.isArray(B.open)) {
    return writError("malformed", "res", "an ack body has arrays held and open")
  }
  // 5. C passes chain verification; T passes section 6.1 signed by the hld of C's last writ;
  //    T.writ is that writ's identity (`tally_mismatch`).
  const C = verifyChainSync(input.chain, "chain", cache)
  if (C instanceof WritError) return C
  const leaf = C[C.length - 1]
  const T = verifyTallyObjectSync(input.tally, leaf.value.hld, "tally", cache)
  if (T instanceof WritError) return T
  if (T.value.writ !== leaf.id) return writError("tally_mismatch", "tally.writ", "the tally names another writ")
  // 6. The ack says nothing about T unless all of these hold.
  const t = T.value
  const reportsWork =
    t.st === "ok" || t.st === "pending" || t.st === "canceled" ||
    Object.values(t.used).some((n) => n > 0) || t.sub.length > 0 || t.wrt.length > 0
  const applies =
    A.value.iss === leaf.value.hld &&
    !isStandingOp(t.op) &&
    reportsWork &&
    revokeCovers(R.value, C) &&
    leaf.value.exp > A.value.rcv
  if (!applies) return "silent" as const
  // 7. T is accounted for: in open; or held with its own identity; or pending and its call held.
  const held = B.held as ReadonlyArray<Json>
  const heldCall = (e: Json): boolean => isJsonObject(e) && e.call === t.call
  const accounted =
    (B.open as ReadonlyArray<Json>).some((c) => c === t.call) ||
    held.some((e) => heldCall(e) && isJsonObject(e) && has(e, "tally") && e.tally === T.id) ||
    (t.st === "pending" && held.some(heldCall))
  if (!accounted) return writError("revoked", "tally", "the tally reports work its signer's ack does not account for")
  return "accounted" as const
}

/** `checkAck` as a verdict on the tally (section 9.4): `signed_unauthorized` only for step 7. */
export const checkAckVerdict = (input: Parameters<typeof checkAck>[0]) =>
  Effect.map(Effect.either(checkAck(input)), (r) =>
    Either.isRight(r) ? { verdict: "valid" as const, outcome: r.right } : { verdict: r.left.reason === "revoked" ? ("signed_unauthorized" as const) : ("unverifiable" as const), error: r.left }
  )
