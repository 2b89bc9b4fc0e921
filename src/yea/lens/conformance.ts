/**
 * Conformance checks for `conformance/lens.json` and `conformance/printable.json`, used by the
 * `yea conformance` runner and by the tests. Each returns undefined on a pass, or one line that
 * names the case and shows expected and actual output JSON-escaped.
 */
import { est } from "./estimate.js"
import { printable } from "./printable.js"
import { lensReply } from "./reply.js"
import { get, isObject } from "./value.js"
import { lensValue } from "./value.js"

const show = (s: unknown): string => JSON.stringify(s) ?? String(s)

/** A lens.json case: `{name, type: "value" | "reply", input, lens}` (an `est` member, if present, is checked too). */
export const checkLensCase = (c: unknown): string | undefined => {
  if (!isObject(c)) return `malformed lens case: ${show(c)}`
  const name = show(get(c, "name"))
  const type = get(c, "type")
  const expected = get(c, "lens")
  if (typeof expected !== "string") return `lens case ${name}: no expected "lens" string`
  if (!Object.prototype.hasOwnProperty.call(c, "input")) return `lens case ${name}: no "input"`
  let actual: string
  if (type === "value") actual = lensValue(c.input)
  else if (type === "reply") actual = lensReply(c.input)
  else return `lens case ${name}: unknown type ${show(type)}`
  if (actual !== expected) return `lens case ${name}: expected ${show(expected)}, got ${show(actual)}`
  const e = get(c, "est")
  if (e !== undefined && est(actual) !== e) return `lens case ${name}: expected est ${show(e)}, got ${est(actual)}`
  return undefined
}

/** A printable.json case: `{text, printable}`. */
export const checkPrintableCase = (c: unknown): string | undefined => {
  if (!isObject(c)) return `malformed printable case: ${show(c)}`
  const t = get(c, "text")
  const expected = get(c, "printable")
  if (typeof t !== "string" || typeof expected !== "string") return `malformed printable case: ${show(c)}`
  const actual = printable(t)
  if (actual !== expected) return `printable case ${show(t)}: expected ${show(expected)}, got ${show(actual)}`
  return undefined
}
