// `--ledger` of `mandate demo` and `mandate yea demo` (the Writ demo and the YEA demo,
// run with a ledger, leave one verifiable ledger holding both). The location is made absolute
// (the demo's executor processes run from the repository root), and the ledger is created before
// any process writes to it.
import { Effect, Layer, Option } from "effect"
import { resolve } from "node:path"
import type { DecisionEvents } from "../accounting/decision-events.js"
import { parseLocation, recordDecisions } from "../app/ledger-open.js"
import { cliError, type CliError } from "./writ-io.js"

export const ledgerWhere = (o: Option.Option<string>): string | undefined =>
  Option.match(o, { onNone: () => undefined, onSome: (l) => (/^postgres(ql)?:\/\//.test(l) ? l : resolve(l)) })

/** The DecisionEvents Layer into the ledger at `where`, its failures as the command's (`mandate/ledger_unavailable`). */
export const demoLedger = (where: string): Layer.Layer<DecisionEvents, CliError> =>
  recordDecisions(parseLocation(where)).pipe(
    Layer.mapError((e) => cliError("mandate/ledger_unavailable", e._tag === "LedgerError" ? `${e.reason}: ${e.detail}` : e.message, where))
  )

/** Creates the ledger at `where` if absent (local_full), then lets it go. */
export const ensureLedger = (where: string): Effect.Effect<void, CliError> => Effect.scoped(Layer.build(demoLedger(where)))
