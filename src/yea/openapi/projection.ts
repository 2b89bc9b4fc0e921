// Response projections of the OpenAPI adapter (docs/yea-commands.md "Presets"; reference
// openapi.md, "Presets": a preset "projects responses down to what a model needs"). An upstream
// answer such as a GitHub issue carries dozens of fields, most of them URLs; a projection keeps the
// few that matter, so the model's context holds the answer and not the noise.
//
// A projection is a list of fields. Each is `name` (kept as it is) or `name=path`, where the path
// walks objects with `.` and maps over an array with `[]`: `author=user.login`,
// `labels=labels[].name`. A field the answer does not have is left out, never invented. An array
// answer is projected item by item; `within` names the member holding the list when the answer
// wraps it (GitHub's search answers `{total_count, items}`), and then the list is the answer.
import { Predicate } from "effect"

export interface Projection {
  readonly fields: ReadonlyArray<string>
  /** The member of an object answer that holds the list to project (the rest is dropped). */
  readonly within?: string
}

/** The value at `path` in `value`: `.` steps into objects, `[]` maps over an array; undefined when absent. */
const at = (value: unknown, path: string): unknown => {
  if (path === "") return value
  const [head, ...rest] = path.split(".")
  const tail = rest.join(".")
  if (head.endsWith("[]")) {
    const list = head === "[]" ? value : Predicate.isRecord(value) ? value[head.slice(0, -2)] : undefined
    return Array.isArray(list) ? list.map((x) => at(x, tail)).filter((x) => x !== undefined) : undefined
  }
  if (!Predicate.isRecord(value) || !Object.hasOwn(value, head)) return undefined
  return at(value[head], tail)
}

const one = (value: unknown, fields: ReadonlyArray<string>): unknown => {
  if (!Predicate.isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    const eq = f.indexOf("=")
    const [name, path] = eq < 0 ? [f, f] : [f.slice(0, eq), f.slice(eq + 1)]
    const v = at(value, path)
    if (v !== undefined) out[name] = v
  }
  return out
}

/** `body` with only the projection's fields (an array item by item; a text or null answer as it is). */
export const project = (body: unknown, p: Projection): unknown => {
  const list = p.within !== undefined && Predicate.isRecord(body) ? body[p.within] : body
  return Array.isArray(list) ? list.map((x) => one(x, p.fields)) : one(list, p.fields)
}
