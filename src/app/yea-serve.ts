// Composition roots for YEA: a service's state on a chosen store, the service served on a chosen
// transport. Used by `mandate yea serve` and `mandate yea demo` (which pick the example service,
// src/examples/runtime.ts: app/ sits below the examples and never imports them).
import { Effect, Layer, Scope } from "effect"
import type { StoreError } from "../accounting/store-error.js"
import { RandomBytes } from "../kernel/services.js"
import { serveHttpBridge } from "../bind/yea-http/server.js"
import { serveStdio } from "../bind/yea-stdio/index.js"
import { serveTcp } from "../bind/yea-tcp/server.js"
import * as MemoryYea from "../store/memory/yea.js"
import * as SqliteStore from "../store/sqlite/client.js"
import * as SqliteYea from "../store/sqlite/yea.js"
import type { YeaError } from "../yea/reason.js"
import type { StateContext } from "../yea/service/env.js"
import { makeService, type YeaServiceRuntime } from "../yea/service/runtime.js"

/** The state of a service: in memory, or in the SQLite file `sqlite` (created 0600). */
export const stateLayer = (sqlite?: string): Layer.Layer<StateContext, StoreError> => {
  const stores: Layer.Layer<Exclude<StateContext, RandomBytes>, StoreError> =
    sqlite === undefined ? MemoryYea.layer : SqliteYea.layer.pipe(Layer.provideMerge(SqliteStore.layer(sqlite)))
  return Layer.merge(stores, RandomBytes.live)
}

export type Transport = { readonly _tag: "tcp"; readonly port: number; readonly host?: string; readonly tls?: { readonly key: Uint8Array; readonly cert: Uint8Array } } | { readonly _tag: "http"; readonly port: number; readonly host?: string } | { readonly _tag: "stdio" }

/** Serves `runtime` on `transport` until the scope closes (stdio: until stdin ends). Returns its URL. */
export const serveOn = (runtime: YeaServiceRuntime, transport: Transport): Effect.Effect<string, YeaError, Scope.Scope> => {
  switch (transport._tag) {
    case "tcp": return Effect.map(serveTcp(runtime, { port: transport.port, host: transport.host, ...(transport.tls === undefined ? {} : { tls: { key: Buffer.from(transport.tls.key), cert: Buffer.from(transport.tls.cert) } }) }), (l) => l.url)
    case "http": return Effect.map(serveHttpBridge(runtime, { port: transport.port, host: transport.host }), (l) => l.url)
    case "stdio": return Effect.as(serveStdio(runtime), "stdio:")
  }
}
