// Capability negotiation (seed "Capability negotiation"). An adapter (the glue
// between an agent framework and the guard) states what it claims to observe and control, but the
// level the guard works at is DERIVED from what the adapter demonstrably does with a canary action:
// asked to deny it, did the canary still run? asked to allow it, did it run? does what it reports
// tell a canary that ran from one that never did? "A prompt convention or advisory skill is not
// enforcement": an adapter that only tells the agent is `advisory`.
import { Effect, Schema } from "effect"
import type { Action, Directive, Mode } from "./model.js"
import { ledgerError, type LedgerError } from "./reason.js"

/** What an adapter says about itself: untrusted input, recorded but never believed. */
export const AgentCapabilities = Schema.Struct({
  observe: Schema.Array(Schema.Literal("actions", "tokens", "usd", "latency", "outcomes")).pipe(Schema.maxItems(8)),
  control: Schema.Array(Schema.Literal("block", "modify", "defer", "reuse", "stop")).pipe(Schema.maxItems(8))
}).annotations({ identifier: "AgentCapabilities" })
export type AgentCapabilities = typeof AgentCapabilities.Type

/** `block`: can stop an action from running; `observe`: sees actions run; `advisory`: neither shown. */
export type CapabilityLevel = "block" | "observe" | "advisory"

export interface Adapter {
  readonly name: string
  readonly claimed: AgentCapabilities
  /**
   * The adapter's interception point, if it has one: given an action, the guard's directive and the
   * effect that performs the action, the adapter runs it or not. Absent: the adapter cannot
   * intercept anything (a prompt convention).
   */
  readonly intercept?: (action: Action, directive: Directive, perform: Effect.Effect<void>) => Effect.Effect<void, unknown>
  /** Whether the adapter saw `action` run (checked against canaries that did and did not run). */
  readonly reports?: (action: Action) => Effect.Effect<boolean, unknown>
}

const canary = (id: string): Action => ({
  id: `capability-canary-${id}`,
  kind: "canary",
  metadata: {},
  estimate: { tokens: 0, usd: "0" as Action["estimate"]["usd"], latency_ms: 0, risk: 0 }
})

declare const Negotiated: unique symbol
/** A level that came out of `negotiate`: only this module makes one. */
export interface NegotiatedCapabilities {
  readonly [Negotiated]: true
  readonly adapter: string
  readonly level: CapabilityLevel
  readonly claimed: AgentCapabilities
}

/**
 * Derives the adapter's level from three canaries; the claim is only recorded:
 * - one it is told to deny and one it is told to allow, through its interception point: `block`
 *   if the denied one did not run and the allowed one did, `observe` if both ran (it sees actions
 *   pass but does not stop them), `advisory` otherwise or without an interception point (nothing
 *   it could do can be seen, so nothing is believed);
 * - when it also reports, it must say the allowed canary ran and a third, never proposed, did not:
 *   a report that cannot tell them apart is not observation, and the level is `advisory`.
 * A failing adapter demonstrates nothing.
 */
export const negotiate = (adapter: Adapter): Effect.Effect<NegotiatedCapabilities> =>
  Effect.gen(function*() {
    let level: CapabilityLevel = "advisory"
    if (adapter.intercept !== undefined) {
      let ranWhenDenied = false
      let ranWhenAllowed = false
      yield* Effect.ignore(adapter.intercept(canary("denied"), { _tag: "deny" }, Effect.sync(() => { ranWhenDenied = true })))
      yield* Effect.ignore(adapter.intercept(canary("allowed"), { _tag: "allow" }, Effect.sync(() => { ranWhenAllowed = true })))
      if (!ranWhenDenied && ranWhenAllowed) level = "block"
      else if (ranWhenAllowed) level = "observe"
    }
    if (level !== "advisory" && adapter.reports !== undefined) {
      const sawRun = yield* Effect.orElseSucceed(adapter.reports(canary("allowed")), () => false)
      const sawNever = yield* Effect.orElseSucceed(adapter.reports(canary("never")), () => true)
      if (!sawRun || sawNever) level = "advisory"
    }
    return { adapter: adapter.name, level, claimed: adapter.claimed } as NegotiatedCapabilities
  })

/** `enforce` needs an adapter that demonstrably blocked the canary (reason `enforce_requires_blocking`). */
export const requireMode = (mode: Mode, caps: NegotiatedCapabilities): Effect.Effect<void, LedgerError> =>
  mode === "enforce" && caps.level !== "block"
    ? Effect.fail(ledgerError(
      "enforce_requires_blocking",
      `adapter ${caps.adapter} did not block a denied canary action (level ${caps.level}); use shadow or recommend`
    ))
    : Effect.void
