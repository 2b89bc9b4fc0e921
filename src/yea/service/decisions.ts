// What the YEA runtime decided, as events for the decision ledger: its proposals, the
// consents it required, its commits and undos and the uses they spent. The runtime publishes to
// accounting's DecisionEvents and never imports the ledger (DESIGN.md). The principal recorded is
// the requester's verified proof key (§6.5), or `-` for a request without a proof; a replayed
// COMMIT or UNDO (§4.4, §4.5) answers an earlier decision and is not recorded again.
import { Effect } from "effect"
import { type DecisionEventsService, type DecisionInput, protocolDecision } from "../../accounting/decision-events.js"
import type { ReplyBody, RequestFrame } from "../frame.js"
import { formatQuantity, type Uses } from "../measure.js"

/** A reply's `uses` (§5.1) as decision amounts: `measure` or `measure:UNIT`, plain decimal. */
const amountsOf = (uses: Uses | undefined) =>
  Object.entries(uses ?? {}).map(([m, q]) => ({
    name: q.unit === undefined ? m : `${m}:${q.unit}`,
    amount: formatQuantity({ amount: q.amount, ...(q.scale !== undefined ? { scale: q.scale } : {}) })
  }))

/** What the request was about, before any reply: the proposal, receipt or capability it named. */
const subjectOf = (f: RequestFrame): string | undefined =>
  f.verb === "COMMIT" ? f.proposal : f.verb === "UNDO" ? f.receipt : f.verb === "ASK" || f.verb === "INTENT" ? f.capability : undefined

/** The decisions a final reply to `frame` records (none for HELLO, ASK answers, EXPAND). */
export const decisionsOf = (frame: RequestFrame, requester: string | undefined, body: ReplyBody): ReadonlyArray<DecisionInput> => {
  const base = { protocol: "yea", principal: requester } as const
  switch (body.kind) {
    case "PROPOSALS":
      return body.proposals.map((p) => ({ ...base, kind: "proposal", subject: p.id, operation: p.capability }))
    case "RECEIPT": {
      if (body.replay === true) return []
      const r = body.receipt
      if (r.undoes !== undefined) return [{ ...base, kind: "undo", subject: r.proposal, operation: r.capability }]
      const spent = amountsOf(r.uses)
      return [
        { ...base, kind: "commit", subject: r.proposal, operation: r.capability },
        ...(spent.length > 0 ? [{ ...base, kind: "uses_spent" as const, subject: r.proposal, operation: r.capability, amounts: spent }] : [])
      ]
    }
    case "ERROR": {
      if (frame.verb === "HELLO" || frame.verb === "EXPAND") return []
      const operation = frame.verb === "ASK" || frame.verb === "INTENT" ? frame.capability : undefined
      return [{
        ...base,
        kind: body.code === "consent_required" ? "consent_required" : "refused",
        subject: subjectOf(frame),
        operation,
        reason: body.code
      }]
    }
    default:
      return []
  }
}

/** Publishes the decisions of one reply; never fails the request. */
export const publishReply = (events: DecisionEventsService, frame: RequestFrame, requester: string | undefined, body: ReplyBody): Effect.Effect<void> =>
  Effect.forEach(decisionsOf(frame, requester, body), (d) => events.publish(protocolDecision(d)), { discard: true })
