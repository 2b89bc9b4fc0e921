// What the client is shown of the server's answer to a request the proxy relayed unbound
// (./proxy.ts; docs/mcp-gate.md, "Which methods a grant governs"): `initialize` with only the
// capability families the grant and `allow` open (methods.ts `offeredCapabilities`), every listing
// held to the leaf (./scope.ts), and `tools/list` with pins (./policy.ts) only the pinned tools,
// whose pins the proxy keeps to check calls against. Anything else passes under the client's id.
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import type { Bounds } from "../../writ/bound.js"
import { names, promptOp, RESOURCE_READ_OP } from "./bound.js"
import { offeredCapabilities } from "./methods.js"
import { pinnedOnly, pinOf, type PinFile } from "./policy.js"
import type { Message, RequestId } from "./rpc.js"
import { listedUnder } from "./scope.js"

/** Each tool's pin as the server last listed it; stale after `list_changed` or a reconnect. */
export interface Listed {
  readonly pins: Map<string, string>
  stale: boolean
}

/** What presenting needs: the leaf, the methods allowed, the pin file and the pins seen. */
export interface Presenting {
  readonly leaf: Bounds
  readonly allow: ReadonlyArray<string>
  readonly pins: PinFile | undefined
  readonly listed: Listed
}

/** The pins of a listing's page taken in (a first page starts the list again). */
export const takeListed = (listed: Listed, tools: ReadonlyArray<JsonObject>, firstPage: boolean): void => {
  if (firstPage) listed.pins.clear()
  for (const t of tools) if (typeof t.name === "string") listed.pins.set(t.name, pinOf(t))
  if (firstPage) listed.stale = false
}

/** Whether the leaf's `act` names some prompt (the prompts family is offered then). */
const namesAnyPrompt = (leaf: Bounds): boolean =>
  names(leaf, promptOp("x")) || (isJsonObject(leaf.act) && String(leaf.act.v).startsWith(promptOp("")))

/** The capabilities the client is offered out of those the server advertised. */
export const offeredUnder = (c: Presenting, capabilities: unknown): unknown => {
  const readable = names(c.leaf, RESOURCE_READ_OP)
  const prompts = namesAnyPrompt(c.leaf)
  return offeredCapabilities(capabilities, c.allow, (method) =>
    method === "resources/read" || method === "resources/subscribe" || method === "resources/unsubscribe" ? readable
      : method === "prompts/get" ? prompts
      : method === "completion/complete" ? readable || prompts
      : true)
}

/** The answer `m` to the client's request `method` (id `clientId`), as the client is shown it. */
export const presentAnswer = (c: Presenting, method: string, clientId: RequestId, cursor: boolean, listing: string | undefined, m: Message): Message => {
  if (!isJsonObject(m.result)) return { ...m, id: clientId }
  if (method === "initialize") return { ...m, id: clientId, result: { ...m.result, capabilities: offeredUnder(c, m.result.capabilities) } as JsonObject }
  if (listing !== undefined) return { ...m, id: clientId, result: listedUnder(c.leaf, listing, m.result) }
  if (method === "tools/list" && c.pins !== undefined) {
    const tools = Array.isArray(m.result.tools) ? m.result.tools.filter(isJsonObject) : []
    takeListed(c.listed, tools, !cursor)
    return { ...m, id: clientId, result: listedUnder(c.leaf, "tools/list", { ...m.result, tools: pinnedOnly(c.pins, tools) }) }
  }
  if (method === "tools/list") return { ...m, id: clientId, result: listedUnder(c.leaf, "tools/list", m.result) }
  return { ...m, id: clientId }
}
