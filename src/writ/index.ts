// Writ v0.1 (spec ../shared/reference/writ/writ-v0.1.md): the public API.
//
// Reason codes    reason.ts   `WritReason` (section 11, one Schema.Literal union), `WritError`
//                             { reason, path?, message }: every check below fails with it.
// Objects         writ.ts call.ts tally.ts revoke.ts ack.ts: one Schema per object (`Writ`,
//                 `Call`, `Tally`, `Revoke`, `Ack`, plus `Unsigned*`) for the canonical wire value,
//                 and an `ObjectSpec` (section 6.1 member table) per type. wire.ts: the section 1
//                 value Schemas (`Key`, `Hash`, `Signature`, `Nonce`, `Int`) and `signedObject`,
//                 which builds each object's Unsigned and signed Schema and its member table (1.7)
//                 from one field list; bound.ts: `Bound`, `Bounds` (act required, 3.2 typed).
// Inputs          `Received(bytes)` for bytes from outside (section 1.1 applied while reading),
//                 or a parsed `Json` value already read strictly as part of a larger object.
// Section 6.1     verify.ts `checkObject` (steps 1 to 5) and `verifyObject` (+ step 6); per type
//                 `checkWrit`/`verifyWrit`, `checkCall`, `checkTally`/`verifyTallyObject`,
//                 `checkRevoke`, `checkAckObject`/`verifyAck`.
// Bounds (3)      bound.ts `checkBound`, `narrows`, `satisfies`, `prefixMatches`, `checkBounds`
//                 (3.2 reserved names), `checkArgs` (7.2: `missing_arg` then `out_of_bounds`).
// Chains (4)      chain.ts `verifyChain` (the operation; a value read, or `Received` bytes of the
//                 whole array, read once), `verifyChainWrits` (7 step 2, first
//                 half), `checkChainLinks` (7 step 3), `checkChild`, `checkDepth`, `checkExpiry`.
// Calls (5, 7)    call.ts, each a separate Effect for the executor to compose in section 7 order:
//                   step 1 `checkCall(Received)`            -> CheckedCall (unsigned error on failure)
//                   step 2 `verifyCallSignatures(call)`     -> the chain's CheckedWrits, then K.sig
//                   step 3 `checkCallChain(chain)`
//                   step 4 `checkCallExpiry(chain, now)`    (forward only)
//                   step 8 `checkForward(call, chain)`      (no_standing, forbidden_op, 7.2)
//                          `checkStanding(call, chain, ops)` (no_standing, forbidden_op)
//                 and `verifyCall` (the `verify_call` vector operation) composing them.
// Tallies (6.2)   tally.ts `verifyTallyTree` -> verdict valid / signed_unauthorized / unverifiable
//                 with the reason; `verifyTally` (fails unless valid); `checkTallyTree`.
// Revokes (9.1)   revoke.ts `verifyRevoke`, `revokeCovers`.
// Acks (9.4)      ack.ts `checkAck` (steps 1 to 7; `revoked` at step 7), `checkAckVerdict`.
// Identity (1.5)  sign.ts `signingInput` (1.4), `identity`, `writIdentity`, `callIdentity`,
//                 `tallyIdentity`, `revokeIdentity`, `ackIdentity`, `bodyHash`, `canonicalText`.
// Issuing         issue.ts with the kernel `Signer` and `RandomBytes` services: `issueRoot`,
//                 `holdChain` -> `HeldWrit`, `delegate(held, narrowing)` (section 7.5: no function
//                 signs a writ given as data), `makeCall`, `signTally` (one tally builder, `unsignedTally`),
//                 `makeRevoke`, `makeAck`.
// JWS (App. D)    jws.ts, as `Jws`: `wrap` (compact JWS signed by the object's signer) and `unwrap`
//                 (envelope rules, then section 6.1 on the object); `JwsError` with `JwsReason`.
// Approval (E)    approval.ts: `approvalPoint` (the approver), `approveAt` (the pinned writ in place
//                 of one position), `admits`; `ApprovalError` for what approval cannot lift.
// Conformance     conformance.ts `runConformance(dir)`, `runVectorText`, `formatFailure`, `summary`.
export { isWritReason, reasonCodes, writError, WritError, WritReason } from "./reason.js"
export { Hash, Int, Key, Nonce, Signature, signedObject } from "./wire.js"
export {
  applicationBounds, Bound, Bounds, type BoundType, checkArgs, checkBound, checkBounds, has, isJsonObject,
  narrows, prefixMatches, satisfies
} from "./bound.js"
export {
  ackIdentity, bodyHash, callIdentity, canonicalText, hashOf, identity, type ObjectType, revokeIdentity,
  signingInput, signObject, tallyIdentity, withoutSig, writIdentity
} from "./sign.js"
export {
  byteLength, checkObject, type ObjectInput, type ObjectSpec, readBody, Received, result, verifyObject, Within
} from "./verify.js"
export { type CheckedWrit, checkWrit, verifyWrit, Writ } from "./writ.js"
export {
  checkChainLinks, checkChild, checkDepth, checkExpiry, DEFAULT_ROOT_LIFETIME_SECONDS,
  HELD_CHAIN_BYTES_PER_UNIT, RECEIVED_CHAIN_MAX_BYTES, RootLifetime, verifyChain, verifyChainWrits
} from "./chain.js"
export {
  Call, checkCall, checkCallChain, checkCallExpiry, type CheckedCall, checkForward, checkStanding,
  type VerifiedCall, verifyCall, verifyCallSignatures
} from "./call.js"
export {
  type CheckedTally, checkTally, checkTallyTree, Tally, type TallyContext, unsignedTally, verifyTally,
  verifyTallyObject, verifyTallyTree
} from "./tally.js"
export { checkRevoke, Revoke, revokeCovers, verifyRevoke } from "./revoke.js"
export { Ack, AckBody, checkAck, checkAckObject, checkAckVerdict, verifyAck } from "./ack.js"
export {
  delegate, HeldWrit, holdChain, type Issued, issueRoot, makeAck, makeCall, makeRevoke, signTally,
  type TallyParams
} from "./issue.js"
export { formatFailure, runConformance, runVectorText, summary } from "./conformance.js"
export { type Action, admits, ApprovalError, approvalPoint, ApprovalReason, approveAt } from "./approval.js"
export * as Jws from "./jws.js"
