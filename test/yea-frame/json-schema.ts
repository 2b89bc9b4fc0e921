// A small JSON Schema (draft-07 subset) validator for the keywords `JSONSchema.make` writes, so the
// tests can hold the published schemas in schema/yea/ against the runtime's decoding.
// Keywords: $ref (#/$defs/..), type, enum, const, anyOf, oneOf, properties, required,
// additionalProperties, propertyNames, items (schema or tuple), additionalItems, minItems, maxItems,
// minLength, maxLength, pattern, minimum, maximum. Anything else fails loudly so a new keyword
// cannot be silently ignored.
type S = Record<string, unknown> | boolean

const KNOWN = new Set([
  "$schema", "$defs", "$ref", "$id", "type", "enum", "const", "anyOf", "oneOf", "properties", "required",
  "additionalProperties", "propertyNames", "items", "additionalItems", "minItems", "maxItems", "minLength",
  "maxLength", "pattern", "minimum", "maximum", "description", "title", "examples", "default"
])

const typeOf = (v: unknown): ReadonlyArray<string> => {
  if (v === null) return ["null"]
  if (Array.isArray(v)) return ["array"]
  if (typeof v === "number") return Number.isInteger(v) ? ["number", "integer"] : ["number"]
  return [typeof v]
}

const equal = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

export const validate = (root: Record<string, unknown>, value: unknown): boolean => {
  const defs = (root.$defs ?? {}) as Record<string, S>
  const go = (s: S, v: unknown): boolean => {
    if (s === true) return true
    if (s === false) return false
    for (const k of Object.keys(s)) if (!KNOWN.has(k)) throw new Error(`unsupported JSON Schema keyword ${k}`)
    if (typeof s.$ref === "string") {
      const name = s.$ref.replace("#/$defs/", "")
      if (!(name in defs)) throw new Error(`unresolved ${s.$ref}`)
      if (!go(defs[name], v)) return false
    }
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? (s.type as Array<string>) : [s.type as string]
      if (!typeOf(v).some((t) => types.includes(t))) return false
    }
    if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, v))) return false
    if ("const" in s && !equal(s.const, v)) return false
    if (Array.isArray(s.anyOf) && !s.anyOf.some((x) => go(x as S, v))) return false
    if (Array.isArray(s.oneOf) && s.oneOf.filter((x) => go(x as S, v)).length !== 1) return false
    if (typeof v === "string") {
      const len = [...v].length
      if (typeof s.minLength === "number" && len < s.minLength) return false
      if (typeof s.maxLength === "number" && len > s.maxLength) return false
      if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(v)) return false
    }
    if (typeof v === "number") {
      if (typeof s.minimum === "number" && v < s.minimum) return false
      if (typeof s.maximum === "number" && v > s.maximum) return false
    }
    if (Array.isArray(v)) {
      if (typeof s.minItems === "number" && v.length < s.minItems) return false
      if (typeof s.maxItems === "number" && v.length > s.maxItems) return false
      if (Array.isArray(s.items)) {
        const tuple = s.items as Array<S>
        for (let i = 0; i < v.length; i++) {
          const sub = i < tuple.length ? tuple[i] : ((s.additionalItems ?? true) as S)
          if (!go(sub, v[i])) return false
        }
      } else if (s.items !== undefined && !v.every((x) => go(s.items as S, x))) return false
    }
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      const o = v as Record<string, unknown>
      const props = (s.properties ?? {}) as Record<string, S>
      if (Array.isArray(s.required) && !s.required.every((k) => Object.prototype.hasOwnProperty.call(o, k as string))) return false
      for (const k of Object.keys(o)) {
        if (s.propertyNames !== undefined && !go(s.propertyNames as S, k)) return false
        if (Object.prototype.hasOwnProperty.call(props, k)) {
          if (!go(props[k], o[k])) return false
        } else if (s.additionalProperties !== undefined && !go(s.additionalProperties as S, o[k])) return false
      }
    }
    return true
  }
  return go(root, value)
}
