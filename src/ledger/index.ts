// The decision ledger (seed 003), by concept:
//   model.ts        Action, Cost, TokenUsage, Decision, Directive, Outcome, ValueEstimate
//   reason.ts       the closed union of reason codes and LedgerError
//   usd.ts          exact decimal USD (nano-dollars)          json.ts  plain-JSON metadata
//   fingerprint.ts  semantic fingerprints and dedup scopes
//   policy.ts       budgets, per-kind limit, dedup, verification reserve, value vs cost; compose
//   policy-spec.ts  a policy as data (files, CLI, replay)
//   capability.ts   capability negotiation (derived, never trusted)
//   directive.ts    the contract of the extension directives
//   guard.ts        guard(action, run): decide, reserve, run, settle, record; modes; recovery
//   events.ts       the JSONL event Schemas           writer.ts  lines, modes, the store primitives
//   chain.ts        reading and verifying the hash chain
//   privacy.ts      safe_telemetry                     aggregate.ts  aggregate_export
//   value.ts        value estimates and estimator state
//   outcome.ts      recording outcomes and observations
//   replay.ts       replay under another policy       stats.ts  grouping by protocol, principal, reason
//   subscriber.ts   the ledger's DecisionEvents Layer (Writ and YEA decisions)
export { DecisionReason, ledgerError, LedgerError, LedgerReason, SettlementReason } from "./reason.js"
export { fromNanos, toNanos, Usd } from "./usd.js"
// ./json.js: nothing public (its names are used inside this folder only)
export {
  Action, AgentDirective, allow, Cost, Decision, deny, Directive, Id, Kind, Mode, Outcome, TokenUsage,
  ValueEstimate, VERIFY_KIND
} from "./model.js"
export { fingerprint } from "./fingerprint.js"
export {
  budgetKey, compose, dedup, directivePolicy, type Draw, kindLimit, type Policy, tokenBudget, usdBudget,
  valueVsCost, verificationReserve
} from "./policy.js"
export { decodePolicySpec, toPolicy } from "./policy-spec.js"
export { type Adapter, AgentCapabilities, negotiate, requireMode } from "./capability.js"
export {
  ActionDenied, DirectiveIssued, type Guard, GuardAbort, type GuardConfig, type GuardOptions, makeGuard,
  recoverHeld
} from "./guard.js"
export { EventBody, type LedgerEvent, LedgerMode } from "./events.js"
export {
  createLedger, type Head, type HeldReservation, type LedgerBackend, type LedgerInfo, LedgerKey, LedgerStore,
  LedgerWriter, lineHash, makeWriter, type StoredLine
} from "./writer.js"
export { boundedLines, MAX_LINE_BYTES, readLedger, type Verified, verifyLedger } from "./chain.js"
export {
  heldPseudonyms, keyCheck, makeSanitizer, pseudonym, PSEUDONYM, TELEMETRY_KEY_BYTES, type TelemetryKey
} from "./privacy.js"
export { initialFingerprint, makeValueEstimator, ValueEstimator, valueEstimatorLayer } from "./value.js"
export { aggregate } from "./aggregate.js"
export { replay, REPLAY_NOTE } from "./replay.js"
export { stats } from "./stats.js"
export { ledgerSubscriber } from "./subscriber.js"
// ./directive.js: nothing public (its names are used inside this folder only)
export { checkOutcome, recordObservation, recordOutcome } from "./outcome.js"
