// `mandate console [--store FILE] [--ledger FILE] [--policy FILE] [--port N] [--host H]`: serves
// the read-only console page (src/console) on loopback until interrupted. Prints one line with its
// URL once it listens; any failure is one `error: <reason> at <where>: <why>` line and exit 1.
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { serveConsole } from "../console/listen.js"
import { parseJson } from "../kernel/json.js"
import { decodePolicySpec, toPolicy } from "../ledger/index.js"
import { cliError, runCommand } from "./writ-io.js"

const options = {
  store: Options.file("store").pipe(Options.optional, Options.withDescription("An executor's SQLite store (mandate writ serve --store): audit record and calls")),
  ledger: Options.file("ledger").pipe(Options.optional, Options.withDescription("A decision ledger's SQLite file (mandate ledger init)")),
  ledgerName: Options.text("ledger-name").pipe(Options.withDefault("default"), Options.withDescription("The ledger's name in that file")),
  policy: Options.file("policy").pipe(Options.optional, Options.withDescription("A policy file: show the replay diff of the ledger under it (mandate ledger replay)")),
  port: Options.integer("port").pipe(Options.withDefault(8484), Options.withDescription("TCP port (0: any free port)")),
  host: Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("Address to listen on (loopback by default)")),
  allowHost: Options.text("allow-host").pipe(Options.repeated, Options.withDescription("A Host name to answer besides loopback's (refused otherwise: DNS rebinding)"))
}

const readPolicy = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(Effect.mapError((e) => cliError("mandate/unreadable", e.message, file)))
    const parsed = parseJson(text, { maxDepth: 16, integersOnly: false })
    if (parsed._tag === "Left") return yield* Effect.fail(cliError("invalid_policy", parsed.left.message, file))
    const spec = yield* decodePolicySpec(parsed.right).pipe(Effect.mapError((e) => cliError(e.reason, e.detail, file)))
    return { file, policy: toPolicy(spec) }
  })

export const consoleCommand = Command.make("console", options, (o) =>
  runCommand(Effect.scoped(Effect.gen(function*() {
    const policy = Option.isSome(o.policy) ? Option.some(yield* readPolicy(o.policy.value)) : Option.none()
    const served = yield* serveConsole(
      { store: o.store, ledger: Option.map(o.ledger, (file) => ({ file, name: o.ledgerName })), policy },
      { port: o.port, host: o.host, allowHosts: o.allowHost }
    ).pipe(Effect.mapError((e) => cliError(e.reason, e.detail, e.where)))
    yield* Console.log(`console on ${served.url} (read-only; Ctrl-C stops it)`)
    return yield* Effect.never
  })))
)
