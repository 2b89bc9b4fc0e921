// `mandate demo` (npm start): the three-agent demo of spec Appendix A, A in this process and B and
// C as `mandate writ serve` processes on loopback (src/cli/demo/). Exit status 1 when any
// expectation fails; the child processes are stopped on every exit path.
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { RandomBytes } from "../kernel/services.js"
import { ensureLedger, ledgerWhere } from "./demo-ledger.js"
import { runDemo } from "./demo/run.js"
import { runCommand } from "./writ-io.js"
import { exitFailed } from "./io.js"

const out = Options.text("out").pipe(Options.withDefault("out"), Options.withDescription("Folder for every object exchanged, the stores and the transcript"))

const cHandler = Options.file("c-handler").pipe(
  Options.optional,
  Options.withDescription("Run C (payment) with this handler module instead of the example payment handler (src/examples/payment.ts)")
)

const ledgerOption = Options.text("ledger").pipe(
  Options.optional,
  Options.withDescription("Record B's and C's decisions in this decision ledger (SQLite file or postgres://...#schema), created when absent")
)

export const demoCommand = Command.make("demo", { out, cHandler, ledger: ledgerOption }, ({ out, cHandler, ledger: l }) =>
  runCommand(Effect.gen(function*() {
    const ledger = ledgerWhere(l)
    if (ledger !== undefined) yield* ensureLedger(ledger)
    const ok = yield* runDemo({ out, ...(Option.isSome(cHandler) ? { cHandler: cHandler.value } : {}), ...(ledger !== undefined ? { ledger } : {}) }).pipe(Effect.provide(RandomBytes.live))
    if (!ok) yield* exitFailed
  }))
)
