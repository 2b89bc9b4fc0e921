// What a grant lets a client of `writ mcp-proxy` see (docs/mcp-gate.md, "Which methods a grant
// governs"): besides the bound requests (./bound.ts), every listing and every notification is held
// to the leaf, so nothing outside the grant is revealed, by name or by change:
//
// - listings: `tools/list` keeps the tools whose op (`mcp/tools/<name>`) the leaf's `act` names;
//   `resources/list` the resources whose `{uri}` the leaf admits (act and the `uri` bound, section
//   7.2); `prompts/list` the prompts whose op it names; `resources/templates/list` all templates
//   when `act` names `mcp/resources/read`, else none (a template is a pattern, and no bound on
//   `uri` can be compared with a pattern);
// - requests that name an item, when `--allow` opens them: `resources/subscribe` only to a URI the
//   leaf admits, `completion/complete` only for a prompt the leaf names or, for a template, when
//   it names `mcp/resources/read`; otherwise `method_refused`, nothing sent;
// - notifications: `notifications/resources/updated` is relayed only for a URI the leaf admits
//   (a server may report changes to what it was never asked to watch).
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import type { Bounds } from "../../writ/bound.js"
import { admits, names, promptOp, RESOURCE_READ_OP } from "./bound.js"
import { toolOp } from "./present.js"
import { methodRefused, type MethodRefused } from "./reason.js"

const itemsOf = (result: JsonObject, member: string): Array<JsonObject> =>
  Array.isArray(result[member]) ? result[member].filter(isJsonObject) : []

const admitsUri = (leaf: Bounds, uri: unknown): boolean => typeof uri === "string" && admits(leaf, RESOURCE_READ_OP, { uri })

/** A listing's result with only what the leaf covers (the header). Other methods unchanged. */
export const listedUnder = (leaf: Bounds, listing: string, result: JsonObject): JsonObject => {
  switch (listing) {
    case "tools/list":
      return { ...result, tools: itemsOf(result, "tools").filter((t) => typeof t.name === "string" && names(leaf, toolOp(t.name))) }
    case "resources/list":
      return { ...result, resources: itemsOf(result, "resources").filter((r) => admitsUri(leaf, r.uri)) }
    case "prompts/list":
      return { ...result, prompts: itemsOf(result, "prompts").filter((p) => typeof p.name === "string" && names(leaf, promptOp(p.name))) }
    case "resources/templates/list":
      return { ...result, resourceTemplates: names(leaf, RESOURCE_READ_OP) ? itemsOf(result, "resourceTemplates") : [] }
    default:
      return result
  }
}

/** A request naming an item outside the leaf: its refusal; undefined when it may pass. */
export const outsideGrant = (leaf: Bounds, method: string, params: JsonObject): MethodRefused | undefined => {
  if (method === "resources/subscribe") {
    return admitsUri(leaf, params.uri) ? undefined : methodRefused(`the grant does not cover ${JSON.stringify(params.uri ?? null)} (resources/subscribe)`)
  }
  if (method === "completion/complete") {
    const ref = isJsonObject(params.ref) ? params.ref : {}
    if (ref.type === "ref/prompt") {
      return typeof ref.name === "string" && names(leaf, promptOp(ref.name)) ? undefined : methodRefused(`the grant does not name the prompt ${JSON.stringify(ref.name ?? null)} (completion/complete)`)
    }
    return names(leaf, RESOURCE_READ_OP) ? undefined : methodRefused(`the grant does not name ${RESOURCE_READ_OP} (completion/complete of a template)`)
  }
  return undefined
}

/** Whether a server notification may reach the client: not a change to a URI outside the leaf. */
export const visibleUnder = (leaf: Bounds, method: string, params: JsonObject): boolean =>
  method !== "notifications/resources/updated" || admitsUri(leaf, params.uri)
