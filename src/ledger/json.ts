// Plain JSON values for fingerprint metadata (seed "Protocol fingerprint metadata must be JSON
// serializable. Arbitrary object repr values are not accepted because they may be
// process-dependent"). Only null, booleans, finite numbers, strings, arrays and plain objects pass;
// a Date, a Map, a class instance, a function, a bigint, undefined, NaN or a cycle is refused with
// reason `non_json_metadata` and the path of the first offending member. Depth and size are bounded.
import { Effect, Schema } from "effect"
import { ledgerError, type LedgerError } from "./reason.js"

export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | { readonly [k: string]: JsonValue }

export const MAX_DEPTH = 16
export const MAX_NODES = 10_000

/** The first reason `value` is not plain JSON, with its path; undefined when it is. */
export const jsonProblem = (value: unknown): { path: string; detail: string } | undefined => {
  let nodes = 0
  const seen = new Set<object>()
  const walk = (v: unknown, path: string, depth: number): { path: string; detail: string } | undefined => {
    if (++nodes > MAX_NODES) return { path, detail: `more than ${MAX_NODES} values` }
    if (depth > MAX_DEPTH) return { path, detail: `nested deeper than ${MAX_DEPTH}` }
    if (v === null || typeof v === "boolean" || typeof v === "string") return undefined
    if (typeof v === "number") return Number.isFinite(v) ? undefined : { path, detail: `non-finite number ${v}` }
    if (typeof v !== "object") return { path, detail: `a ${typeof v} is not JSON` }
    if (seen.has(v)) return { path, detail: "a cycle is not JSON" }
    seen.add(v)
    try {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const p = walk(v[i], `${path}[${i}]`, depth + 1)
          if (p) return p
        }
        return undefined
      }
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) {
        return { path, detail: `a ${(v as object).constructor?.name ?? "non-plain"} object is not JSON (its repr may be process-dependent)` }
      }
      for (const k of Object.keys(v)) {
        const p = walk((v as Record<string, unknown>)[k], `${path}.${k}`, depth + 1)
        if (p) return p
      }
      return undefined
    } finally {
      seen.delete(v)
    }
  }
  return walk(value, "metadata", 0)
}

/** `value` as plain JSON, or a LedgerError `non_json_metadata` naming the first bad member. */
export const requireJson = (value: unknown): Effect.Effect<JsonValue, LedgerError> => {
  const p = jsonProblem(value)
  return p === undefined ? Effect.succeed(value as JsonValue) : Effect.fail(ledgerError("non_json_metadata", p.detail, p.path))
}

const isJsonMembers = (o: { readonly [k: string]: unknown }): o is { readonly [k: string]: JsonValue } =>
  jsonProblem(o) === undefined

/** A Schema for a plain JSON object (fingerprint metadata). */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter(isJsonMembers, {
    identifier: "JsonObject",
    message: (issue) => {
      const p = jsonProblem(issue.actual)
      return p === undefined ? "non_json_metadata" : `non_json_metadata at ${p.path}: ${p.detail}`
    }
  })
)
