// The bridge's tool list (SPEC-bridge "Tools"): one MCP tool per remote capability, named after it,
// with a JSON Schema built from the capability's compact params (SPEC §4.1.1).
//
// Names are `[A-Za-z0-9_-]{1,64}`: every other character becomes `_`, cut to 57 so a suffix fits.
// Two capabilities that would share a name, an empty name, and any name starting with the
// reserved `yea_`/`yea-` get `_` + 6 b64url characters of sha256(service id "/" capability); a
// name that still clashes is not served (and reported). Nothing is ever shadowed.
import { utf8 } from "../../kernel/canonical.js"
import { hashB64 } from "../../kernel/hash.js"

export const UTILITIES = ["yea_undo", "yea_expand", "yea_consent"] as const
const RESERVED = /^yea[_-]/i
const PARAM_NAME = /^[a-zA-Z0-9_.-]{1,64}$/

export interface RemoteCapability {
  readonly service: string
  readonly name: string
  readonly kind: "ask" | "intent"
  readonly summary?: string
  readonly params?: unknown
}

export interface BridgeTool extends RemoteCapability {
  readonly tool: string
  readonly inputSchema: Record<string, unknown>
  /** A generic tool (`<service>_ask`, `<service>_intent`): its `name` is the kind, the capability an argument. */
  readonly generic?: { readonly capabilities: ReadonlyArray<string> }
}

/** SPEC-bridge "Too many tools, per service": past this many capabilities a service gets generic tools. */
export const GENERIC_PAST = 25
/** At most this many per-capability tools per service (the rest are named in `skipped`). */
export const MAX_TOOLS_PER_SERVICE = 200

export type ToolsMode = "auto" | "generic" | "per-capability"

const INTENT_FIELDS = {
  goal: { type: "string", description: "what you are trying to achieve" },
  preview: { type: "boolean", description: "true: show the proposals and do nothing" },
  proposal: { type: "string", description: "commit this pending proposal (its id) within your grant" }
}

const sanitize = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 57)
const suffix = (service: string, name: string) => `_${hashB64(utf8(`${service}/${name}`)).slice(0, 6)}`

/** One line, at most 300 characters: service text in descriptions can't grow without bound. */
export const oneLine = (s: string): string => {
  const t = s.replace(/[\r\n\u2028\u2029]+/g, " ")
  return t.length > 300 ? `${t.slice(0, 299)}…` : t
}

/** The JSON Schema of one compact type (SPEC §4.1.1), or why it can't be served. */
const typeSchema = (t: unknown): Record<string, unknown> => {
  if (Array.isArray(t)) return { type: "array", items: t.length === 1 ? typeSchema(t[0]) : {} }
  if (typeof t === "object" && t !== null) return objectSchema(t as Record<string, unknown>)
  if (typeof t !== "string") return {}
  const [head, ...rest] = t.split(" — ")
  const desc = rest.length > 0 ? { description: oneLine(rest.join(" — ")) } : {}
  const base = head.trim()
  if (base.endsWith("[]")) return { type: "array", items: typeSchema(base.slice(0, -2)), ...desc }
  if (base.includes("|")) return { type: "string", enum: base.split("|"), ...desc }
  switch (base) {
    case "string": return { type: "string", ...desc }
    case "int": return { type: "integer", ...desc }
    case "number": return { type: "number", ...desc }
    case "bool": return { type: "boolean", ...desc }
    case "date": return { type: "string", format: "date", ...desc }
    case "datetime": return { type: "string", format: "date-time", ...desc }
    default: return { ...desc }
  }
}

const objectSchema = (params: Record<string, unknown>): Record<string, unknown> => {
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  for (const [k, v] of Object.entries(params)) {
    const optional = k.endsWith("?")
    const name = optional ? k.slice(0, -1) : k
    if (!PARAM_NAME.test(name)) throw new RangeError(`param name ${JSON.stringify(name)} is not [a-zA-Z0-9_.-]{1,64}`)
    properties[name] = typeSchema(v)
    if (!optional) required.push(name)
  }
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) }
}

/**
 * The generic pair of a service (SPEC-bridge "Too many tools"): `<service>_ask` and
 * `<service>_intent` taking `{ capability, params, goal?, preview?, proposal? }`, named from the
 * service id sanitized and cut to 40, through the same collision and `yea_` rules (the suffix
 * hashes `service id "/" kind`). A kind the service has no capability of gets no tool.
 */
const genericTools = (service: string, caps: ReadonlyArray<RemoteCapability>): Array<RemoteCapability & { readonly generic: BridgeTool["generic"]; readonly base: string; readonly inputSchema: Record<string, unknown> }> =>
  (["ask", "intent"] as const).flatMap((kind) => {
    const names = caps.filter((c) => c.kind === kind).map((c) => c.name)
    if (names.length === 0) return []
    const inputSchema: Record<string, unknown> = {
      type: "object",
      properties: {
        capability: { type: "string", description: `one of this service's ${kind} capabilities (listed in the instructions)` },
        params: { type: "object", description: "the capability's params" },
        ...(kind === "intent" ? INTENT_FIELDS : {})
      },
      required: ["capability"]
    }
    return [{ service, name: kind, kind, summary: `${kind === "ask" ? "Read from" : "Propose and commit changes at"} ${service}: name the capability and its params`, generic: { capabilities: names }, base: `${sanitize(service).slice(0, 40)}_${kind}`, inputSchema }]
  })

/** The tool list for these capabilities; what can't be served is returned in `skipped`, with why. */
export const bridgeTools = (caps: ReadonlyArray<RemoteCapability>, mode: ToolsMode = "auto"): { tools: Array<BridgeTool>; skipped: Array<string> } => {
  const skipped: Array<string> = []
  const services = [...new Set(caps.map((c) => c.service))]
  const isGeneric = (service: string) => mode === "generic" || (mode === "auto" && caps.filter((c) => c.service === service).length > GENERIC_PAST)
  const generics = services.filter(isGeneric).flatMap((s) => genericTools(s, caps.filter((c) => c.service === s)))
  const perCapability: Array<RemoteCapability> = []
  for (const s of services.filter((x) => !isGeneric(x))) {
    const mine = caps.filter((c) => c.service === s)
    perCapability.push(...mine.slice(0, MAX_TOOLS_PER_SERVICE))
    for (const c of mine.slice(MAX_TOOLS_PER_SERVICE)) skipped.push(`${s}/${c.name}: past ${MAX_TOOLS_PER_SERVICE} tools for this service (--tools generic serves them all)`)
  }
  const counts = new Map<string, number>()
  for (const c of perCapability) counts.set(sanitize(c.name), (counts.get(sanitize(c.name)) ?? 0) + 1)
  for (const g of generics) counts.set(g.base, (counts.get(g.base) ?? 0) + 1)
  const taken = new Set<string>(UTILITIES)
  const tools: Array<BridgeTool> = []
  for (const g of generics) {
    const name = RESERVED.test(g.base) || (counts.get(g.base) ?? 0) > 1 ? g.base + suffix(g.service, g.kind) : g.base
    if (taken.has(name)) {
      skipped.push(`${g.service}: the generic tool name ${name} is taken`)
      continue
    }
    taken.add(name)
    tools.push({ service: g.service, name: g.name, kind: g.kind, summary: g.summary, tool: name, inputSchema: g.inputSchema, generic: g.generic })
  }
  for (const c of perCapability) {
    const plain = sanitize(c.name)
    const name = plain === "" || RESERVED.test(plain) || (counts.get(plain) ?? 0) > 1 ? plain + suffix(c.service, c.name) : plain
    if (taken.has(name)) {
      skipped.push(`${c.service}/${c.name}: the tool name ${name} is taken`)
      continue
    }
    let schema: Record<string, unknown>
    try {
      schema = typeof c.params === "object" && c.params !== null && !Array.isArray(c.params) ? objectSchema(c.params as Record<string, unknown>) : { type: "object", properties: {} }
    } catch (e) {
      skipped.push(`${c.service}/${c.name}: ${(e as Error).message}`)
      continue
    }
    if (c.kind === "intent") {
      const props = schema.properties as Record<string, unknown>
      const clash = ["goal", "preview", "proposal"].find((k) => k in props)
      if (clash !== undefined) {
        skipped.push(`${c.service}/${c.name}: its param ${clash} would shadow the bridge's own`)
        continue
      }
      Object.assign(props, INTENT_FIELDS)
    }
    taken.add(name)
    tools.push({ ...c, tool: name, inputSchema: schema })
  }
  return { tools, skipped }
}
