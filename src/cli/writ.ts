// `mandate writ ...`: Writ v0.1 commands.
import { Command } from "@effect/cli"
import { Console } from "effect"

export const writCommand = Command.make("writ", {}, () =>
  Console.log("mandate writ: see `mandate writ --help`")
).pipe(Command.withDescription("Writ v0.1: writs, calls, tallies, revokes and acks"))
