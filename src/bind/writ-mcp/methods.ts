// The method policy of `writ mcp-proxy` and `writ mcp-gate` (docs/mcp-gate.md, "Which methods a
// grant governs"). A grant names operations, and three requests are signed as one (./bound.ts):
// `tools/call`, `resources/read` and `prompts/get`, each of which takes arguments and returns the
// server's content, so a grant to read one file reads that one and no other, whichever method asks.
// Their listings (`resources/list`, `resources/templates/list`, `prompts/list`) are relayed like
// `tools/list`: names and descriptions, no content (the proxy filters them to what its grant
// admits). Every other request carries nothing of the server's data or effects (open), or is
// refused (`method_refused`) unless an `--allow` names it, which the operator then answers for: an
// allowed method is relayed unchecked and uncounted. Those are `completion/complete` (a completion
// of a prompt argument or a template variable is a listing of values, e.g. file names, no `uri`
// bound can be compared with), `logging/setLevel` (it changes the server for the whole session,
// not an operation on data a grant names), and `resources/subscribe`/`unsubscribe`.
import { Effect } from "effect"
import { isJsonObject } from "../../kernel/json.js"
import { BOUND_METHODS } from "./bound.js"
import { methodRefused, type MethodRefused } from "./reason.js"

export type MethodRule = "open" | "bound" | "listing" | "refused"

/** The methods that are protocol plumbing: the session itself and the tool list (which pins
 * already filter). */
const OPEN: ReadonlySet<string> = new Set(["initialize", "ping", "tools/list"])
/** The listings of what the bound methods reach. */
export const LISTINGS: ReadonlySet<string> = new Set(["resources/list", "resources/templates/list", "prompts/list"])

/** Whether an `--allow` entry (a method, or a prefix ending in `/*`, as `resources/*`) names `method`. */
const allows = (a: string, method: string): boolean => a === method || (a.endsWith("/*") && method.startsWith(a.slice(0, -1)))

/** The rule for a client request `method`, given the `--allow` entries. A bound method or a
 * listing is never opened by `--allow`: it stays under the grant. */
export const ruleOf = (method: string, allow: ReadonlyArray<string>): MethodRule | "allowed" => {
  if (BOUND_METHODS.has(method)) return "bound"
  if (LISTINGS.has(method)) return "listing"
  if (OPEN.has(method)) return "open"
  return allow.some((a) => allows(a, method)) ? "allowed" : "refused"
}

/** The `--allow` entries that name a bound method exactly: a usage error, since it would not open it. */
export const allowsBound = (allow: ReadonlyArray<string>): ReadonlyArray<string> => allow.filter((a) => BOUND_METHODS.has(a))

/** A client request other than a bound one: passes when open, a listing or allowed, else `method_refused`. */
export const checkMethod = (method: string, allow: ReadonlyArray<string>): Effect.Effect<void, MethodRefused> =>
  ruleOf(method, allow) === "refused"
    ? Effect.fail(methodRefused(`the grant does not govern ${method}, and no --allow names it`))
    : Effect.void

/** The capability of the initialize result behind each family of methods. */
const FAMILIES: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["resources", ["resources/read", "resources/list", "resources/templates/list", "resources/subscribe", "resources/unsubscribe"]],
  ["prompts", ["prompts/get", "prompts/list"]],
  ["completions", ["completion/complete"]],
  ["logging", ["logging/setLevel"]]
]

/**
 * The server's capabilities as the client is shown them: a family is offered when some method of
 * it is bound or allowed, and `named` by the grant (the proxy asks its leaf, ./scope.ts: a
 * subscription needs `mcp/resources/read` named, as a completion needs a prompt or it; the gate,
 * which holds no grant, names every method), so a client does not list what it would be refused.
 * `resources.subscribe` is offered only when `resources/subscribe` is allowed and named.
 */
export const offeredCapabilities = (
  capabilities: unknown,
  allow: ReadonlyArray<string>,
  named: (method: string) => boolean = () => true
): unknown => {
  if (!isJsonObject(capabilities)) return capabilities
  const offered = (m: string) => {
    const rule = ruleOf(m, allow)
    return (rule === "allowed" || rule === "bound") && named(m)
  }
  const hidden = new Set(FAMILIES.filter(([, methods]) => !methods.some(offered)).map(([f]) => f))
  const shown = Object.fromEntries(Object.entries(capabilities).filter(([k]) => !hidden.has(k)))
  const resources = shown.resources
  if (isJsonObject(resources) && resources.subscribe !== undefined && !offered("resources/subscribe")) {
    shown.resources = Object.fromEntries(Object.entries(resources).filter(([k]) => k !== "subscribe"))
  }
  return shown
}
