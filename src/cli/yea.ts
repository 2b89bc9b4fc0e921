// `mandate yea ...`: YEA protocol commands.
import { Command } from "@effect/cli"
import { Console } from "effect"

export const yeaCommand = Command.make("yea", {}, () =>
  Console.log("mandate yea: see `mandate yea --help`")
).pipe(Command.withDescription("YEA: grants, proofs, Lens and the conformance runner"))
