// Runs `writScenariosCommand` on its own (until src/cli/writ.ts mounts it), for the CLI test:
// `npx tsx test/writ-executor/scenarios-main.ts DIR [--store ...]`.
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { writScenariosCommand } from "../../src/cli/writ-scenarios.js"

const cli = Command.run(writScenariosCommand, { name: "mandate writ scenarios", version: "0.1.0" })
cli(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
