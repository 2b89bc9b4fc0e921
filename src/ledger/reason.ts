// The decision ledger's reason codes, defined once (a closed, documented
// union; seed "Stable reason codes support analytics without forcing integrations to parse
// human-readable strings"). A decision, a settlement and every typed failure of src/ledger carries
// one of these; nothing else in the ledger names a reason.
import { Schema } from "effect"

export const LedgerReason = Schema.Literal(
  // --- decisions (what a policy recommended, and why) ---
  "allowed", //                        every policy allowed the action
  "token_budget_exhausted", //         the hard token budget (Cost.tokens) would be exceeded
  "usd_budget_exhausted", //           the USD budget would be exceeded
  "kind_limit_reached", //             the per-kind limit of actions is used up
  "duplicate_action", //               a semantic duplicate completed (or is in flight) in the scope
  "verification_reserve_protected", // only `verify` actions may draw on the verification reserve
  "value_below_cost", //               the value estimate does not cover the estimated cost
  "directive_issued", //               a policy issued a directive other than allow/deny
  "model_not_allowed", //              an llm_call for a model its key's allow list does not name (the gateway)
  "price_unknown", //                  an llm_call whose model has no known price: never let through at cost zero
  "call_ceiling_exceeded", //          an llm_call whose worst-case cost is above its key's per-call ceiling
  // --- settlements (what became of a reservation) ---
  "committed", //                      the action ran; its actual usage replaced the reservation
  "released_on_abort", //              aborted with no external spend: everything given back
  "failure_settled", //                failed: measured or conservatively estimated spend kept
  "recovered_after_crash", //          a reservation left held by a dead process, settled on restart
  "budget_overrun", //                 the action ran and its actual usage, charged in full, went past the
  //                                   budget: the excess is the settlement's overrun, the budget is exhausted
  "actual_capped_at_estimate", //      written by earlier versions only (actual capped at the estimate); read, never written
  // --- typed failures of the ledger's own checks ---
  "non_json_metadata", //              fingerprint metadata that is not plain JSON (seed: no repr)
  "invalid_action", //                 an Action, Cost or TokenUsage that does not decode
  "invalid_usd", //                    not an exact decimal with at most 9 places
  "token_usage_not_additive", //       TokenUsage.total is not the sum of its parts
  "outcome_task_mismatch", //          Outcome.task_id differs from the declared context
  "enforce_requires_blocking", //      enforce asked of an adapter that did not block a canary
  "invalid_policy", //                 a policy file that does not decode
  "invalid_event", //                  a ledger line that does not decode
  "line_too_long", //                  a ledger line over the reader's bound
  "chain_broken", //                   a line's `prev` is not the hash of the line before it
  "sequence_gap", //                   a line's `seq` is not one more than the previous
  "head_mismatch", //                  the ledger ends before the head recorded in its store
  "unsupported_version", //            a schema version this reader does not know
  "mode_mismatch", //                  an operation the ledger's declared mode forbids
  "ledger_exists", //                  init over an existing ledger
  // --- the safe_telemetry pseudonym key, kept outside the ledger (privacy.ts) ---
  "key_missing", //                    a safe_telemetry ledger opened without its key (none is made up)
  "key_mismatch", //                   a key that is not the one the ledger's pseudonyms were made with
  "key_invalid", //                    a key file or secret that is not 32 bytes (64 hex digits), or readable by others
  "file_missing", //                   a named input file (events, export) that does not exist
  "invalid_argument", //               a command's arguments that do not say what to do (e.g. recover with no scope)
  "ledger_missing" //                  a ledger that was never initialised
)
export type LedgerReason = typeof LedgerReason.Type

/** The reasons a Decision may carry. */
export const DecisionReason = LedgerReason.pipe(Schema.pickLiteral(
  "allowed",
  "token_budget_exhausted",
  "usd_budget_exhausted",
  "kind_limit_reached",
  "duplicate_action",
  "verification_reserve_protected",
  "value_below_cost",
  "directive_issued",
  "model_not_allowed",
  "price_unknown",
  "call_ceiling_exceeded",
  // An action whose description does not decode: shadow and recommend record it as a would-refuse
  // with one of these, and run it; enforce refuses it with the same code (guard.ts).
  "invalid_action",
  "non_json_metadata",
  "invalid_usd",
  "token_usage_not_additive"
))
export type DecisionReason = typeof DecisionReason.Type

/** The reasons a settlement may carry. */
export const SettlementReason = LedgerReason.pipe(Schema.pickLiteral(
  "committed",
  "released_on_abort",
  "failure_settled",
  "recovered_after_crash",
  "budget_overrun",
  "actual_capped_at_estimate"
))
export type SettlementReason = typeof SettlementReason.Type

/** Every failure of the ledger's own checks: `reason` says which, `detail` is for people only. */
export class LedgerError extends Schema.TaggedError<LedgerError>()("LedgerError", {
  reason: LedgerReason,
  detail: Schema.String,
  /** The member or line that failed, where that helps (e.g. `metadata.when`, `line 12`). */
  path: Schema.optional(Schema.String)
}) {}

export const ledgerError = (reason: LedgerReason, detail: string, path?: string): LedgerError =>
  new LedgerError(path === undefined ? { reason, detail } : { reason, detail, path })
