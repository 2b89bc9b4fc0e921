// The generated Writ JSON Schemas (schema/writ/*.schema.json, draft 2020-12) compiled by a real
// validator, ajv, so a test can hold them against the verifier and the corpora.
//
// `x-nondecreasing` is the one keyword of our own (src/writ/bound.ts): the items of an array are in
// non-decreasing order, how the schemas state a window's lo <= hi (section 3), which JSON Schema
// cannot compare. A validator that does not implement it ignores it and accepts reversed windows.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "./shared.js"

export type WritObjectType = "writ" | "call" | "tally" | "revoke" | "ack"

const nondecreasing = (data: unknown): boolean =>
  !Array.isArray(data) || data.every((x, i) => i === 0 || typeof x !== "number" || typeof data[i - 1] !== "number" || data[i - 1] <= x)

const compile = (): Record<WritObjectType, ValidateFunction> => {
  // strictTypes only lints a `$ref` beside `minimum` (valid in draft 2020-12, where siblings apply); every
  // other strict rule stays on, so an unknown keyword fails compilation.
  const ajv = new Ajv2020({ strict: true, strictTypes: false })
  ajv.addKeyword({ keyword: "x-nondecreasing", type: "array", schemaType: "boolean", validate: (on: boolean, data: unknown) => !on || nondecreasing(data) })
  const load = (t: WritObjectType) => ajv.compile(JSON.parse(readFileSync(join(repoRoot, "schema", "writ", `${t}.schema.json`), "utf8")))
  return { writ: load("writ"), call: load("call"), tally: load("tally"), revoke: load("revoke"), ack: load("ack") }
}

let compiled: Record<WritObjectType, ValidateFunction> | undefined

/** Whether the generated JSON Schema of `type` accepts `value`, and ajv's first error when not. */
export const jsonSchemaAccepts = (type: WritObjectType, value: unknown): { readonly ok: boolean; readonly error?: string } => {
  compiled ??= compile()
  const v = compiled[type]
  const ok = v(value) === true
  return ok ? { ok } : { ok, error: JSON.stringify(v.errors?.[0] ?? null) }
}
