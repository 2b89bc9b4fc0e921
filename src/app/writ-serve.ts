// The composition root of `writ serve`: one executor (src/writ/executor) over the HTTP binding
// (src/bind/writ-http), with the embedded SQLite stores (src/store/sqlite, one file, WAL), or with
// PostgreSQL (`postgres://...#SCHEMA`, src/store/postgres/writ-stores.ts), where several `writ
// serve` processes behind one address serve one executor key as its workers. This is
// the one place that reads files, loads the handler module and picks the store: `bind` is a
// transport and knows no store (DESIGN.md's arrows). On start it resolves every pending record
// left by a crash (section 9) before it listens, so no request is answered from a state recovery
// has not settled.
import type { FileSystem } from "@effect/platform"
import { Context, Duration, Effect, Layer, Option, type Scope } from "effect"
import { type ClientTls, httpForwarder } from "../bind/writ-http/client.js"
import { transportPeerBindings, type TransportBindings } from "../bind/writ-http/peer.js"
import { type RateLimitOptions, RevokeRateLimit } from "../bind/writ-http/rate-limit.js"
import { type ListenerLimits, listen, type TlsOptions } from "../bind/writ-http/listen.js"
import { didKeyFromPublicKey, publicKeyFromDidKey } from "../kernel/didkey.js"
import { publicKeyFromSeed } from "../kernel/ed25519.js"
import { Signer } from "../kernel/services.js"
import { VerificationCache } from "../kernel/verification-cache.js"
import { DEFAULT_ROOT_LIFETIME_SECONDS, RootLifetime } from "../writ/chain.js"
import { locationOf } from "../store/postgres/client.js"
import * as PgWrit from "../store/postgres/writ-stores.js"
import { inMemory } from "../store/sqlite/in-memory.js"
import * as SqliteWrit from "../store/sqlite/writ-stores.js"
import { Executor, layer as executorLayer } from "../writ/executor/executor.js"
import type { StoreError } from "../writ/executor/stores.js"
import { Application, RootPolicy } from "../writ/executor/services.js"
import { describeServeError, loadHandler, readBindingsFile, readSeedFile, ServeError } from "./inputs.js"
import { parseLocation, recordDecisions } from "./ledger-open.js"

export { describeServeError, loadHandler, readBindingsFile, readSeedFile, ServeError }

export interface ServeOptions {
  /** TCP port; 0 picks a free one. */
  readonly port: number
  readonly host?: string
  /**
   * Where every store lives: a SQLite file (created if absent), or `postgres://...#SCHEMA` for one
   * worker among several serving the same executor key on that schema (created if absent).
   */
  readonly storeFile: string
  /** PostgreSQL: connections of this worker's pool. Default 10. */
  readonly maxConnections?: number
  /**
   * How often this process resolves the pending records of processes sharing the store that are
   * gone and not restarted (section 9 recovery, run again while serving): PostgreSQL workers whose
   * session ended, owners of a SQLite file whose lease lapsed. Default 10,000 ms.
   */
  readonly orphanSweepMs?: number
  /**
   * SQLite file: this process's owner lease period (src/store/sqlite/writ-owner.ts). Another
   * process sharing the file takes over this one's pending calls only once its heartbeat (every
   * third of the period) is older than this. Default 15,000 ms.
   */
  readonly leaseMs?: number
  /** The executor's key file: 64 hex digits, mode 0600. */
  readonly seedFile: string
  /** Root keys the executor acts under (section 7.1). */
  readonly roots: ReadonlyArray<string>
  /** Path of the module exporting the ApplicationService. */
  readonly handlerModule: string
  /** Path of a bindings file, or the bindings themselves (section 7.6). */
  readonly bindings?: string | TransportBindings
  /** TLS, with `clientCa` for mTLS. File contents, not paths. */
  readonly tls?: TlsOptions
  /** Executors below: holder did:key -> endpoint URL, for forwarding revokes (section 9.1). */
  readonly forward?: Readonly<Record<string, string>>
  /** Client TLS used when forwarding. */
  readonly forwardTls?: ClientTls
  /** Revoke intake per peer (section 12). Default: burst 60, 10 per second. */
  readonly revokeRate?: RateLimitOptions
  /**
   * SQLite `synchronous` on the store's connection (WAL). "full" (the default) syncs the log on
   * every commit, so a commit survives power loss. "normal" syncs at checkpoints: every commit
   * still survives the process being killed (the log is in the OS's cache), and the file stays
   * consistent, but the last commits before a power loss or OS crash can be lost. Section 9's
   * "MUST survive restart" holds for a process restart under both.
   */
  readonly synchronous?: "full" | "normal"
  /** Bytes the executor's verification cache (decoded keys, passed signature checks) may hold. */
  readonly verificationCacheBytes?: number
  /** How far ahead a root's `exp` may be, in seconds (section 12); null lifts it. Default 24 hours. */
  readonly rootLifetimeSeconds?: number | null
  /** Header, body and idle timeouts and the connection cap of the listener (section 12). */
  readonly limits?: ListenerLimits
  /** Endpoint path. Default "/writ". */
  readonly path?: string
  /** Appendix B `act`. */
  readonly act?: ReadonlyArray<string>
  /** Appendix B `endpoint` (default: the URL it listens on). */
  readonly publicUrl?: string
  /**
   * A decision ledger (a SQLite file other than `storeFile`, or postgres://...#schema) that
   * receives every section 7 decision; created local_full when absent.
   */
  readonly ledger?: string
}

export interface RunningExecutor {
  readonly did: string
  readonly url: string
  readonly port: number
  /** Pending records resolved at start (section 9). */
  readonly resolved: number
}

/** A startup failure of the store, naming its file. */
const storeUnavailable = (storeFile: string) => (e: { readonly message: string }): ServeError =>
  new ServeError({ code: "mandate/store_unavailable", path: storeFile, message: e.message })

/** Starts the executor within the scope: stores opened, pending records resolved, listening. */
export const startExecutor = (options: ServeOptions): Effect.Effect<RunningExecutor, ServeError, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const seed = yield* readSeedFile(options.seedFile)
    for (const r of options.roots) {
      if (Option.isNone(publicKeyFromDidKey(r))) return yield* Effect.fail(new ServeError({ code: "mandate/bad_root", message: `not an Ed25519 did:key: ${r}` }))
    }
    const bindings = options.bindings === undefined
      ? {}
      : typeof options.bindings === "string"
      ? yield* readBindingsFile(options.bindings)
      : options.bindings
    const app = yield* loadHandler(options.handlerModule)
    // One SQLite file per process holds one connection (src/store/sqlite/client.ts): the ledger
    // must be a file of its own, or two connections of this process would wait on each other.
    if (options.ledger !== undefined && options.ledger === options.storeFile) {
      return yield* Effect.fail(new ServeError({ code: "mandate/bad_ledger", path: options.ledger, message: "the ledger must be another file than the store" }))
    }
    const decisions = options.ledger === undefined
      ? Context.empty()
      : yield* Layer.build(recordDecisions(parseLocation(options.ledger))).pipe(
        Effect.mapError((e) => new ServeError({ code: "mandate/ledger_unavailable", path: options.ledger!, message: e._tag === "LedgerError" ? `${e.reason}: ${e.detail}` : e.message }))
      )
    // The cache's size: the option when given, else MANDATE_VERIFICATION_CACHE_BYTES through Config
    // (VerificationCache.layerConfig), else the default; a bad value is the command's failure.
    const cache = options.verificationCacheBytes === undefined
      ? yield* Layer.build(VerificationCache.layerConfig).pipe(
        Effect.mapError((e) => new ServeError({ code: "mandate/bad_config", message: `MANDATE_VERIFICATION_CACHE_BYTES: ${String(e)}` }))
      )
      : Context.make(VerificationCache, VerificationCache.make({ maxBytes: options.verificationCacheBytes }))
    const services = Layer.mergeAll(
      Layer.succeedContext(decisions),
      Signer.fromSeed(seed),
      Layer.succeed(Application, app),
      RootPolicy.list(options.roots),
      transportPeerBindings(bindings),
      httpForwarder(options.forward ?? {}, options.forwardTls === undefined ? {} : { tls: options.forwardTls }),
      Layer.succeedContext(cache),
      RootLifetime.layer(options.rootLifetimeSeconds === undefined ? DEFAULT_ROOT_LIFETIME_SECONDS : options.rootLifetimeSeconds)
    )
    // The store's pragmas are its Layer's options (src/store/sqlite/client.ts). On PostgreSQL the
    // store brings the admission gate that makes this process one worker among several.
    const where = parseLocation(options.storeFile)
    // A URL's credentials never reach an error message.
    const storeName = where.store === "postgres" ? locationOf(where.url, where.schema) : options.storeFile
    // What the executor needs of either store (each also provides more: its gate, worker, batcher).
    const stores: Layer.Layer<Extract<SqliteWrit.SqliteWritContext, PgWrit.PgWritContext>, StoreError> = where.store === "postgres"
      ? PgWrit.layer({
        url: where.url,
        ...(where.schema === undefined ? {} : { schema: where.schema }),
        ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections })
      })
      : SqliteWrit.layer(options.storeFile, {
        synchronous: options.synchronous ?? "full",
        ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs })
      })
    const context = yield* Layer.build(
      Layer.merge(
        executorLayer.pipe(Layer.provideMerge(Layer.merge(services, stores))),
        RevokeRateLimit.layer(options.revokeRate ?? { burst: 60, perSecond: 10 })
      )
    ).pipe(Effect.mapError(storeUnavailable(storeName)))
    const executor = yield* Effect.provide(Executor, context)
    // Section 9: every pending record is resolved before the first request is answered.
    const resolved = yield* executor.recover.pipe(Effect.mapError(storeUnavailable(storeName)))
    const bound = yield* listen({
      port: options.port,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      path: options.path ?? "/writ",
      bindings,
      wellKnown: { endpoint: options.publicUrl ?? "", act: options.act ?? [] }
    }).pipe(
      Effect.provide(context),
      Effect.mapError((e) => new ServeError({ code: "mandate/listen", message: String(e.cause ?? e) }))
    )
    if (where.store === "postgres" || !inMemory(options.storeFile)) {
      // A process that dies and is not restarted would leave its pending records pending for as
      // long as no process starts: every live one sweeps them up (only records of processes that
      // are gone: a PostgreSQL worker's session, src/store/postgres/writ-worker.ts; a SQLite
      // owner's lease, src/store/sqlite/writ-owner.ts), owned by the scope it serves in.
      const sweep = executor.recover.pipe(
        Effect.tap((n) => n > 0 ? Effect.logInfo(`resolved ${n} pending records of processes that are gone`) : Effect.void),
        Effect.catchTag("StoreError", (e) => Effect.logWarning(`sweep of pending records failed (${e.operation}): ${e.message}`))
      )
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(options.orphanSweepMs ?? 10_000)), sweep)))
    }
    return { did: didKeyFromPublicKey(publicKeyFromSeed(seed)), url: bound.url, port: bound.port, resolved }
  })

/** Runs the executor until interrupted; `onReady` sees where it listens. */
export const serveExecutor = (
  options: ServeOptions,
  onReady: (r: RunningExecutor) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<never, ServeError, FileSystem.FileSystem> =>
  Effect.scoped(Effect.flatMap(startExecutor(options), (r) => Effect.zipRight(onReady(r), Effect.never)))
