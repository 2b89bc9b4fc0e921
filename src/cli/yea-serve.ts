// `mandate yea serve calendar|shop` or `mandate yea serve --module FILE`: an example service, or a
// service declared in a module (src/app/yea-module.ts), on TCP (default), the HTTP bridge or stdio.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { moduleRuntime } from "../app/yea-module.js"
import { exampleRuntime } from "../examples/runtime.js"
import { serveOn, stateLayer, type Transport } from "../app/yea-serve.js"
import { cliError, runCommand } from "./writ-io.js"
import { trustOf } from "./yea-local.js"

const name = Args.choice([["calendar", "calendar"], ["shop", "shop"]] as const, { name: "SERVICE" }).pipe(
  Args.withDescription("The example service to serve, calendar or shop (or give --module FILE instead)"),
  Args.optional
)
const module = Options.file("module").pipe(Options.optional, Options.withDescription("serve the service this module exports (`service` or `default`) instead of an example"))
const port = Options.integer("port").pipe(Options.withDefault(7447), Options.withDescription("TCP or HTTP port"))
const http = Options.boolean("http").pipe(Options.withDescription("serve the HTTP bridge instead of yea://"))
const stdio = Options.boolean("stdio").pipe(Options.withDescription("serve on stdin/stdout (a child process)"))
const trust = Options.text("trust").pipe(Options.repeated, Options.withDescription("a principal key whose grants are accepted (repeatable; default: YEA_TRUST, else your own principal key)"))
const tlsCert = Options.file("tls-cert").pipe(Options.optional, Options.withDescription("serve yeas:// (TLS) with this PEM certificate (needs --tls-key)"))
const tlsKey = Options.file("tls-key").pipe(Options.optional, Options.withDescription("the PEM private key of --tls-cert"))
const host = Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("the address to listen on (0.0.0.0 inside a container)"))
const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("keep state in this SQLite file (default: memory)"))

export const yeaServeCommand = Command.make("serve", { name, module, port, http, stdio, trust, sqlite, host, tlsCert, tlsKey }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        if (Option.isSome(o.tlsCert) !== Option.isSome(o.tlsKey)) return yield* Effect.fail(cliError("mandate/usage", "--tls-cert and --tls-key go together"))
        if (Option.isSome(o.tlsCert) && (o.http || o.stdio)) return yield* Effect.fail(cliError("mandate/usage", "--tls-cert serves yeas:// (TCP), not --http or --stdio"))
        const fs = yield* FileSystem.FileSystem
        const read = (path: string) => Effect.mapError(fs.readFile(path), (e) => cliError("mandate/unreadable", e.message, path))
        const tls = Option.isSome(o.tlsCert) && Option.isSome(o.tlsKey) ? { tls: { cert: yield* read(o.tlsCert.value), key: yield* read(o.tlsKey.value) } } : {}
        const transport: Transport = o.stdio ? { _tag: "stdio" } : o.http ? { _tag: "http", port: o.port, host: o.host } : { _tag: "tcp", port: o.port, host: o.host, ...tls }
        if (Option.isSome(o.name) === Option.isSome(o.module)) {
          return yield* Effect.fail(cliError("invalid_params", "name an example service (calendar, shop) or give --module FILE, not both", "SERVICE"))
        }
        const trusted = yield* trustOf(o.trust)
        const runtime = Option.isSome(o.module)
          ? yield* Effect.mapError(moduleRuntime(o.module.value, trusted), (e) => cliError(e.reason, e.message, e.path))
          : yield* exampleRuntime(Option.getOrThrow(o.name), trusted)
        const url = yield* Effect.mapError(serveOn(runtime, transport), (e) => cliError(e.reason, e.message, e.path))
        if (transport._tag === "stdio") return
        yield* Console.error(`serving ${runtime.id} at ${url}`)
        yield* Effect.never
      }).pipe(Effect.provide(stateLayer(Option.getOrUndefined(o.sqlite))), Effect.mapError((e) => ("reason" in e ? e : cliError("unavailable", e.message))))
    )
  )
)
