// The decision events every protocol publishes (one ledger for all three
// protocols). A protocol never imports the ledger (DESIGN.md): Writ's executor and the YEA runtime
// publish what they allowed, refused and spent to this service, and the decision ledger provides a
// Layer that subscribes (src/ledger/subscriber.ts) and writes each event as a ledger line. The
// default Layer drops them, so a protocol runs unchanged with no ledger configured.
import { Context, Effect, Layer, Schema } from "effect"
import { hashB64 } from "../kernel/hash.js"

/** Which protocol decided. */
export const DecisionProtocol = Schema.Literal("writ", "yea", "ledger")
export type DecisionProtocol = typeof DecisionProtocol.Type

/**
 * What happened:
 * - writ: `accepted` (a call passed section 7 and runs), `refused` (with its section reason code),
 *   `consumed` (count/total drawn at acceptance, in `amounts`);
 * - yea: `proposal` (a proposal was presented), `consent_required`, `commit`, `undo`,
 *   `uses_spent` (a grant's `uses` or totals drawn, in `amounts`), `refused`.
 */
export const DecisionKind = Schema.Literal("accepted", "refused", "consumed", "proposal", "consent_required", "commit", "undo", "uses_spent")
export type DecisionKind = typeof DecisionKind.Type

const IDENT = /^[A-Za-z0-9._:@/+=#-]{1,256}$/
const OPERATION = /^[A-Za-z0-9._:/-]{1,128}$/
const AMOUNT_NAME = /^[A-Za-z0-9._:-]{1,64}$/
// A protocol's reason code; the executor's own codes are namespaced (`mandate/store_unavailable`).
const REASON = /^[a-z][a-z0-9_/]{0,63}$/
const DECIMAL = /^-?[0-9]{1,40}(\.[0-9]{1,18})?$/
const Ident = Schema.String.pipe(Schema.pattern(IDENT))

/** An amount drawn on a limit: `name` (e.g. `count`, `total:usd`), exact decimal `amount`. */
export const DecisionAmount = Schema.Struct({
  name: Schema.String.pipe(Schema.pattern(AMOUNT_NAME)),
  amount: Schema.String.pipe(Schema.pattern(DECIMAL))
})
export type DecisionAmount = typeof DecisionAmount.Type

export const ProtocolDecision = Schema.Struct({
  protocol: DecisionProtocol,
  kind: DecisionKind,
  /** Who the decision was for: a did:key, a principal id. */
  principal: Ident,
  /** What it was about: a call id, a writ hash, a proposal hash, a grant id. */
  subject: Ident,
  /** The operation or capability, e.g. `book`, `pay.card`. */
  operation: Schema.optional(Schema.String.pipe(Schema.pattern(OPERATION))),
  /** The protocol's own reason code for a refusal (a member of its closed union). */
  reason: Schema.optional(Schema.String.pipe(Schema.pattern(REASON))),
  amounts: Schema.optional(Schema.Array(DecisionAmount).pipe(Schema.maxItems(32)))
}).annotations({ identifier: "ProtocolDecision" })
export type ProtocolDecision = typeof ProtocolDecision.Type

export interface DecisionEventsService {
  /** Records one decision. Never fails the protocol's own work: a sink's failure is its own to log. */
  readonly publish: (event: ProtocolDecision) => Effect.Effect<void>
}

/** No ledger: every event is dropped. */
const dropAll: DecisionEventsService = { publish: () => Effect.void }

/**
 * Where decisions go. A Reference: when no Layer provides it, its default drops every event, so a
 * protocol reads it unconditionally and runs unchanged with no ledger configured.
 */
export class DecisionEvents extends Context.Reference<DecisionEvents>()("mandate/DecisionEvents", { defaultValue: () => dropAll }) {
  /** No ledger: every event is dropped (the default, made explicit). */
  static readonly none: Layer.Layer<DecisionEvents> = Layer.succeed(DecisionEvents, dropAll)
}

/** Publishes through the DecisionEvents in context (by default, dropped). */
export const publishDecision = (event: ProtocolDecision): Effect.Effect<void> =>
  Effect.flatMap(DecisionEvents, (events) => events.publish(event))

const utf8 = new TextEncoder()
/** `s` when it fits `pattern`; otherwise `h:` and its hash, so an odd value is still told apart but never dropped. */
const fit = (pattern: RegExp, s: string): string => (pattern.test(s) ? s : `h:${hashB64(utf8.encode(s))}`)

export interface DecisionInput {
  readonly protocol: DecisionProtocol
  readonly kind: DecisionKind
  /** Unknown (a refusal before the request had an identity): recorded as `-`. */
  readonly principal: string | null | undefined
  readonly subject: string | null | undefined
  readonly operation?: string | null | undefined
  readonly reason?: string | null | undefined
  readonly amounts?: ReadonlyArray<{ readonly name: string; readonly amount: string }>
}

/**
 * The ProtocolDecision for what a protocol saw, always valid against the Schema above, so a peer's
 * odd `op` or key cannot make the ledger drop the decision: identifiers, operations and amount
 * names outside the patterns become `h:` and their hash; a reason that is not a code (reasons come
 * from the protocols' closed unions, so this is a bug elsewhere) becomes `unknown_reason`; amounts
 * that are not decimals are left out (at most 32 kept).
 */
export const protocolDecision = (d: DecisionInput): ProtocolDecision => {
  const amounts = (d.amounts ?? []).filter((a) => DECIMAL.test(a.amount)).slice(0, 32).map((a) => ({ name: fit(AMOUNT_NAME, a.name), amount: a.amount }))
  return {
    protocol: d.protocol,
    kind: d.kind,
    principal: d.principal ? fit(IDENT, d.principal) : "-",
    subject: d.subject ? fit(IDENT, d.subject) : "-",
    ...(d.operation ? { operation: fit(OPERATION, d.operation) } : {}),
    ...(d.reason ? { reason: REASON.test(d.reason) ? d.reason : "unknown_reason" } : {}),
    ...(amounts.length > 0 ? { amounts } : {})
  }
}
