// The ledger's side of "one ledger for all three protocols": a DecisionEvents
// Layer that writes every decision a protocol publishes (src/accounting/decision-events.ts) as a
// `protocol` line of this ledger. The protocols import only accounting; this Layer is chosen by the
// composition root. A ledger that cannot be written is logged, never a failure of the protocol's work.
import { Effect, Layer, Schema } from "effect"
import { DecisionEvents, ProtocolDecision } from "../accounting/decision-events.js"
import { LedgerWriter } from "./writer.js"

export const ledgerSubscriber: Layer.Layer<DecisionEvents, never, LedgerWriter> = Layer.effect(
  DecisionEvents,
  Effect.map(LedgerWriter, (writer) => ({
    publish: (event) =>
      Schema.validate(ProtocolDecision)(event).pipe(
        Effect.flatMap((decision) => writer.append([{ type: "protocol", decision }])),
        Effect.catchAll((e) => Effect.logWarning("decision ledger: protocol decision not recorded", e))
      )
  }))
)
