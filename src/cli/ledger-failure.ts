// How a `mandate ledger` failure prints: one line, `error: <code> at <where>: <why>`, the form of
// every CLI failure (run.ts). The code is the ledger's reason (src/ledger/reason.ts) for its own
// checks, `mandate/store_unavailable` when the store could not do what was asked (the form
// `writ serve` uses), `mandate/unreadable` for a file the system refused, else `mandate/internal`.
// The line never shows what only the implementation knows: error class names (`StoreError`),
// driver prefixes (`PgClient:`), Effect module names (`FileSystem.readFile`) or a Schema's
// TypeScript rendering of a type.
import { ParseResult } from "effect"

export interface Failure {
  readonly reason: string
  readonly where: string
  readonly why: string
}

/** `PgClient: Failed to connect: x` is `Failed to connect: x`: leading CamelCase names dropped. */
const withoutNames = (text: string): string =>
  text.replace(/(^|:\s)(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|FiberFailure|Error)(?:\s*\[[^\]]*\])?:\s/g, "$1").replace(/\s*\n\s*/g, " ").trim()

/** A Schema failure as the path of its first issue and a sentence: an expected type that Schema
 * would spell as a TypeScript type (`{ readonly type: ... }`) is said as "not an event". */
export const describeParseError = (e: ParseResult.ParseError): { readonly path: string; readonly why: string } => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(e)[0]
  if (issue === undefined) return { path: "", why: "not an event" }
  const path = issue.path.map(String).join(".")
  const actual = /, actual (.*)$/s.exec(issue.message)?.[1]
  if (issue._tag === "Unexpected") return { path, why: `not a member of this event (${issue.message.replace(/^is unexpected, /, "")})` }
  const why = /\{ readonly |readonly \w+:/.test(issue.message)
    ? `not ${path === "" ? "an event" : "the expected object"}${actual === undefined ? "" : ` (got ${actual.slice(0, 80)})`}`
    : issue.message.slice(0, 300)
  return { path, why }
}

/** The printed parts of any failure of a ledger command run at `command` (`mandate ledger init`). */
export const ledgerFailure = (e: unknown, command: string): Failure => {
  const r = (typeof e === "object" && e !== null ? e : {}) as {
    readonly _tag?: string; readonly reason?: unknown; readonly detail?: string; readonly path?: string; readonly message?: string
    readonly store?: string; readonly pathOrDescriptor?: unknown; readonly description?: string
  }
  switch (r._tag) {
    case "LedgerError":
      return { reason: String(r.reason), where: r.path === undefined || r.path === "" ? command : r.path, why: withoutNames(r.detail ?? "") }
    case "StoreError":
      return { reason: "mandate/store_unavailable", where: r.store ?? command, why: withoutNames(r.message ?? "") }
    case "SystemError":
    case "BadArgument":
      return {
        reason: "mandate/unreadable",
        where: typeof r.pathOrDescriptor === "string" ? r.pathOrDescriptor : command,
        why: withoutNames(r.description ?? String(r.reason ?? "the system refused"))
      }
    default:
      return { reason: "mandate/internal", where: command, why: withoutNames(r.message ?? String(e)) }
  }
}
