// `mandate yea demo`: the whole YEA flow (src/examples/yea-demo.ts) on yea:// TCP, stdio and the HTTP
// bridge, with the example calendar and shop. Prints what the agent reads, checks every
// expectation, and exits 1 if any fails.
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer } from "effect"
import { DecisionEvents } from "../accounting/decision-events.js"
import { runDemo, type DemoKeys, type Reach } from "../examples/yea-demo.js"
import { exampleRuntime } from "../examples/runtime.js"
import { stateLayer } from "../app/yea-serve.js"
import { connectHttp } from "../bind/yea-http/client.js"
import { serveHttpBridge } from "../bind/yea-http/server.js"
import { connectStdio } from "../bind/yea-stdio/index.js"
import { connectTcp } from "../bind/yea-tcp/client.js"
import { serveTcp } from "../bind/yea-tcp/server.js"
import { RandomBytes } from "../kernel/services.js"
import { keyFromSeed } from "../yea/keys.js"
import { demoLedger, ledgerWhere } from "./demo-ledger.js"
import { describeFailure } from "./writ-io.js"
import { selfCommand } from "./self.js"
import { exitFailed } from "./io.js"

/** The three legs, each with fresh services; `self` is how to start this CLI as a child (stdio). */
export const demoLegs = (keys: DemoKeys, self: ReadonlyArray<string>) => {
  const trust = [keyFromSeed(keys.principal)]
  const tcp = Effect.gen(function* () {
    const urls = {
      calendar: (yield* serveTcp(yield* exampleRuntime("calendar", trust), { port: 0 })).url,
      shop: (yield* serveTcp(yield* exampleRuntime("shop", trust), { port: 0 })).url
    }
    const reach: Reach = (s) => connectTcp(new URL(urls[s]))
    return reach
  })
  const http = Effect.gen(function* () {
    const urls = {
      calendar: (yield* serveHttpBridge(yield* exampleRuntime("calendar", trust), { port: 0 })).url,
      shop: (yield* serveHttpBridge(yield* exampleRuntime("shop", trust), { port: 0 })).url
    }
    const reach: Reach = (s) => Effect.succeed(connectHttp(new URL(urls[s])))
    return reach
  })
  // One child per service for the whole leg, so the calendar keeps its state between steps.
  const stdio = Effect.gen(function* () {
    const conns = {
      calendar: yield* connectStdio(self[0], [...self.slice(1), "yea", "serve", "calendar", "--stdio", "--trust", trust[0]]),
      shop: yield* connectStdio(self[0], [...self.slice(1), "yea", "serve", "shop", "--stdio", "--trust", trust[0]])
    }
    const reach: Reach = (s) => Effect.succeed(conns[s])
    return reach
  })
  return [["yea:// (TCP)", tcp], ["stdio:", stdio], ["HTTP bridge", http]] as const
}

// With --ledger, the services of the in-process legs (yea:// and the HTTP bridge) record
// their decisions there; the stdio leg's services are child processes and record nothing.
const ledgerOption = Options.text("ledger").pipe(
  Options.optional,
  Options.withDescription("Record the services' decisions (TCP and HTTP legs) in this decision ledger, created when absent")
)

export const yeaDemoCommand = Command.make("demo", { ledger: ledgerOption }, ({ ledger }) => {
  const where = ledgerWhere(ledger)
  return Effect.gen(function* () {
    const random = yield* RandomBytes
    const keys: DemoKeys = { principal: yield* random.bytes(32), agent: yield* random.bytes(32) }
    const self = selfCommand()
    let failed = 0
    for (const [name, leg] of demoLegs(keys, self)) {
      yield* Console.log(`\n== ${name} ==`)
      const result = yield* Effect.scoped(Effect.flatMap(leg, (reach) => runDemo(reach, keys, Console.log))).pipe(
        Effect.provide(stateLayer()),
        Effect.catchAll((e) => Effect.succeed({ checks: 1, failures: [`${name}: ${e.message}`] }))
      )
      failed += result.failures.length
      yield* Console.log(`${name}: ${result.checks - result.failures.length}/${result.checks} checks passed`)
    }
    if (failed > 0) {
      yield* Console.log(`\n${failed} checks failed`)
      yield* exitFailed
    } else yield* Console.log("\nall checks passed on every transport")
  }).pipe(
    Effect.provide(Layer.merge(RandomBytes.live, where === undefined ? DecisionEvents.none : demoLedger(where))),
    Effect.catchTag("CliError", (e) => Effect.zipRight(Console.error(`error: ${describeFailure(e)}`), exitFailed))
  )
})
