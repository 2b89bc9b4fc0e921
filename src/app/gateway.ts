// `mandate gateway`'s composition root: the store (SQLite file, or postgres://...#SCHEMA for
// several gateway processes on one budget) under the reservation core and the key store, and the
// gateway server.
import { Context, Effect, Layer, type Scope } from "effect"
import type { Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { RandomBytes } from "../kernel/index.js"
import { GatewayKeyStore, storeLookup } from "../gateway/keys.js"
import { type Gateway, type GatewayConfig, startGateway } from "../gateway/server.js"
import * as PgStore from "../store/postgres/client.js"
import * as PgReservations from "../store/postgres/reservations.js"
import { gatewayKeyStoreLayer } from "../store/sql/gateway-keys.js"
import * as SqliteStore from "../store/sqlite/client.js"
import * as SqliteReservations from "../store/sqlite/reservations.js"
import { parseLocation } from "./ledger-open.js"

/** The gateway's stores at `where` (a SQLite file or postgres://...#SCHEMA): budgets and keys. */
export const gatewayStores = (where: string): Layer.Layer<Reservations | GatewayKeyStore, StoreError> => {
  const loc = parseLocation(where)
  if (loc.store === "sqlite") {
    return Layer.merge(SqliteReservations.layer, gatewayKeyStoreLayer(SqliteStore.migrate)).pipe(
      Layer.provide(SqliteStore.layer(loc.file, { synchronous: "normal" }))
    )
  }
  return Layer.merge(PgReservations.layer, gatewayKeyStoreLayer(PgStore.migrate)).pipe(
    Layer.provide(PgStore.layer({ url: loc.url, ...(loc.schema !== undefined ? { schema: loc.schema } : {}), maxConnections: 8 }))
  )
}

/** Runs key administration (`mandate gateway keys|users|teams`) on the store at `where`. */
export const withGatewayKeys = <A, E>(where: string, eff: Effect.Effect<A, E, GatewayKeyStore | Reservations | RandomBytes>): Effect.Effect<A, E | StoreError> =>
  Effect.provide(eff, Layer.merge(gatewayStores(where), RandomBytes.live))

export interface ServeGatewayOptions {
  readonly store: string
  readonly port: number
  readonly host?: string
}

/** Opens the store and starts the gateway for the life of the scope; keys come from the store unless `config.lookup` says otherwise. */
export const serveGateway = (config: GatewayConfig, options: ServeGatewayOptions): Effect.Effect<Gateway, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Layer.toRuntime(Layer.merge(gatewayStores(options.store), RandomBytes.live))
    const keys = Context.get(runtime.context, GatewayKeyStore)
    const withKeys: GatewayConfig = config.lookup === undefined ? { ...config, lookup: storeLookup(keys) } : config
    return yield* Effect.acquireRelease(
      Effect.promise(() => startGateway(withKeys, runtime, { port: options.port, ...(options.host !== undefined ? { host: options.host } : {}) })),
      (g) => Effect.promise(() => g.close())
    )
  })
