// The reasons this binding fails with, defined once: section 11's codes (a Writ check, or the
// executor's unsigned answer at section 7 steps 1 and 2), and the binding's own, which are the
// names docs/bindings.md gives the same failures on MCP, and those of its JSON-RPC endpoint and
// client (./rpc.ts, ./http-client.ts).
import { Schema } from "effect"
import { ImplementationCode, MissingCall, MissingTally, ResultMismatch } from "../../writ/binding-reason.js"
import { WritReason } from "../../writ/reason.js"

/** The binding's own codes, on JSON-RPC and HTTP+JSON (./rpc.ts, ./rest.ts, ./http-client.ts, ./rest-client.ts). */
export const A2aRpcCode = Schema.Literal(
  /** A request that is not JSON-RPC 2.0 (no `jsonrpc: "2.0"`, no method, params not an object). */
  "mandate/a2a_bad_request",
  /** A method the endpoint does not serve, in either version (on HTTP+JSON: a path it does not serve). */
  "mandate/a2a_unknown_method",
  /** A push notification config (a method, or a SendMessage's configuration): this endpoint was
   * started with no webhook allow list (`--push-allow`), so it sends none (its card says so). */
  "mandate/a2a_push_not_supported",
  /** A push notification config whose webhook URL is not on the allow list (or not http(s), or
   * carries credentials in the URL): refused before any request is made to it. */
  "mandate/a2a_push_url_refused",
  /** `GetTaskPushNotificationConfig` naming a config this task does not have. */
  "mandate/a2a_push_config_not_found",
  /** A task already holds the most push notification configs this endpoint keeps (or the endpoint
   * holds the most in all): memory is bounded. */
  "mandate/a2a_push_config_limit",
  /** `SubscribeToTask` on a task in a terminal state (A2A 1.0 section 3.1.6: UnsupportedOperationError). */
  "mandate/a2a_task_final",
  /** `GetTask`, `SubscribeToTask`, a push config method, or `CancelTask` without a revoke, for a
   * task this endpoint does not hold. */
  "mandate/a2a_task_not_found",
  /** `CancelTask` without a revoke: every task here is final once answered, so only a revoke cancels. */
  "mandate/a2a_not_cancelable",
  /** A peer answered with an error (JSON-RPC, or an HTTP+JSON error status) that names no Writ reason. */
  "mandate/a2a_rpc_error",
  /** An Agent Card that offers no interface this client speaks (JSON-RPC at 1.0 or 0.3, HTTP+JSON at 1.0). */
  "mandate/a2a_no_interface",
  /** An Agent Card that carries signatures none of which verifies (A2A 1.0 section 8.4.3) under the
   * did:key it names, that key being the executor's the card's Writ extension names: it was changed
   * after it was signed, or signed by another key (./card-signature.ts). */
  "mandate/a2a_card_signature",
  /** No answer from the peer (connection refused, timeout, not HTTP 200). */
  "mandate/unreachable"
)
export type A2aRpcCode = typeof A2aRpcCode.Type

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
  A2aRpcCode,
  ImplementationCode
)
export type A2aReason = typeof A2aReason.Type

export class A2aError extends Schema.TaggedError<A2aError>()("A2aError", {
  reason: A2aReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
}) {}

export const a2aError = (reason: A2aReason, path: string, message: string): A2aError => new A2aError({ reason, path, message })
