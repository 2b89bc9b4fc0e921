// The ledger's events (seed "Decision Ledger": "a schema-versioned JSONL evidence
// stream. It correlates actions, decisions, identities, costs, failures, observations, and
// outcomes"). One event per line; every line is the canonical JSON (RFC 8785) of an envelope plus
// its body, and carries `prev`, the hash of the line before it, so `verify` finds a changed,
// removed or reordered line (chain.ts).
import { Schema } from "effect"
import { ProtocolDecision } from "../accounting/decision-events.js"
import { Action, Cost, Decision, EstimatorState, Id, Kind, Outcome, TokenUsage } from "./model.js"
import { SettlementReason } from "./reason.js"
import { Usd, UsdNonNegative } from "./usd.js"

/** The JSONL schema version this code writes and reads. */
export const SCHEMA_VERSION = 1

/** Declared once, at creation (seed: "Every new ledger declares local_full or safe_telemetry"). */
export const LedgerMode = Schema.Literal("local_full", "safe_telemetry")
export type LedgerMode = typeof LedgerMode.Type

const Amount = Schema.String.pipe(Schema.pattern(/^[0-9]{1,40}$/))

export const HeaderBody = Schema.Struct({
  type: Schema.Literal("ledger"),
  schema: Schema.Literal("mandate.ledger"),
  mode: LedgerMode
})

export const ActionBody = Schema.Struct({ type: Schema.Literal("action"), run_id: Id, action: Action })

export const DecisionBody = Schema.Struct({ type: Schema.Literal("decision"), run_id: Id, decision: Decision })

export const ReservationBody = Schema.Struct({
  type: Schema.Literal("reservation"),
  run_id: Id,
  action_id: Id,
  reservation_id: Id,
  /** The process or worker that holds it (recovery after a crash settles its held reservations). */
  owner: Id,
  draws: Schema.Array(Schema.Struct({ key: Schema.String.pipe(Schema.maxLength(256)), limit: Amount, amount: Amount })).pipe(Schema.maxItems(64))
})

export const SettlementBody = Schema.Struct({
  type: Schema.Literal("settlement"),
  run_id: Id,
  action_id: Id,
  reservation_id: Id,
  state: Schema.Literal("committed", "released", "failed"),
  reason: SettlementReason,
  /** What the action actually cost (measured, or the conservative estimate on failure). */
  actual: Cost,
  tokens: Schema.optional(TokenUsage),
  /**
   * true when `actual` was estimated, not reported by the provider (a stream cut before its usage
   * chunk, an answer without usage: the gateway, src/gateway/guarded-call.ts). Absent: measured.
   */
  estimated: Schema.optional(Schema.Literal(true)),
  /** What stays consumed against the budgets: the actual usage, in full (0 when released). */
  kept_tokens: Amount,
  kept_usd: UsdNonNegative,
  /** What the kept usage took beyond the remaining budget (present only when it did). */
  overrun_tokens: Schema.optional(Amount),
  overrun_usd: Schema.optional(UsdNonNegative)
})

export const FailureBody = Schema.Struct({
  type: Schema.Literal("failure"),
  run_id: Id,
  action_id: Id,
  /** The failure's tag (e.g. `HttpError`), not its message: messages are free text. */
  error: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_.:-]{1,64}$/)),
  /** true when `actual` in the settlement was measured, false when conservatively estimated. */
  measured: Schema.Boolean
})

export const ObservationBody = Schema.Struct({
  type: Schema.Literal("observation"),
  kind: Kind,
  context: Schema.optional(Schema.String.pipe(Schema.maxLength(128))),
  gain_usd: Usd,
  estimator: EstimatorState
})

export const OutcomeBody = Schema.Struct({ type: Schema.Literal("outcome"), outcome: Outcome })

export const ProtocolBody = Schema.Struct({ type: Schema.Literal("protocol"), decision: ProtocolDecision })

export const EventBody = Schema.Union(
  HeaderBody,
  ActionBody,
  DecisionBody,
  ReservationBody,
  SettlementBody,
  FailureBody,
  ObservationBody,
  OutcomeBody,
  ProtocolBody
)
export type EventBody = typeof EventBody.Type
export type EventType = EventBody["type"]

/** What every line carries besides its body. */
export const Envelope = Schema.Struct({
  v: Schema.Literal(SCHEMA_VERSION),
  ledger: Id,
  seq: Schema.Int.pipe(Schema.nonNegative()),
  /** Hash of the previous line (base64url SHA-256 of its bytes); null on the header, seq 0. */
  prev: Schema.NullOr(Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{43}$/))),
  /** ISO 8601 UTC; in safe_telemetry generalized to the hour. */
  at: Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{3})?)?Z$/))
})
export type Envelope = typeof Envelope.Type

/** One ledger line, decoded: the envelope's members and the body's, side by side. */
export type LedgerEvent = Envelope & EventBody

/** Decodes one parsed line (both halves; excess members refused). */
export const decodeEvent = Schema.decodeUnknown(Schema.extend(Envelope, EventBody), { onExcessProperty: "error" })
