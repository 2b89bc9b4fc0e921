// The decision ledger (issue 9; seed 003), by concept:
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
export * from "./reason.js"
export * from "./usd.js"
export * from "./json.js"
export * from "./model.js"
export * from "./fingerprint.js"
export * from "./policy.js"
export * from "./policy-spec.js"
export * from "./capability.js"
export * from "./guard.js"
export * from "./events.js"
export * from "./writer.js"
export * from "./chain.js"
export * from "./privacy.js"
export * from "./value.js"
export * from "./aggregate.js"
export * from "./replay.js"
export * from "./stats.js"
export * from "./subscriber.js"
export * from "./directive.js"
export * from "./outcome.js"
