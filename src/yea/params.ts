// Params against a capability's compact schema (SPEC §4.1.1), checked by the runtime before any
// handler runs. Failures are `invalid_params` with `fix` patches where a fix is certain (a near-miss
// name renamed). The "did you mean" distance runs only on short names (design.md security review:
// Levenshtein on huge names was a CPU DoS).
import { Effect } from "effect"
import type { ParamSchema } from "./frame.js"
import { yeaError, type YeaError } from "./reason.js"
import { editDistance } from "../kernel/edit-distance.js"

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/
const DATETIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/
const SUGGEST_MAX = 64

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** `base[]? — description` split: the base, whether it is an array. */
const parseType = (t: string): { readonly base: string; readonly array: boolean } => {
  const bare = t.split(" — ")[0].trim()
  return bare.endsWith("[]") ? { base: bare.slice(0, -2), array: true } : { base: bare, array: false }
}

const baseOk = (base: string, v: unknown): boolean => {
  switch (base) {
    case "string": return typeof v === "string"
    case "int": return typeof v === "number" && Number.isSafeInteger(v)
    case "number": return typeof v === "number" && Number.isFinite(v)
    case "bool": return typeof v === "boolean"
    case "date": return typeof v === "string" && DATE.test(v)
    case "datetime": return typeof v === "string" && DATETIME.test(v)
    case "any": return true
    default: return base.includes("|") ? typeof v === "string" && base.split("|").includes(v) : false
  }
}

/** The declared name closest to `name` within 2 edits, for short names only. */
const suggest = (name: string, names: ReadonlyArray<string>): string | undefined => {
  if (name.length > SUGGEST_MAX) return undefined
  let best: string | undefined
  let bestD = 3
  for (const n of names) {
    if (n.length > SUGGEST_MAX) continue
    const d = editDistance(name.toLowerCase(), n.toLowerCase())
    if (d < bestD) {
      best = n
      bestD = d
    }
  }
  return best
}

interface Problem {
  readonly message: string
  readonly fix?: { readonly say: string; readonly params: Record<string, unknown> }
}

const checkObject = (schema: ParamSchema, v: unknown, path: string, top: boolean): Problem | undefined => {
  if (!isObject(v)) return { message: `${path || "params"} must be an object` }
  const declared = new Map<string, { readonly type: ParamSchema[string]; readonly optional: boolean }>()
  for (const k of Object.keys(schema)) {
    const optional = k.endsWith("?")
    declared.set(optional ? k.slice(0, -1) : k, { type: schema[k], optional })
  }
  for (const k of Object.keys(v)) {
    if (declared.has(k)) continue
    const near = suggest(k, [...declared.keys()].filter((n) => !Object.prototype.hasOwnProperty.call(v, n)))
    const where = path === "" ? k : `${path}.${k}`
    if (near !== undefined && top) {
      return { message: `unknown parameter \`${where}\``, fix: { say: `rename \`${k}\` to \`${near}\``, params: { [k]: null, [near]: v[k] } } }
    }
    return { message: `unknown parameter \`${where}\`` }
  }
  for (const [name, d] of declared) {
    const where = path === "" ? name : `${path}.${name}`
    if (!Object.prototype.hasOwnProperty.call(v, name) || v[name] === undefined) {
      if (d.optional) continue
      return { message: `missing parameter \`${where}\`` }
    }
    const p = checkValue(d.type, v[name], where)
    if (p !== undefined) return p
  }
  return undefined
}

const checkValue = (type: ParamSchema[string], v: unknown, path: string): Problem | undefined => {
  if (typeof type === "string") {
    const { base, array } = parseType(type)
    if (array) {
      if (!Array.isArray(v)) return { message: `\`${path}\` must be a list of ${base}` }
      const bad = v.findIndex((x) => !baseOk(base, x))
      return bad === -1 ? undefined : { message: `\`${path}[${bad}]\` must be ${base}` }
    }
    return baseOk(base, v) ? undefined : { message: `\`${path}\` must be ${base === "any" ? "present" : base}` }
  }
  if (Array.isArray(type)) {
    if (!Array.isArray(v)) return { message: `\`${path}\` must be a list` }
    for (let i = 0; i < v.length; i++) {
      const p = checkObject(type[0] as ParamSchema, v[i], `${path}[${i}]`, false)
      if (p !== undefined) return p
    }
    return undefined
  }
  return checkObject(type as ParamSchema, v, path, false)
}

/** Checks `params` (absent means `{}`) against `schema`; `invalid_params` with a fix when certain. */
export const checkParams = (schema: ParamSchema | undefined, params: unknown): Effect.Effect<Readonly<Record<string, unknown>>, YeaError> => {
  const value = params === undefined ? {} : params
  if (schema === undefined) return isObject(value) ? Effect.succeed(value) : Effect.fail(yeaError("invalid_params", "params must be an object"))
  const p = checkObject(schema, value, "", true)
  if (p === undefined) return Effect.succeed(value as Record<string, unknown>)
  return Effect.fail(yeaError("invalid_params", p.message, p.fix !== undefined ? { fix: [p.fix] } : {}))
}
