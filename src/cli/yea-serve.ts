// `mandate yea serve calendar|shop` or `mandate yea serve --module FILE`: an example service, or a
// service declared in a module (src/app/yea-module.ts), on TCP (default), the HTTP bridge or stdio.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { moduleRuntime } from "../app/yea-module.js"
import { exampleRuntime, serveOn, stateLayer, type Transport } from "../app/yea-serve.js"
import { cliError, runCommand } from "./writ-io.js"

const name = Args.choice([["calendar", "calendar"], ["shop", "shop"]] as const, { name: "SERVICE" }).pipe(
  Args.withDescription("The example service to serve, calendar or shop (or give --module FILE instead)"),
  Args.optional
)
const module = Options.file("module").pipe(Options.optional, Options.withDescription("serve the service this module exports (`service` or `default`) instead of an example"))
const port = Options.integer("port").pipe(Options.withDefault(7447), Options.withDescription("TCP or HTTP port"))
const http = Options.boolean("http").pipe(Options.withDescription("serve the HTTP bridge instead of yea://"))
const stdio = Options.boolean("stdio").pipe(Options.withDescription("serve on stdin/stdout (a child process)"))
const trust = Options.text("trust").pipe(Options.repeated, Options.withDescription("a principal key whose grants are accepted (repeatable)"))
const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("keep state in this SQLite file (default: memory)"))

export const yeaServeCommand = Command.make("serve", { name, module, port, http, stdio, trust, sqlite }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const transport: Transport = o.stdio ? { _tag: "stdio" } : o.http ? { _tag: "http", port: o.port } : { _tag: "tcp", port: o.port }
        if (Option.isSome(o.name) === Option.isSome(o.module)) {
          return yield* Effect.fail(cliError("invalid_params", "name an example service (calendar, shop) or give --module FILE, not both", "SERVICE"))
        }
        const runtime = Option.isSome(o.module)
          ? yield* Effect.mapError(moduleRuntime(o.module.value, o.trust), (e) => cliError(e.reason, e.message, e.path))
          : yield* exampleRuntime(Option.getOrThrow(o.name), o.trust)
        const url = yield* Effect.mapError(serveOn(runtime, transport), (e) => cliError(e.reason, e.message, e.path))
        if (transport._tag === "stdio") return
        yield* Console.error(`serving ${runtime.id} at ${url}`)
        yield* Effect.never
      }).pipe(Effect.provide(stateLayer(Option.getOrUndefined(o.sqlite))), Effect.mapError((e) => ("reason" in e ? e : cliError("unavailable", e.message))))
    )
  )
)
