// The `mandate` command line: one @effect/cli tree. Each protocol contributes its own subcommand
// group from its own module so that the groups can grow independently.
import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { commands } from "./commands.js"

const mandate = Command.make("mandate").pipe(
  Command.withDescription("Authority, consent and spend control for AI agents"),
  Command.withSubcommands(commands)
)

const cli = Command.run(mandate, { name: "mandate", version: "0.1.0" })

// A usage error has already been printed by @effect/cli with the command's help; exit 1 without
// logging it a second time as an unexpected failure.
cli(process.argv).pipe(
  Effect.catchIf(ValidationError.isValidationError, () => Effect.sync(() => { process.exitCode = 1 })),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain
)
