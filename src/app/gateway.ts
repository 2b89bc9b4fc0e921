// `mandate gateway`'s composition root: one store (SQLite file, or postgres://...#SCHEMA for
// several gateway processes on one budget) under the reservation core, the decision ledger every
// call is recorded in, the key store and this process's owner lease; the recovery of what killed
// gateways left reserved; and the gateway server.
import type { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, type Scope } from "effect"
import { OwnerLease } from "../accounting/owner-lease.js"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { RandomBytes } from "../kernel/index.js"
import { GatewayKeyStore, storeLookup } from "../gateway/keys.js"
import { GatewayRevokes, withRevokes } from "../gateway/writ-revocations.js"
import { recoverContinuously } from "../gateway/recovery.js"
import { type Gateway, type GatewayConfig, startGateway } from "../gateway/server.js"
import type { LedgerMode } from "../ledger/events.js"
import type { LedgerError } from "../ledger/reason.js"
import type { LedgerStore, LedgerWriter } from "../ledger/writer.js"
import * as PgStore from "../store/postgres/client.js"
import { gatewayKeyStoreLayer } from "../store/sql/gateway-keys.js"
import * as OwnerLeases from "../store/sql/owner-leases.js"
import * as SqliteStore from "../store/sqlite/client.js"
import type { StoreMigrations } from "../store/sql/migrations.js"
import { initLedger, type LedgerLocation, type LedgerStores, type OpenOptions, openPgStores, openSqliteStores, parseLocation, writerLayer } from "./ledger-open.js"

export interface GatewayStoreOptions {
  /** The ledger's name in the store (default "default", what `mandate ledger` opens by default). */
  readonly ledger?: string
  /** The mode of a ledger the gateway creates (default local_full); an existing ledger keeps its own. */
  readonly ledgerMode?: LedgerMode
  /** A safe_telemetry ledger's key file (default FILE.key beside a SQLite store). */
  readonly keyFile?: string
  /** The owner lease period, ms (default 15 s): a killed gateway's calls are recovered once it lapses. */
  readonly leaseMs?: number
}

/** What the gateway's stores provide: the reservation core, the ledger (its store and writer), the keys. */
export type GatewayAdminServices = Reservations | Atomic | LedgerStore | LedgerWriter | GatewayKeyStore | GatewayRevokes | RandomBytes

/** Creates the gateway's ledger when the store has none (two processes may race: the loser opens the winner's). */
const ensureLedger = (where: string, options: GatewayStoreOptions): Effect.Effect<void, StoreError | LedgerError> => {
  const loc = parseLocation(where)
  const open: OpenOptions = { ledger: options.ledger ?? "default", synchronous: "normal", ...(options.keyFile !== undefined ? { keyFile: options.keyFile } : {}) }
  const exists = (e: StoreError | LedgerError) => e._tag === "LedgerError" && e.reason === "ledger_exists"
  const init = initLedger(loc, { ...open, mode: options.ledgerMode ?? "local_full" })
  // On PostgreSQL two gateways starting at once on a new schema may both find no ledger and both
  // insert it: the loser's insert fails on the key. Tried again, it finds the winner's ledger.
  return init.pipe(
    Effect.catchIf((e) => e._tag === "StoreError", () => init),
    Effect.catchIf(exists, () => Effect.void)
  )
}

/** What a module built on the gateway's stores may need of them. */
type OnStore = SqlClient.SqlClient | Atomic | RandomBytes | LedgerWriter | Reservations

/** Builds on the stores at `where` what `use` makes (its own tables migrated by the store's `migrate`). */
type Use<A, E> = <RM>(migrate: (m: StoreMigrations) => Effect.Effect<void, StoreError, RM>) => Layer.Layer<A, E, OnStore | RM>

/** The ledger's stores and writer, the key store and `use`'s services, on one store whose migrations need RM. */
const composed = <A, E, RM>(
  base: Layer.Layer<LedgerStores | RM, StoreError>,
  migrate: (m: StoreMigrations) => Effect.Effect<void, StoreError, RM | SqlClient.SqlClient>,
  loc: LedgerLocation,
  open: OpenOptions,
  use: Use<A, E>
): Layer.Layer<A | GatewayAdminServices, E | StoreError | LedgerError> => {
  const withWriter = writerLayer(loc, open).pipe(Layer.provideMerge(Layer.merge(base, RandomBytes.live)))
  return Layer.provideMerge(Layer.merge(gatewayKeyStoreLayer(migrate), use(migrate)), withWriter)
}

/** The stores at `where` under what `use` builds on them, the ledger created first when the store has none. */
const onStore = <A, E>(where: string, options: GatewayStoreOptions, use: Use<A, E>): Layer.Layer<A | GatewayAdminServices, E | StoreError | LedgerError> => {
  const loc = parseLocation(where)
  const open: OpenOptions = { ledger: options.ledger ?? "default", synchronous: "normal", ...(options.keyFile !== undefined ? { keyFile: options.keyFile } : {}) }
  const stores = loc.store === "sqlite"
    ? composed(openSqliteStores(loc.file, open), SqliteStore.migrate, loc, open, use)
    : composed(openPgStores(loc.url, loc.schema, open), PgStore.migrate, loc, open, use)
  return Layer.unwrapEffect(Effect.as(ensureLedger(where, options), stores))
}

/** The stores at `where` without an owner lease: what key administration needs (`mandate gateway keys ...`). */
export const gatewayAdminStores = (where: string, options: GatewayStoreOptions = {}): Layer.Layer<GatewayAdminServices, StoreError | LedgerError> =>
  onStore(where, options, () => Layer.empty)

/** The gateway's stores at `where` (a SQLite file or postgres://...#SCHEMA), with this process's lease and the recovery sweep. */
export const gatewayStores = (
  where: string,
  options: GatewayStoreOptions = {}
): Layer.Layer<GatewayAdminServices | OwnerLease, StoreError | LedgerError> =>
  onStore(where, options, (migrate) =>
    Layer.scopedDiscard(recoverContinuously).pipe(
      Layer.provideMerge(OwnerLeases.layer(migrate, { scope: "gateway", ...(options.leaseMs !== undefined ? { ttlMs: options.leaseMs } : {}) }))
    ))

/** Runs key administration (`mandate gateway keys|users|teams`) on the store at `where`. */
export const withGatewayKeys = <A, E>(where: string, eff: Effect.Effect<A, E, GatewayAdminServices>): Effect.Effect<A, E | StoreError | LedgerError> =>
  Effect.provide(eff, gatewayAdminStores(where))

export interface ServeGatewayOptions extends GatewayStoreOptions {
  readonly store: string
  readonly port: number
  readonly host?: string
}

/** Opens the store and starts the gateway for the life of the scope; keys come from the store unless `config.lookup` says otherwise. */
export const serveGateway = (config: GatewayConfig, options: ServeGatewayOptions): Effect.Effect<Gateway, StoreError | LedgerError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Layer.toRuntime(gatewayStores(options.store, options))
    const keys = Context.get(runtime.context, GatewayKeyStore)
    let withKeys: GatewayConfig = config.lookup === undefined ? { ...config, lookup: storeLookup(keys) } : config
    // Section 7 step 7 reads the store's revokes: one recorded by any process binds this one's next call.
    const revokes = Context.get(runtime.context, GatewayRevokes)
    if (withKeys.writ !== undefined) withKeys = { ...withKeys, writ: withRevokes(withKeys.writ, revokes) }
    return yield* Effect.acquireRelease(
      Effect.promise(() => startGateway(withKeys, runtime, { port: options.port, ...(options.host !== undefined ? { host: options.host } : {}) })),
      (g) => Effect.promise(() => g.close())
    )
  })
