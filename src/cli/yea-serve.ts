// `mandate yea serve calendar|shop`: an example service on TCP (default), the HTTP bridge or stdio.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { exampleRuntime, serveOn, stateLayer, type Transport } from "../app/yea-serve.js"

const name = Args.choice([["calendar", "calendar"], ["shop", "shop"]] as const, { name: "SERVICE" })
const port = Options.integer("port").pipe(Options.withDefault(7447), Options.withDescription("TCP or HTTP port"))
const http = Options.boolean("http").pipe(Options.withDescription("serve the HTTP bridge instead of yea://"))
const stdio = Options.boolean("stdio").pipe(Options.withDescription("serve on stdin/stdout (a child process)"))
const trust = Options.text("trust").pipe(Options.repeated, Options.withDescription("a principal key whose grants are accepted (repeatable)"))
const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("keep state in this SQLite file (default: memory)"))

export const yeaServeCommand = Command.make("serve", { name, port, http, stdio, trust, sqlite }, (o) =>
  Effect.scoped(
    Effect.gen(function* () {
      const transport: Transport = o.stdio ? { _tag: "stdio" } : o.http ? { _tag: "http", port: o.port } : { _tag: "tcp", port: o.port }
      const runtime = yield* exampleRuntime(o.name, o.trust)
      const url = yield* serveOn(runtime, transport)
      if (transport._tag === "stdio") return
      yield* Console.error(`serving ${runtime.id} at ${url}`)
      yield* Effect.never
    }).pipe(Effect.provide(stateLayer(Option.getOrUndefined(o.sqlite))))
  )
)
