// Writ v0.1 reason codes (spec section 11), defined once. Every check in src/writ fails with a
// `WritError` whose `reason` is one of these literals, so callers switch on data, not on text.
import { Schema } from "effect"
import { Stackless } from "../kernel/stackless.js"

/** Every code of section 11, in the table's order. `pending` is not a rejection: it is the
 * `err.code` of a pending tally (section 6), listed here so that `err.code` values share the union. */
export const reasonCodes = [
  "too_large",
  "noncanonical",
  "unsupported_version",
  "wrong_type",
  "unsupported_critical",
  "malformed",
  "bad_key",
  "bad_signature",
  "chain_broken",
  "not_narrowed",
  "unknown_bound",
  "expired",
  "root_not_accepted",
  "wrong_executor",
  "peer_mismatch",
  "revoked",
  "no_standing",
  "forbidden_op",
  "missing_arg",
  "out_of_bounds",
  "count_exhausted",
  "total_exhausted",
  "tally_mismatch",
  "sub_unmatched",
  "ack_mismatch",
  "not_reversible",
  "undeliverable",
  "unknown_outcome",
  "pending"
] as const

/** The one union of Writ reason codes. */
export const WritReason = Schema.Literal(...reasonCodes)
export type WritReason = typeof WritReason.Type

/** Whether a string is a section 11 code (application codes, section 11 last paragraph, are not). */
export const isWritReason = (s: unknown): s is WritReason =>
  typeof s === "string" && (reasonCodes as ReadonlyArray<string>).includes(s)

/** A failed Writ check. `path` names the member that failed, e.g. `chain[1].bnd.amount`. */
export class WritError extends Stackless(Schema.TaggedError<WritError>()("WritError", {
  reason: WritReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
})) {}

/** Shorthand used by every check: `fail("malformed", "bnd.act", "act is required")`. */
export const writError = (reason: WritReason, path: string | undefined, message: string): WritError =>
  path === undefined ? new WritError({ reason, message }) : new WritError({ reason, path, message })
