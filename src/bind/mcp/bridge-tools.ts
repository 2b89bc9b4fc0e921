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

/** The tool list for these capabilities; what can't be served is returned in `skipped`, with why. */
export const bridgeTools = (caps: ReadonlyArray<RemoteCapability>): { tools: Array<BridgeTool>; skipped: Array<string> } => {
  const skipped: Array<string> = []
  const counts = new Map<string, number>()
  for (const c of caps) counts.set(sanitize(c.name), (counts.get(sanitize(c.name)) ?? 0) + 1)
  const taken = new Set<string>(UTILITIES)
  const tools: Array<BridgeTool> = []
  for (const c of caps) {
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
      props.goal = { type: "string", description: "what you are trying to achieve" }
      props.preview = { type: "boolean", description: "true: show the proposals and do nothing" }
      props.proposal = { type: "string", description: "commit this pending proposal (its id) within your grant" }
    }
    taken.add(name)
    tools.push({ ...c, tool: name, inputSchema: schema })
  }
  return { tools, skipped }
}
