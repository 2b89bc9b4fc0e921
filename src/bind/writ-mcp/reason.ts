// The MCP binding's own codes (docs/bindings.md; docs/adoption.md section 2a), defined once. They
// are outside the table of spec section 11, which is why `missing_call`, `unenforced_server`,
// `missing_tally` and `result_mismatch` are named by the binding document, and the proxy's policy
// codes (`unpinned_tool`, `tool_changed`, `unbound_argument`, `unreachable_server`) by its proxy
// section. A Writ check inside the binding still fails with its section 11 `WritError` (e.g.
// `malformed` for arguments that differ from the signed `args`, adoption.md 2a).
import { Schema } from "effect"
import * as Binding from "../../writ/binding-reason.js"

export const mcpReasonCodes = [
  ...Binding.MissingCall.literals,
  "unenforced_server",
  ...Binding.MissingTally.literals,
  ...Binding.ResultMismatch.literals,
  "unreachable_server",
  "unpinned_tool",
  "tool_changed",
  "unbound_argument",
  "method_refused",
  "result_too_large"
] as const

/**
 * The binding's implementation codes (section 11, last paragraph: namespaced): a tool call naming
 * no tool of the server's set, a request the proxy answers itself when its client has gone, and a
 * server's request that a peer listing tools on its own (`--print-pins`) does not serve.
 */
export const UNKNOWN_TOOL = "mandate/unknown_tool"
export const CLIENT_GONE = "mandate/client_gone"
export const NOT_SUPPORTED = "mandate/not_supported"
export const McpImplementationCode = Schema.Literal(UNKNOWN_TOOL, CLIENT_GONE, NOT_SUPPORTED)
export type McpImplementationCode = typeof McpImplementationCode.Type

/** The one union of the binding's codes. */
export const McpReason = Schema.Literal(...mcpReasonCodes)
export type McpReason = typeof McpReason.Type

/** A tool call arrived with no Writ call at a server that requires one (bindings.md, Server). */
export class MissingCall extends Schema.TaggedError<MissingCall>()("MissingCall", {
  reason: Binding.MissingCall,
  message: Schema.String
}) {}

/** A chain with `max` or `count` bounds would go to a server that does not advertise
 * `io.writ/delegation` (adoption.md 2a, first client rule). */
export class UnenforcedServer extends Schema.TaggedError<UnenforcedServer>()("UnenforcedServer", {
  reason: Schema.Literal("unenforced_server"),
  message: Schema.String
}) {}

/** A result with no tally: the work does not count as done (adoption.md 2a, second client rule). */
export class MissingTally extends Schema.TaggedError<MissingTally>()("MissingTally", {
  reason: Binding.MissingTally,
  message: Schema.String
}) {}

/** The body, `isError` and the tally disagree (bindings.md, "What a verified result
 * authenticates"); `path` names the member that contradicts the tally. */
export class ResultMismatch extends Schema.TaggedError<ResultMismatch>()("ResultMismatch", {
  reason: Binding.ResultMismatch,
  path: Schema.String,
  message: Schema.String
}) {}

/** The server went away with the request open (bindings.md, Shutdown). */
export class UnreachableServer extends Schema.TaggedError<UnreachableServer>()("UnreachableServer", {
  reason: Schema.Literal("unreachable_server"),
  message: Schema.String
}) {}

/** A call to a tool with no approved pin (bindings.md, Pinned tools). */
export class UnpinnedTool extends Schema.TaggedError<UnpinnedTool>()("UnpinnedTool", {
  reason: Schema.Literal("unpinned_tool"),
  message: Schema.String
}) {}

/** A call to a tool whose definition, as last listed by the server, is not the one pinned. */
export class ToolChanged extends Schema.TaggedError<ToolChanged>()("ToolChanged", {
  reason: Schema.Literal("tool_changed"),
  message: Schema.String
}) {}

/** Closed-world mode: an argument no application bound of the grant names (spec 7.2 leaves it
 * unconstrained; docs/where-writ-stops.md pattern 2). */
export class UnboundArgument extends Schema.TaggedError<UnboundArgument>()("UnboundArgument", {
  reason: Schema.Literal("unbound_argument"),
  path: Schema.String,
  message: Schema.String
}) {}

/** A request whose method the grant does not govern and no `--allow` names (methods.ts). */
export class MethodRefused extends Schema.TaggedError<MethodRefused>()("MethodRefused", {
  reason: Schema.Literal("method_refused"),
  message: Schema.String
}) {}

/** A verified result past the proxy's bound: not passed on, its tally kept as a receipt. */
export class ResultTooLarge extends Schema.TaggedError<ResultTooLarge>()("ResultTooLarge", {
  reason: Schema.Literal("result_too_large"),
  message: Schema.String
}) {}

export const missingCall = (message: string) => new MissingCall({ reason: "missing_call", message })
export const unenforcedServer = (message: string) => new UnenforcedServer({ reason: "unenforced_server", message })
export const missingTally = (message: string) => new MissingTally({ reason: "missing_tally", message })
export const resultMismatch = (path: string, message: string) => new ResultMismatch({ reason: "result_mismatch", path, message })
export const unreachableServer = (message: string) => new UnreachableServer({ reason: "unreachable_server", message })
export const unpinnedTool = (message: string) => new UnpinnedTool({ reason: "unpinned_tool", message })
export const toolChanged = (message: string) => new ToolChanged({ reason: "tool_changed", message })
export const unboundArgument = (path: string, message: string) => new UnboundArgument({ reason: "unbound_argument", path, message })
export const methodRefused = (message: string) => new MethodRefused({ reason: "method_refused", message })
export const resultTooLarge = (message: string) => new ResultTooLarge({ reason: "result_too_large", message })

/** Every failure of the binding's client side that is not a Writ check. */
export type McpClientError = UnenforcedServer | MissingTally | ResultMismatch
/** The proxy's own refusals, before anything is signed or after the server left. */
export type McpPolicyError = UnpinnedTool | ToolChanged | UnboundArgument | UnreachableServer
