// The one typed failure of a durable store. Every store in the project (accounting, the Writ
// executor's call/tally/revoke/reversal stores, YEA grant totals, ledger budgets) answers a read or
// write it could not complete with this error, naming the operation, so protocol code can apply its
// spec's rule for write failures in one place (Writ §9: a failed write at §7 steps 9-10 means the
// operation MUST NOT run; YEA §6.3: a failed reservation means no commit).
import { Schema } from "effect"

export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  /** The store operation that failed, e.g. "reservations.reserve" or "writ.callStore.put". */
  operation: Schema.String,
  /** Where the store lives: its file, or its server without credentials (named in startup errors). */
  store: Schema.optional(Schema.String),
  /** Human-readable detail (the driver's message); never parsed by callers. */
  message: Schema.String,
  /** The underlying driver error, when there is one. */
  cause: Schema.optional(Schema.Unknown)
}) {}

/** Wraps any unknown failure as a StoreError for `operation` (of the store at `store`, when known). */
export const storeError = (operation: string, store?: string) => (cause: unknown): StoreError =>
  cause instanceof StoreError
    ? cause
    : store === undefined
    ? new StoreError({ operation, message: describeCause(cause), cause })
    : new StoreError({ operation, store, message: describeCause(cause), cause })

/** The message of an error and of the errors it wraps (drivers nest the useful one). */
export const describeCause = (cause: unknown): string => {
  const parts: Array<string> = []
  let c: unknown = cause
  for (let i = 0; i < 4 && c !== undefined && c !== null; i++) {
    const m = c instanceof Error || (typeof c === "object" && "message" in c) ? String((c as { message: unknown }).message) : String(c)
    if (m.length > 0 && !parts.includes(m)) parts.push(m)
    c = typeof c === "object" && "cause" in c ? (c as { cause: unknown }).cause : undefined
  }
  return parts.join(": ")
}
