// The proxy's two policies (docs/bindings.md, "Pinned tools and closed-world arguments"), applied
// before anything is signed. Neither is a writ bound: a bound is compared against the call's
// `args` (spec 7.2), so a pin carried as one would add an argument the tool never asked for.
//
// A pin is the SHA-256 of the whole tool definition re-encoded with sorted members (RFC 8785, as
// spec 1.4 encodes), base64url: a changed description, schema, title or annotation changes it.
import { Effect, Schema } from "effect"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { hashB64 } from "../../kernel/hash.js"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import { applicationBounds, reservedNames } from "../../writ/bound.js"
import type { CheckedWrit } from "../../writ/writ.js"
import { toolChanged, type ToolChanged, unboundArgument, type UnboundArgument, unpinnedTool, type UnpinnedTool } from "./reason.js"

/** A pin file: tool name -> pin. */
export const PinFile = Schema.Record({ key: Schema.String, value: Schema.String })
export type PinFile = typeof PinFile.Type

/** The pin of a tool definition. */
export const pinOf = (definition: JsonObject): string => hashB64(utf8(encodeCanonical(definition, "utf16")))

/** The pins of a listing, by tool name. */
export const pinsOf = (tools: ReadonlyArray<JsonObject>): PinFile =>
  Object.fromEntries(tools.filter((t) => typeof t.name === "string").map((t) => [t.name as string, pinOf(t)]))

/** The tools of a listing whose definition hashes to the pin approved for its name. */
export const pinnedOnly = (pins: PinFile, tools: ReadonlyArray<JsonObject>): ReadonlyArray<JsonObject> =>
  tools.filter((t) => typeof t.name === "string" && Object.hasOwn(pins, t.name) && pins[t.name] === pinOf(t))

/** A call to `tool` under pins: refused with no pin (`unpinned_tool`), or when the definition the
 * server last listed (`listed`, undefined when it no longer lists the tool) is not the pinned one
 * (`tool_changed`). */
export const checkPinned = (
  pins: PinFile,
  tool: string,
  listed: string | undefined
): Effect.Effect<void, UnpinnedTool | ToolChanged> =>
  !Object.hasOwn(pins, tool)
    ? Effect.fail(unpinnedTool(`no pin approves the tool ${tool}`))
    : listed === pins[tool]
    ? Effect.void
    : Effect.fail(toolChanged(listed === undefined
      ? `the server no longer lists the tool ${tool}`
      : `the server's definition of ${tool} is not the one pinned`))

/** Closed world (where-writ-stops.md, pattern 2): every argument is named by an application bound
 * of the grant's leaf (spec 7.2: not `act`, `hld`, `depth`, nor a `count` bound's name), else
 * `unbound_argument`, since section 7.2 leaves any other argument unconstrained. */
export const checkClosed = (leaf: CheckedWrit, args: JsonObject): Effect.Effect<void, UnboundArgument> =>
  closedOver(new Set(applicationBounds(leaf.value.bnd).map(([n]) => n)), args)

/** `checkClosed` on a leaf as received, before the executor verified it (the gate's order, as
 * `writ gate` checks its contract first): a forged leaf only changes which names pass here, and the
 * executor then refuses its chain. */
export const checkClosedReceived = (call: JsonObject, args: JsonObject): Effect.Effect<void, UnboundArgument> => {
  const chain = Array.isArray(call.chain) ? call.chain : []
  const leaf = chain[chain.length - 1]
  const bnd = isJsonObject(leaf) && isJsonObject(leaf.bnd) ? leaf.bnd : {}
  const names = Object.keys(bnd).filter((n) => !reservedNames.includes(n) && !(isJsonObject(bnd[n]) && (bnd[n] as JsonObject).t === "count"))
  return closedOver(new Set(names), args)
}

const closedOver = (bound: ReadonlySet<string>, args: JsonObject): Effect.Effect<void, UnboundArgument> => {
  const extra = Object.keys(args).sort().find((n) => !bound.has(n))
  return extra === undefined
    ? Effect.void
    : Effect.fail(unboundArgument(`arguments.${extra}`, `the grant has no bound for the argument ${extra}`))
}
