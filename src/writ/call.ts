// The call, spec section 5: its wire Schema, its section 6.1 member table, and the section 7
// steps a verifier can run without executor state, each a separate Effect so the executor can
// compose them in section 7's order, and each a plain function so `verifyCall` runs them all
// inside one Effect.
import { Context, Effect, Either, Option, Schema } from "effect"
import type { JsonObject } from "../kernel/json.js"
import { VerificationCache, type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"
import { argsFailure, prefixMatches } from "./bound.js"
import { chainLinksFailure, checkChainLinks, checkExpiry, expiryFailure, heldChainTake, RootLifetime, verifyReceivedChainWritsSync } from "./chain.js"
import { WritError, writError } from "./reason.js"
import {
  type Checked,
  checkObject,
  checkObjectSync,
  checkSignatureSync,
  memberChain,
  memberKey,
  memberObject,
  memberRandom,
  memberSig,
  memberString,
  type ObjectInput,
  type ObjectSpec,
  result,
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
  checkMembers: (o, path, cache) => {
    const id = memberRandom(o, "id", path)
    if (id instanceof WritError) return id
    const chain = memberChain(o, "chain", path)
    if (chain instanceof WritError) return chain
    // A call's chain is not empty (section 5).
    if (chain.length === 0) return writError("malformed", path === "" ? "chain" : `${path}.chain`, "a call's chain is not empty")
    const from = memberKey(o, "from", path, cache)
    if (from instanceof WritError) return from
    const op = memberString(o, "op", path)
    if (op instanceof WritError) return op
    const args = memberObject(o, "args", path)
    if (args instanceof WritError) return args
    const sig = memberSig(o, path)
    if (sig instanceof WritError) return sig
    return { id, chain, from, op, args, sig }
  },
  // A chain the cache holds is taken by its hash, not read again (chain.ts, `heldChainTake`).
  take: heldChainTake
}

/** Section 7 step 1: the call passes section 6.1 steps 1 to 5 (no signature yet). Returns the
 * parsed call. Failures here are answered unsigned. */
export const checkCall = (input: ObjectInput, path = ""): Effect.Effect<CheckedCall, WritError> => checkObject(callSpec, input, path)

/** Section 7 step 2: every writ in the chain passes section 6.1, in array order; then the call's
 * signature verifies under `from`. Failures here are answered unsigned. */
export const verifyCallSignaturesSync = (
  call: CheckedCall,
  path: string,
  cache: VerificationCacheSync | undefined
): ReadonlyArray<CheckedWrit> | WritError => {
  const writs = verifyReceivedChainWritsSync(call.reading, call.value.chain, path === "" ? "chain" : `${path}.chain`, cache)
  if (writs instanceof WritError) return writs
  return checkSignatureSync(callSpec, call, call.value.from, path, cache) ?? writs
}

export const verifyCallSignatures = (call: CheckedCall, path = ""): Effect.Effect<ReadonlyArray<CheckedWrit>, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => result(verifyCallSignaturesSync(call, path, cache)))

/** Section 7 step 3: the rest of section 4's chain verification. */
export const checkCallChain = (chain: ReadonlyArray<CheckedWrit>): Effect.Effect<void, WritError> => checkChainLinks(chain)

/** Section 7 step 4 (forward calls only; the caller skips it for a standing call): every writ's
 * `exp` is after `now` (`expired`). */
export const checkCallExpiry = (chain: ReadonlyArray<CheckedWrit>, now: number): Effect.Effect<void, WritError> => checkExpiry(chain, now)

/** Section 7 step 8, forward call: `from` is the leaf `iss` (`no_standing`); `op` does not begin
 * with `sys/` and is matched by the leaf `act` (`forbidden_op`); then section 7.2
 * (`missing_arg`, then `out_of_bounds`). */
export const forwardFailure = (call: CheckedCall, chain: ReadonlyArray<CheckedWrit>): WritError | undefined => {
  const leaf = chain[chain.length - 1].value
  const { from, op, args } = call.value
  if (from !== leaf.iss) return writError("no_standing", "from", "a forward call is signed by the leaf issuer")
  if (isStandingOp(op) || !prefixMatches(leaf.bnd.act.v as string, op)) {
    return writError("forbidden_op", "op", `op ${JSON.stringify(op)} is not matched by the leaf act`)
  }
  return argsFailure(leaf.bnd, args)
}

export const checkForward = (call: CheckedCall, chain: ReadonlyArray<CheckedWrit>): Effect.Effect<void, WritError> =>
  Effect.suspend(() => result(forwardFailure(call, chain)))

/** Section 7 step 8, standing call: `from` is the `iss` of some writ in the chain (`no_standing`);
 * then `op` is one of `definedOps`, the section 8 operations (`forbidden_op`). */
export const standingFailure = (
  call: CheckedCall,
  chain: ReadonlyArray<CheckedWrit>,
  definedOps: ReadonlySet<string> = definedStandingOps
): WritError | undefined => {
  const { from, op } = call.value
  if (!chain.some((w) => w.value.iss === from)) return writError("no_standing", "from", "from issued no writ in the chain")
  if (!definedOps.has(op)) return writError("forbidden_op", "op", `${op} is not a defined standing operation`)
  return undefined
}

export const checkStanding = (
  call: CheckedCall,
  chain: ReadonlyArray<CheckedWrit>,
  definedOps: ReadonlySet<string> = definedStandingOps
): Effect.Effect<void, WritError> => Effect.suspend(() => result(standingFailure(call, chain, definedOps)))

/** A call that passed everything a verifier without executor state checks (`verify_call`, section 14). */
export interface VerifiedCall {
  readonly call: CheckedCall
  readonly chain: ReadonlyArray<CheckedWrit>
}

/** Section 7 steps 2 on, after step 1: what `verifyCall` runs as plain code. */
const afterStepOne = (
  call: CheckedCall,
  now: number | undefined,
  maxSeconds: number | null,
  cache: VerificationCacheSync | undefined
): ReadonlyArray<CheckedWrit> | WritError => {
  // Step 2: the chain's writs, then the call's signature.
  const chain = verifyCallSignaturesSync(call, "", cache)
  if (chain instanceof WritError) return chain
  // Step 3: the rest of the chain verification.
  const failure =
    chainLinksFailure(chain) ??
    (isStandingOp(call.value.op)
      ? // Standing: expiry is not checked; `no_standing`, then `forbidden_op`.
        standingFailure(call, chain)
      : // Forward: step 4 expiry, then `no_standing`, `forbidden_op`, `missing_arg`, `out_of_bounds`.
        (now === undefined ? undefined : expiryFailure(chain, now, maxSeconds)) ?? forwardFailure(call, chain))
  return failure ?? chain
}

/** What the `verify_call` core reads from its context: the cache (when the verifier has one) and
 * section 12's root lifetime. */
export interface VerifyCallContext {
  readonly now?: number
  readonly maxSeconds: number | null
  readonly cache: VerificationCacheSync | undefined
}

/** Section 7 steps 1 on, as plain code: the call as step 1 left it (when it passed) and the chain
 * or the first failure. The core and the Effect share it, so they cannot drift apart. */
const verifySteps = (
  input: ObjectInput,
  context: VerifyCallContext
): { readonly call: CheckedCall | undefined; readonly chain: ReadonlyArray<CheckedWrit> | WritError } => {
  // Section 7 step 1: section 6.1 steps 1 to 5 on the call.
  const call = checkObjectSync(callSpec, input, "", context.cache)
  if (call instanceof WritError) return { call: undefined, chain: call }
  return { call, chain: afterStepOne(call, context.now, context.maxSeconds, context.cache) }
}

/** Where section 7 steps 1 to 3 stopped: the step (1 and 2 are answered unsigned, 3 is signed),
 * the failure and, past step 1, the call as step 1 left it (past step 2, the verified writs). */
export type CallStepFailure =
  | { readonly step: 1; readonly error: WritError }
  | { readonly step: 2; readonly call: CheckedCall; readonly error: WritError }
  | { readonly step: 3; readonly call: CheckedCall; readonly chain: ReadonlyArray<CheckedWrit>; readonly error: WritError }

/** Section 7 steps 1 to 3 as a sans-IO core, for an executor that runs steps 4 to 10 itself in
 * section 7's order (the live checks and step 8 sit between them, so `verifyCallEither`, which
 * runs step 8 right after step 4, cannot serve it). The same plain steps as `verifyCallEither`'s. */
export const verifyCallStepsEither = (
  input: ObjectInput,
  cache: VerificationCacheSync | undefined
): Either.Either<VerifiedCall, CallStepFailure> => {
  const call = checkObjectSync(callSpec, input, "", cache)
  if (call instanceof WritError) return Either.left({ step: 1, error: call })
  const chain = verifyCallSignaturesSync(call, "", cache)
  if (chain instanceof WritError) return Either.left({ step: 2, call, error: chain })
  const links = chainLinksFailure(chain)
  return links === undefined ? Either.right({ call, chain }) : Either.left({ step: 3, call, chain, error: links })
}

/** The `verify_call` operation (section 14) as a sans-IO core: a plain function from the received
 * call and what the context holds to the verified call or the first failure, in section 7's order.
 * No fiber, no span: an Either is an Effect, so a caller inside `Effect.gen` may yield it, and the
 * hot path calls it as code (issue 30). `verifyCall` runs the same steps inside its one span. */
export const verifyCallEither = (input: ObjectInput, context: VerifyCallContext): Either.Either<VerifiedCall, WritError> => {
  const { call, chain } = verifySteps(input, context)
  return chain instanceof WritError ? Either.left(chain) : Either.right({ call: call!, chain })
}

/** The `verify_call` operation (section 14): section 7 steps 1 to 3, expiry at `now` when given and
 * the call is forward, then section 5's forward or standing rules in order. The services are read
 * once and the steps run as plain code (`verifySteps`, the core's): one span and a handful of
 * Effect operations a call. */
export const verifyCall: (input: ObjectInput, options?: { readonly now?: number }) => Effect.Effect<VerifiedCall, WritError> = Effect.fn(
  "writ.verifyCall"
)(function* (input: ObjectInput, options: { readonly now?: number } = {}) {
  // Both services in one read of the context.
  const context = yield* Effect.context<never>()
  const cache = Option.getOrUndefined(Context.getOption(context, VerificationCache))?.sync
  const { maxSeconds } = Context.get(context, RootLifetime)
  const { call, chain } = verifySteps(input, { now: options.now, maxSeconds, cache })
  if (call === undefined) return yield* Effect.fail(chain as WritError)
  // One annotation for the span (an annotation per step cost more than the steps do); the leaf
  // is known once step 2 passed.
  const leaf = chain instanceof WritError ? undefined : chain[chain.length - 1].id
  yield* Effect.annotateCurrentSpan(leaf === undefined ? { "writ.call": call.id, "writ.op": call.value.op } : { "writ.call": call.id, "writ.op": call.value.op, "writ.leaf": leaf })
  if (chain instanceof WritError) return yield* Effect.fail(chain)
  return { call, chain }
})
