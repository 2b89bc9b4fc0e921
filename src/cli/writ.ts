// `mandate writ ...`: Writ v0.1 commands. A group of @effect/cli subcommands, so that `issue`,
// `verify` and others can be added beside `conformance`.
import { Args, Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { formatFailure, runConformance, summary } from "../writ/conformance.js"
import { writSubcommands } from "./writ-commands.js"

/** `mandate writ conformance DIR`: runs every vector file in DIR (spec section 14), prints one line
 * per failure and `N passed, N failed`; exits 1 when any failed. */
export const conformanceCommand = Command.make(
  "conformance",
  { dir: Args.directory({ name: "DIR", exists: "yes" }) },
  ({ dir }) =>
    Effect.gen(function* () {
      const results = yield* runConformance(dir)
      for (const r of results) if (!r.pass) yield* Console.log(formatFailure(r))
      yield* Console.log(summary(results))
      if (results.some((r) => !r.pass)) yield* Effect.sync(() => { process.exitCode = 1 })
    })
).pipe(Command.withDescription("Run every Writ v0.1 conformance vector in DIR (spec section 14)"))

export const writCommand = Command.make("writ").pipe(
  Command.withDescription("Writ v0.1: writs, calls, tallies, revokes and acks"),
  Command.withSubcommands([conformanceCommand, ...writSubcommands])
)
