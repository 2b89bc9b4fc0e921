// `mandate writ gate MAPPING.json`: Writ in front of an HTTP API that has never heard of it
// (docs/writ-gate.md). Prints one JSON line `{"url","did","upstream","durable","resolved"}` once it
// listens, then serves until killed. Without `--store` the stores are in memory: a restart loses
// the replay, count and tally stores (section 9 says what that costs), and the line says
// `"durable":false`.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { startGate } from "../app/writ-gate.js"
import { describeServeError } from "../app/inputs.js"
import { encodeCanonical } from "../kernel/canonical.js"
import { exitFailed } from "./io.js"

export const writGateCommand = Command.make(
  "gate",
  {
    mapping: Args.text({ name: "MAPPING.json" }).pipe(Args.withDescription("The mapping file: upstream and routes (docs/writ-gate.md)")),
    key: Options.file("key", { exists: "yes" }).pipe(Options.withDescription("The gate's key file (mandate keygen; mode 0600): it signs every tally")),
    root: Options.text("root").pipe(Options.repeated, Options.withDescription("A root did:key to act under (section 7.1); repeat for several")),
    store: Options.text("store").pipe(Options.optional, Options.withDescription("SQLite file of every store (absent: memory, lost on restart)")),
    port: Options.integer("port").pipe(Options.withDefault(8090), Options.withDescription("TCP port (0: any free port)")),
    host: Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("Address to listen on"))
  },
  (o) =>
    Effect.scoped(Effect.gen(function*() {
      const gate = yield* startGate({
        mappingFile: o.mapping,
        seedFile: o.key,
        roots: o.root,
        port: o.port,
        host: o.host,
        ...(Option.isSome(o.store) ? { storeFile: o.store.value } : {})
      })
      yield* Console.log(encodeCanonical({ url: gate.url, did: gate.did, upstream: gate.upstream, durable: gate.durable, resolved: gate.resolved }, "utf16"))
      return yield* Effect.never
    })).pipe(
      Effect.catchAll((e) =>
        Effect.zipRight(Console.error(`error: ${describeServeError(e, "mandate writ gate")}`), exitFailed)
      )
    )
)
