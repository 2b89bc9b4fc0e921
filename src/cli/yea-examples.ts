// `mandate yea examples [--port P] [--host H]`: the example calendar on port P and the example shop
// on P + 2, both over yea:// (docs/cli.md "Try it"), until interrupted. The reference also serves a
// billing YEA service on P + 4; Mandate's billing example is an MCP server (`yea mcp-example`), not
// a YEA service, so there is nothing to serve there.
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { exampleRuntime, type ExampleName } from "../examples/runtime.js"
import { serveOn, stateLayer } from "../app/yea-serve.js"
import { cliError, runCommand } from "./writ-io.js"
import { trustOf } from "./yea-local.js"

const port = Options.integer("port").pipe(
  Options.withDefault(7447),
  Options.withDescription("the calendar's TCP port; the shop is on this port + 2 (0: two free ports). There is no billing service on port + 4: Mandate's billing example is the MCP server of `mandate yea mcp-example`")
)
const host = Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("the address to listen on (0.0.0.0 inside a container)"))

/** The examples and their offsets from --port (docs/cli.md "Try it"). */
export const EXAMPLES: ReadonlyArray<readonly [ExampleName, number]> = [["calendar", 0], ["shop", 2]]

export const yeaExamplesCommand = Command.make("examples", { port, host }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        if (o.port < 0 || o.port + 2 > 65535) return yield* Effect.fail(cliError("mandate/usage", `--port ${o.port}: the calendar's port and port + 2 must both be between 0 and 65535`, "--port"))
        // Whom the services trust for writes: YEA_TRUST, else this home's principal key (docs/cli.md "Environment").
        const trusted = yield* trustOf([])
        for (const [name, offset] of EXAMPLES) {
          const runtime = yield* exampleRuntime(name, trusted)
          const url = yield* Effect.mapError(serveOn(runtime, { _tag: "tcp", port: o.port === 0 ? 0 : o.port + offset, host: o.host }), (e) => cliError(e.reason, e.message, e.path))
          yield* Console.log(`serving ${runtime.id} at ${url}`)
        }
        yield* Effect.never
      }).pipe(Effect.provide(stateLayer()), Effect.mapError((e) => ("reason" in e ? e : cliError("unavailable", e.message))))
    )
  )
)
