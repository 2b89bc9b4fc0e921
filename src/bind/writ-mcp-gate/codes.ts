// The codes `writ mcp-gate` signs into a tally's `err.code` (section 11, last paragraph: an
// implementation's codes are namespaced), defined once. Refusals made before the executor runs use
// the binding's codes (../writ-mcp/reason.ts) and section 11's.
import { Schema } from "effect"

export const McpGateCode = Schema.Literal(
  /** The upstream tool answered with `isError: true`: it ran, and its result says it failed. */
  "mcp-gate/tool_error",
  /** The upstream answered the `tools/call` with a JSON-RPC error: it claims nothing was done. */
  "mcp-gate/upstream_error",
  /** The upstream's result is past the gate's bound: it ran (and counted); the body is not kept. */
  "mcp-gate/result_too_large"
)
export type McpGateCode = typeof McpGateCode.Type

export const TOOL_ERROR: McpGateCode = "mcp-gate/tool_error"
export const UPSTREAM_ERROR: McpGateCode = "mcp-gate/upstream_error"
export const RESULT_TOO_LARGE: McpGateCode = "mcp-gate/result_too_large"
