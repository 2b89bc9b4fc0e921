// The method policy of `writ mcp-proxy` and `writ mcp-gate` (docs/mcp-gate.md, "Which methods a
// grant governs"). A grant names operations, and the binding signs only `tools/call` as one
// (adoption.md 2a: `mcp/tools/<name>`). Every other request either carries nothing of the
// server's data or effects (open), or would let a holder reach what the grant does not name: a
// grant to read one file must not read another through `resources/read`, nor through a prompt or
// a completion built from it. Those are refused (`method_refused`) unless an `--allow` names them,
// which the operator then answers for: an allowed method is relayed unchecked and uncounted.
import { Effect } from "effect"
import { isJsonObject } from "../../kernel/json.js"
import { methodRefused, type MethodRefused } from "./reason.js"

export type MethodRule = "open" | "bound" | "refused"

/** The methods that are protocol plumbing: the session itself and the tool list (which pins
 * already filter). */
const OPEN: ReadonlySet<string> = new Set(["initialize", "ping", "tools/list"])

/** The rule for a client request `method`, given the `--allow` entries (a method, or a prefix
 * ending in `/*`, as `resources/*`). */
export const ruleOf = (method: string, allow: ReadonlyArray<string>): MethodRule | "allowed" => {
  if (method === "tools/call") return "bound"
  if (OPEN.has(method)) return "open"
  return allow.some((a) => a === method || (a.endsWith("/*") && method.startsWith(a.slice(0, -1)))) ? "allowed" : "refused"
}

/** A client request other than `tools/call`: passes when open or allowed, else `method_refused`. */
export const checkMethod = (method: string, allow: ReadonlyArray<string>): Effect.Effect<void, MethodRefused> =>
  ruleOf(method, allow) === "refused"
    ? Effect.fail(methodRefused(`the grant governs tools/call only, and no --allow names ${method}`))
    : Effect.void

/** The capability of the initialize result behind each family of methods. */
const FAMILIES: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["resources", ["resources/list", "resources/templates/list", "resources/read", "resources/subscribe"]],
  ["prompts", ["prompts/list", "prompts/get"]],
  ["completions", ["completion/complete"]],
  ["logging", ["logging/setLevel"]]
]

/** The server's capabilities as the client is shown them: a family none of whose methods is
 * allowed is not offered, so a client does not list what it would be refused. */
export const offeredCapabilities = (capabilities: unknown, allow: ReadonlyArray<string>): unknown => {
  if (!isJsonObject(capabilities)) return capabilities
  const hidden = new Set(FAMILIES.filter(([, methods]) => !methods.some((m) => ruleOf(m, allow) !== "refused")).map(([f]) => f))
  return Object.fromEntries(Object.entries(capabilities).filter(([k]) => !hidden.has(k)))
}
