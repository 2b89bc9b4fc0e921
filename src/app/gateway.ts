// `mandate gateway`'s composition root: the store (SQLite file, or postgres://...#SCHEMA for
// several gateway processes on one budget) under the reservation core, and the gateway server.
import { Effect, Layer, type Scope } from "effect"
import type { Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { RandomBytes } from "../kernel/index.js"
import { type Gateway, type GatewayConfig, startGateway } from "../gateway/server.js"
import * as PgStore from "../store/postgres/client.js"
import * as PgReservations from "../store/postgres/reservations.js"
import * as SqliteStore from "../store/sqlite/client.js"
import * as SqliteReservations from "../store/sqlite/reservations.js"
import { parseLocation } from "./ledger-open.js"

/** Reservations on the store at `where` (a SQLite file or postgres://...#SCHEMA). */
export const gatewayStores = (where: string): Layer.Layer<Reservations, StoreError> => {
  const loc = parseLocation(where)
  if (loc.store === "sqlite") return SqliteReservations.layer.pipe(Layer.provide(SqliteStore.layer(loc.file, { synchronous: "normal" })))
  return PgReservations.layer.pipe(Layer.provide(PgStore.layer({ url: loc.url, ...(loc.schema !== undefined ? { schema: loc.schema } : {}), maxConnections: 8 })))
}

export interface ServeGatewayOptions {
  readonly store: string
  readonly port: number
  readonly host?: string
}

/** Opens the store and starts the gateway for the life of the scope. */
export const serveGateway = (config: GatewayConfig, options: ServeGatewayOptions): Effect.Effect<Gateway, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Layer.toRuntime(Layer.merge(gatewayStores(options.store), RandomBytes.live))
    return yield* Effect.acquireRelease(
      Effect.promise(() => startGateway(config, runtime, { port: options.port, ...(options.host !== undefined ? { host: options.host } : {}) })),
      (g) => Effect.promise(() => g.close())
    )
  })
