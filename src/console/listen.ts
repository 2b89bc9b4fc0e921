// Serving the console: @effect/platform's Node HTTP server on 127.0.0.1 (by default) for the
// length of the scope, with the page bundled and the sources opened first (a missing file or a
// failed bundle stops the start with its reason, before anything listens).
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Http from "node:http"
import { bundledAssets, ConsoleAssets } from "./assets.js"
import { consoleError } from "./reason.js"
import { consoleApp } from "./server.js"
import { ConsoleConfig, type ConsoleConfigShape, sourcesLayer } from "./stores.js"

export interface ConsoleListenOptions {
  readonly port: number
  readonly host?: string
  readonly allowHosts?: ReadonlyArray<string>
}

/** Serves the console within the scope; returns its URL. */
export const serveConsole = Effect.fn("console.serve")(function*(config: ConsoleConfigShape, options: ConsoleListenOptions) {
  const host = options.host ?? "127.0.0.1"
  const ctx = yield* Layer.build(Layer.mergeAll(sourcesLayer, bundledAssets).pipe(Layer.provideMerge(Layer.succeed(ConsoleConfig, config))))
  const server = yield* NodeHttpServer.make(() => Http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }), { port: options.port, host }).pipe(
    Effect.mapError((e) => consoleError("console/store_unavailable", `cannot listen on ${host}:${options.port}: ${e.message}`, "listen"))
  )
  const address = server.address
  const port = address._tag === "TcpAddress" ? address.port : 0
  // A --host that is not loopback is itself the instruction to answer under that name.
  const allowHosts = [...(options.allowHosts ?? []), host]
  yield* server.serve(Effect.provide(consoleApp({ allowHosts }), ctx))
  return { port, url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/` }
})

export { ConsoleAssets }
