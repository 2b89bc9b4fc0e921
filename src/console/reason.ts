// The console's own reason codes (implementation codes, namespaced `console/` as Writ section 11
// asks of codes outside its table), defined once here. Every refusal of the console's server is a
// ConsoleError carrying one of them; the HTTP layer turns it into `{"error": reason, "detail"}`
// with the status below, the CLI into its one `error:` line.
import { ParseResult, Schema } from "effect"

export const ConsoleReason = Schema.Literal(
  /** The Host header names something other than loopback (DNS rebinding), and --host did not allow it. */
  "console/host_refused",
  /** A query parameter or body does not decode (its Schema names what is wrong). */
  "console/bad_request",
  /** No such page, asset or record. */
  "console/not_found",
  /** The view needs a store or ledger the console was not given. */
  "console/not_configured",
  /** The store or ledger could not be opened or read. */
  "console/store_unavailable",
  /** A file given does not hold what the view needs (a tally, an answer, a call). */
  "console/wrong_type",
  /** Run from the sources, the page could not be bundled (esbuild missing or failing). */
  "console/bundle_failed",
  /** Run from dist/, the page `npm run build` bundles is missing or unreadable. */
  "console/not_built",
  /** A body over the size the console reads. */
  "console/too_large",
  /** A request to the API from a page of another origin (its Origin or Sec-Fetch-Site says so). */
  "console/origin_refused",
  /** The peer already holds its share of the console's connections (answered before reading). */
  "console/too_many_connections"
)
export type ConsoleReason = typeof ConsoleReason.Type

export class ConsoleError extends Schema.TaggedError<ConsoleError>()("ConsoleError", {
  reason: ConsoleReason,
  detail: Schema.String,
  where: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `${this.reason}${this.where ? ` at ${this.where}` : ""}: ${this.detail}`
  }
}

export const consoleError = (reason: ConsoleReason, detail: string, where?: string): ConsoleError =>
  new ConsoleError(where === undefined ? { reason, detail } : { reason, detail, where })

/** HTTP status of each reason. */
export const statusOf: Record<ConsoleReason, number> = {
  "console/host_refused": 421,
  "console/bad_request": 400,
  "console/not_found": 404,
  "console/not_configured": 409,
  "console/store_unavailable": 503,
  "console/wrong_type": 422,
  "console/bundle_failed": 500,
  "console/not_built": 500,
  "console/too_large": 413,
  "console/origin_refused": 403,
  "console/too_many_connections": 503
}

/** A Schema failure as one short line: the first issue, with the member it is about. */
export const parseDetail = (e: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(e)
  const first = issues[0]
  if (first === undefined) return e.message.slice(0, 300)
  return `${first.path.length > 0 ? `${first.path.join(".")}: ` : ""}${first.message}`.slice(0, 300)
}
