// The reasons this binding fails with, defined once: section 11's codes (a Writ check, or the
// executor's unsigned answer at section 7 steps 1 and 2), and the binding's own, which are the
// names docs/bindings.md gives the same failures on MCP.
import { Schema } from "effect"
import { ImplementationCode, MissingCall, MissingTally, ResultMismatch } from "../../writ/binding-reason.js"
import { WritReason } from "../../writ/reason.js"

export const A2aReason = Schema.Union(
  WritReason,
  /** A message carries no Writ call in either form. */
  MissingCall,
  /** A task carries no tally (its work does not count as done). */
  MissingTally,
  /** The task and its tally disagree: the state, the status metadata, or the result body. */
  ResultMismatch,
  /** A `CancelTask` carries no revoke. */
  Schema.Literal("missing_revoke"),
  ImplementationCode
)
export type A2aReason = typeof A2aReason.Type

export class A2aError extends Schema.TaggedError<A2aError>()("A2aError", {
  reason: A2aReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
}) {}

export const a2aError = (reason: A2aReason, path: string, message: string): A2aError => new A2aError({ reason, path, message })
