// The reasons `writ gate` refuses with, defined once (docs/writ-gate.md): section 11's codes for a
// call or body that breaks a Writ rule, and the gate's own `gate/...` codes (section 11, last
// paragraph: implementation codes are namespaced), the names the reference gate uses.
import { Schema } from "effect"
import { MissingCall } from "../../writ/binding-reason.js"
import { WritReason } from "../../writ/reason.js"

export const GateReason = Schema.Union(
  WritReason,
  /** The request carries no `Writ-Call` header. */
  MissingCall,
  Schema.Literal(
    /** Two member names of one body object fold together (Unicode simple case folding). */
    "gate/ambiguous_member",
    /** A body member no `bind` entry names, at any depth. */
    "gate/unbound_member",
    /** A query string: routes bind nothing from it. */
    "gate/unbound_query",
    /** No route matches the request's method and path (404). */
    "gate/no_route",
    /** A forward call sent to the section 10 endpoint: forward calls go with their request. */
    "gate/use_route",
    /** The mapping file is refused at start. */
    "gate/bad_mapping",
    /** The API's response body went past the gate's bound (upstream.ts): it may have acted; the body is not returned. */
    "gate/result_too_large",
    /** The API answered with a status other than 2xx. */
    "gate/upstream_status",
    /** A reversal the API did not accept (non-2xx), or a tally with nothing to reverse. */
    "gate/reverse_failed"
  )
)
export type GateReason = typeof GateReason.Type

export class GateError extends Schema.TaggedError<GateError>()("GateError", {
  reason: GateReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
}) {}

export const gateError = (reason: GateReason, path: string, message: string): GateError => new GateError({ reason, path, message })
