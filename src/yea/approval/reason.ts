// The approval contract's outcome codes (SPEC-approval §2–§7 and conformance/approval.json), defined
// once. Each check is an Effect that succeeds with what may run and fails with one of the tagged
// errors below; every error carries its `code` (one of `ApprovalCode`) and the reason text `why`
// that the contract's vectors pin, so an MCP front end answers with `catchTags`, never by parsing.
import { Schema } from "effect"
import { Stackless } from "../../kernel/stackless.js"

/** Every outcome of the contract that is not "run": the decision, the judged answer, undo, input. */
export const ApprovalCode = Schema.Literal(
  "denied", // §2 `deny`: the tool never runs, whatever is approved
  "ask", // §2: outside the signed policy, so the person is asked
  "out-of-band", // §3: at or above `outOfBand`, approval only outside the chat (`yea approve`)
  "not-approved", // §5 step 2: declined, cancelled or missing answer
  "ask-again", // §5 steps 2–3: wrong phrase, or the plans changed (another round)
  "refused", // §5: the call is refused (bad state, replay, unoffered plan, rounds used up)
  "consent-invalid", // §6: a stored consent that is not this plan's
  "undo-refused", // §7: undo outside its window, for another principal, twice, or never undoable
  "invalid-input", // §1: an input with no plan hash (a non-integer number)
  "invalid-phrase", // §3: a phrase the person could not type
  "store-unavailable" // §8: the store failed; fail closed
)
export type ApprovalCode = typeof ApprovalCode.Type

/** §2: the policy refuses the tool outright. */
export class Denied extends Stackless(Schema.TaggedError<Denied>()("Denied", {
  code: Schema.Literal("denied"),
  why: Schema.String
})) {}

/** §2–§3: a plan the policy does not let run on its own: ask the person (in the chat). */
export class NeedsApproval extends Stackless(Schema.TaggedError<NeedsApproval>()("NeedsApproval", {
  code: Schema.Literal("ask"),
  why: Schema.String
})) {}

/** §3: a plan that may only be approved outside the chat. `plan` is set when one plan is meant. */
export class OutOfBand extends Stackless(Schema.TaggedError<OutOfBand>()("OutOfBand", {
  code: Schema.Literal("out-of-band"),
  why: Schema.String,
  plan: Schema.optional(Schema.String)
})) {}

/** §5 step 2: the person declined or cancelled. */
export class NotApproved extends Stackless(Schema.TaggedError<NotApproved>()("NotApproved", {
  code: Schema.Literal("not-approved"),
  why: Schema.String
})) {}

/** §5: ask again, in round `round` (at most 3). */
export class AskAgain extends Stackless(Schema.TaggedError<AskAgain>()("AskAgain", {
  code: Schema.Literal("ask-again"),
  why: Schema.String,
  round: Schema.Int
})) {}

/** §5: the call is refused and nothing runs. */
export class Refused extends Stackless(Schema.TaggedError<Refused>()("Refused", {
  code: Schema.Literal("refused"),
  why: Schema.String
})) {}

/** §6: a stored consent grant that does not approve this plan. */
export class ConsentInvalid extends Stackless(Schema.TaggedError<ConsentInvalid>()("ConsentInvalid", {
  code: Schema.Literal("consent-invalid"),
  why: Schema.String
})) {}

/** §7: undo refused. */
export class UndoRefused extends Stackless(Schema.TaggedError<UndoRefused>()("UndoRefused", {
  code: Schema.Literal("undo-refused"),
  why: Schema.String
})) {}

/** §1: the input has no canonical form here (non-integer numbers), so nothing can be bound to it. */
export class InvalidInput extends Stackless(Schema.TaggedError<InvalidInput>()("InvalidInput", {
  code: Schema.Literal("invalid-input"),
  why: Schema.String
})) {}

/** §3: a phrase that is not typeable (control, format or zero-width characters). */
export class InvalidPhrase extends Stackless(Schema.TaggedError<InvalidPhrase>()("InvalidPhrase", {
  code: Schema.Literal("invalid-phrase"),
  why: Schema.String
})) {}

/** §8: the approval store failed. Every caller fails closed on it. */
export class ApprovalStoreError extends Schema.TaggedError<ApprovalStoreError>()("ApprovalStoreError", {
  code: Schema.Literal("store-unavailable"),
  why: Schema.String
}) {}

export const denied = (why: string) => new Denied({ code: "denied", why })
export const needsApproval = (why: string) => new NeedsApproval({ code: "ask", why })
export const outOfBand = (why: string, plan?: string) =>
  new OutOfBand(plan === undefined ? { code: "out-of-band", why } : { code: "out-of-band", why, plan })
export const notApproved = (why = "not approved") => new NotApproved({ code: "not-approved", why })
export const askAgain = (why: string, round: number) => new AskAgain({ code: "ask-again", why, round })
export const refused = (why: string) => new Refused({ code: "refused", why })
export const consentInvalid = (why: string) => new ConsentInvalid({ code: "consent-invalid", why })
export const undoRefused = (why: string) => new UndoRefused({ code: "undo-refused", why })
export const invalidInput = (why: string) => new InvalidInput({ code: "invalid-input", why })
export const invalidPhrase = (why: string) => new InvalidPhrase({ code: "invalid-phrase", why })
export const storeUnavailable = (why: string) => new ApprovalStoreError({ code: "store-unavailable", why })

/** Any failure of the contract's checks. */
export type ApprovalFailure =
  | Denied
  | NeedsApproval
  | OutOfBand
  | NotApproved
  | AskAgain
  | Refused
  | ConsentInvalid
  | UndoRefused
  | InvalidInput
  | InvalidPhrase
  | ApprovalStoreError
