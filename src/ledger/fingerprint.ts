// Deterministic semantic fingerprints and dedup scopes (seed "Fingerprints and deduplication").
// A fingerprint is SHA-256 over the RFC 8785 canonical JSON of what the scope says
// makes two actions "the same": member order, whitespace and number spelling do not matter, and
// only plain JSON is accepted (json.ts), so the same action fingerprints the same in every process.
import { Either, Schema } from "effect"
import { encodeCanonical, hashTextB64 } from "../kernel/index.js"
import { jsonProblem, type JsonValue } from "./json.js"
import type { Action } from "./model.js"
import { ledgerError, type LedgerError } from "./reason.js"

/**
 * - `exact`: kind and metadata: the same action anywhere in the ledger's scope is a duplicate;
 * - `once_per_state`: also the agent's `state`: the same action may run again once the state changed;
 * - `once_per_phase`: also the `phase`;
 * - `retry_aware`: also the `retry` number: a deliberate retry is a new attempt, a repeat of the
 *   same attempt is a duplicate.
 */
export const DedupScope = Schema.Literal("exact", "once_per_state", "once_per_phase", "retry_aware")
export type DedupScope = typeof DedupScope.Type

/** What the scope fingerprints, as canonical JSON input. */
const material = (action: Action, metadata: JsonValue, scope: DedupScope): JsonValue => {
  const base = { v: 1, scope, kind: action.kind, metadata }
  switch (scope) {
    case "exact": return base
    case "once_per_state": return { ...base, state: action.state ?? null }
    case "once_per_phase": return { ...base, phase: action.phase ?? null }
    case "retry_aware": return { ...base, retry: action.retry ?? 0 }
  }
}

/**
 * The action's fingerprint in `scope` (43 base64url characters), or `non_json_metadata`: a plain
 * function (an Either is also an Effect), computed on every guarded action.
 */
export const fingerprint = (action: Action, scope: DedupScope = "exact"): Either.Either<string, LedgerError> => {
  const p = jsonProblem(action.metadata)
  if (p !== undefined) return Either.left(ledgerError("non_json_metadata", p.detail, p.path))
  return Either.right(hashTextB64(encodeCanonical(material(action, action.metadata as JsonValue, scope), "utf16")))
}
