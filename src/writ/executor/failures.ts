// The executor's two failures, as section 7 sorts them (its first paragraph). Every check fails
// with one of these in the error channel; the edges (admission.ts, sys-undo.ts, revocation.ts)
// turn them into answers with `catchTags`, in one place each.
import { Effect, Schema } from "effect"
import { Stackless } from "../../kernel/stackless.js"
import { WritReason, type WritError } from "../reason.js"
import { ExecutorCode, STORE_UNAVAILABLE } from "./services.js"
import { storeError } from "../../accounting/store-error.js"
import type { StoreError } from "./stores.js"

/**
 * Answered with an unsigned error and recorded nowhere but the audit record: section 7 steps 1 and
 * 2 (no signed statement can bind the executor before the call's signature verified), and an
 * invalid revoke (9.1).
 */
export class UnsignedError extends Stackless(Schema.TaggedError<UnsignedError>()("UnsignedError", {
  reason: WritReason,
  /** Once step 1 passed: the object's identity, `from` and `op`, for the audit record (9.3). */
  identity: Schema.optional(Schema.String),
  principal: Schema.optional(Schema.String),
  op: Schema.optional(Schema.String)
})) {}

/**
 * Answered with a signed `failed` tally whose `err.code` is `reason`: a refusal at section 7
 * steps 3 to 10 (returned, never stored), or a failed check of the operation itself at step 11
 * (sections 8.1, 8.2: an outcome, signed and stored).
 */
export class SignedRefusal extends Stackless(Schema.TaggedError<SignedRefusal>()("SignedRefusal", {
  reason: ExecutorCode
})) {}

/** A verifier failure as a refusal with its reason code. */
export const refusalOf = (e: WritError): SignedRefusal => new SignedRefusal({ reason: e.reason })

export const refuse = (reason: ExecutorCode): Effect.Effect<never, SignedRefusal> =>
  Effect.fail(new SignedRefusal({ reason }))

/** A store that could not be read or written: refused with the executor's code (section 9), and logged. */
export const refuseUnavailable = (e: StoreError): Effect.Effect<never, SignedRefusal> =>
  Effect.zipRight(
    Effect.logWarning(`store unavailable (${e.operation}): ${e.message}`),
    refuse(STORE_UNAVAILABLE)
  )

/**
 * A store step whose defects count as failed writes: section 9's rules (refuse, answer pending,
 * honor an unsaved revoke) must hold even when a driver dies instead of failing, as a failed
 * COMMIT can. Interruption is left alone.
 */
export const storeStep = (operation: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
  Effect.catchAllDefect(self, (defect) => Effect.fail(storeError(operation)(defect)))
