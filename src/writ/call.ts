// The call, spec section 5: its wire Schema, its section 6.1 member table, and the section 7
// steps a verifier can run without executor state, each a separate Effect so the executor can
// compose them in section 7's order.
import { Effect, Schema } from "effect"
import type { JsonObject } from "../kernel/json.js"
import { checkArgs, prefixMatches } from "./bound.js"
import { checkChainLinks, checkExpiry, verifyReceivedChainWrits } from "./chain.js"
import { type WritError, writError } from "./reason.js"
import {
  type Checked,
  checkObject,
  checkSignature,
  memberChain,
  memberKey,
  memberObject,
  memberRandom,
  memberSig,
  memberString,
  type ObjectInput,
  type ObjectSpec,
  stringMembers
} from "./verify.js"
import { type CheckedWrit, Writ } from "./writ.js"
import { Key, Nonce, signedObject, UnknownMember } from "./wire.js"

const call = signedObject("Call", {
  v: Schema.Literal(1),
  typ: Schema.Literal("call"),
  id: Nonce,
  chain: Schema.Array(Writ).pipe(Schema.minItems(1), Schema.maxItems(8)),
  from: Key,
  op: Schema.String,
  args: Schema.Record({ key: Schema.String, value: UnknownMember })
})
export const UnsignedCall = call.Unsigned
export type UnsignedCall = typeof UnsignedCall.Type
/** A call, section 5. */
export const Call = call.Signed
export type Call = typeof Call.Type

/** The call as section 6.1 steps 1 to 5 leave it: the chain's elements are objects not yet verified. */
export interface CallMembers {
  readonly id: string
  readonly chain: ReadonlyArray<JsonObject>
  readonly from: string
  readonly op: string
  readonly args: JsonObject
  readonly sig: string
}
export type CheckedCall = Checked<CallMembers>

export const CALL_MAX_BYTES = 65536

/** Section 8: the standing operations this protocol defines. */
export const definedStandingOps: ReadonlySet<string> = new Set(["sys/undo", "sys/tallies"])

/** Section 5: a call whose `op` begins with `sys/` is a standing call. */
export const isStandingOp = (op: string): boolean => op.startsWith("sys/")

export const callSpec: ObjectSpec<CallMembers> = {
  typ: "call",
  maxBytes: CALL_MAX_BYTES,
  members: call.members,
  // Step 2: `sig`, `id`.
  binaryMembers: (o) => stringMembers(o, ["sig", "id"]),
  // Step 5, the table of section 5 in order.
  checkMembers: (o, path) =>
    Effect.gen(function* () {
      const id = yield* memberRandom(o, "id", path)
      const chain = yield* memberChain(o, "chain", path)
      // A call's chain is not empty (section 5).
      if (chain.length === 0) return yield* Effect.fail(writError("malformed", path === "" ? "chain" : `${path}.chain`, "a call's chain is not empty"))
      const from = yield* memberKey(o, "from", path)
      const op = yield* memberString(o, "op", path)
      const args = yield* memberObject(o, "args", path)
      const sig = yield* memberSig(o, path)
      return { id, chain, from, op, args, sig }
    })
}

/** Section 7 step 1: the call passes section 6.1 steps 1 to 5 (no signature yet). Returns the
 * parsed call. Failures here are answered unsigned. */
export const checkCall = (input: ObjectInput, path = ""): Effect.Effect<CheckedCall, WritError> => checkObject(callSpec, input, path)

/** Section 7 step 2: every writ in the chain passes section 6.1, in array order; then the call's
 * signature verifies under `from`. Failures here are answered unsigned. */
export const verifyCallSignatures = (call: CheckedCall, path = ""): Effect.Effect<ReadonlyArray<CheckedWrit>, WritError> =>
  Effect.flatMap(verifyReceivedChainWrits(call.reading, call.value.chain, path === "" ? "chain" : `${path}.chain`), (writs) =>
    Effect.as(checkSignature(callSpec, call, call.value.from, path), writs))

/** Section 7 step 3: the rest of section 4's chain verification. */
export const checkCallChain = (chain: ReadonlyArray<CheckedWrit>): Effect.Effect<void, WritError> => checkChainLinks(chain)

/** Section 7 step 4 (forward calls only; the caller skips it for a standing call): every writ's
 * `exp` is after `now` (`expired`). */
export const checkCallExpiry = (chain: ReadonlyArray<CheckedWrit>, now: number): Effect.Effect<void, WritError> => checkExpiry(chain, now)

/** Section 7 step 8, forward call: `from` is the leaf `iss` (`no_standing`); `op` does not begin
 * with `sys/` and is matched by the leaf `act` (`forbidden_op`); then section 7.2
 * (`missing_arg`, then `out_of_bounds`). */
export const checkForward = (call: CheckedCall, chain: ReadonlyArray<CheckedWrit>): Effect.Effect<void, WritError> =>
  Effect.suspend(() => {
    const leaf = chain[chain.length - 1].value
    const { from, op, args } = call.value
    if (from !== leaf.iss) return Effect.fail(writError("no_standing", "from", "a forward call is signed by the leaf issuer"))
    if (isStandingOp(op) || !prefixMatches(leaf.bnd.act.v as string, op)) {
      return Effect.fail(writError("forbidden_op", "op", `op ${JSON.stringify(op)} is not matched by the leaf act`))
    }
    return checkArgs(leaf.bnd, args)
  })

/** Section 7 step 8, standing call: `from` is the `iss` of some writ in the chain (`no_standing`);
 * then `op` is one of `definedOps`, the section 8 operations (`forbidden_op`). */
export const checkStanding = (
  call: CheckedCall,
  chain: ReadonlyArray<CheckedWrit>,
  definedOps: ReadonlySet<string> = definedStandingOps
): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    const { from, op } = call.value
    if (!chain.some((w) => w.value.iss === from)) return yield* Effect.fail(writError("no_standing", "from", "from issued no writ in the chain"))
    if (!definedOps.has(op)) return yield* Effect.fail(writError("forbidden_op", "op", `${op} is not a defined standing operation`))
  })

/** A call that passed everything a verifier without executor state checks (`verify_call`, section 14). */
export interface VerifiedCall {
  readonly call: CheckedCall
  readonly chain: ReadonlyArray<CheckedWrit>
}

/** The `verify_call` operation (section 14): section 7 steps 1 to 3, expiry at `now` when given and
 * the call is forward, then section 5's forward or standing rules in order. */
export const verifyCall: (input: ObjectInput, options?: { readonly now?: number }) => Effect.Effect<VerifiedCall, WritError> = Effect.fn(
  "writ.verifyCall"
)(function* (input: ObjectInput, options: { readonly now?: number } = {}) {
  // Section 7 step 1: section 6.1 steps 1 to 5 on the call.
  const call = yield* checkCall(input)
  yield* Effect.annotateCurrentSpan({ "writ.call": call.id, "writ.op": call.value.op })
  // Step 2: the chain's writs, then the call's signature.
  const chain = yield* verifyCallSignatures(call)
  const leaf = chain[chain.length - 1].id
  yield* Effect.annotateCurrentSpan({ "writ.leaf": leaf })
  // Steps 3 on. (None of them writes a log line, so none is annotated: an annotation scope per
  // call cost more than these steps do.)
  // Step 3: the rest of the chain verification.
  yield* checkCallChain(chain)
  if (isStandingOp(call.value.op)) {
    // Standing: expiry is not checked; `no_standing`, then `forbidden_op`.
    yield* checkStanding(call, chain)
  } else {
    // Forward: step 4 expiry, then `no_standing`, `forbidden_op`, `missing_arg`, `out_of_bounds`.
    if (options.now !== undefined) yield* checkCallExpiry(chain, options.now)
    yield* checkForward(call, chain)
  }
  return { call, chain }
})

