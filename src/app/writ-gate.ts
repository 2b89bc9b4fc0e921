// The composition root of `writ gate` (docs/writ-gate.md): the mapping file read and checked, one
// executor (src/writ/executor) whose application is the API behind the gate
// (src/bind/writ-gate/upstream.ts, on @effect/platform's HttpClient), its stores, and the gate's
// HTTP server. With `storeFile` the stores are the SQLite ones, which survive a restart (section 9);
// without it they are the memory stores, which do not (for tests and trials only), and the startup
// message says so. Pending records left by a crash are resolved before the gate listens.
import { FileSystem } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option, type Scope } from "effect"
import { listenGate } from "../bind/writ-gate/server.js"
import { readMapping } from "../bind/writ-gate/mapping.js"
import { makeUpstreamApplication, type InFlightMap } from "../bind/writ-gate/upstream.js"
import { RevokeRateLimit } from "../bind/writ-http/rate-limit.js"
import { didKeyFromPublicKey, publicKeyFromDidKey } from "../kernel/didkey.js"
import { publicKeyFromSeed } from "../kernel/ed25519.js"
import { Signer } from "../kernel/services.js"
import { VerificationCache } from "../kernel/verification-cache.js"
import * as MemoryWrit from "../store/memory/writ-stores.js"
import * as SqliteWrit from "../store/sqlite/writ-stores.js"
import { Executor, layer as executorLayer } from "../writ/executor/executor.js"
import { Application, Forwarder, PeerBindings, RootPolicy } from "../writ/executor/services.js"
import { readSeedFile, ServeError } from "./inputs.js"

export interface GateOptions {
  readonly mappingFile: string
  /** The gate's key file: 64 hex digits, mode 0600. It signs every tally. */
  readonly seedFile: string
  /** Root keys the gate acts under (section 7.1). */
  readonly roots: ReadonlyArray<string>
  /** The SQLite file of every store; absent, memory stores that a restart loses. */
  readonly storeFile?: string
  readonly port: number
  readonly host?: string
}

export interface RunningGate {
  readonly did: string
  readonly url: string
  readonly port: number
  readonly upstream: string
  readonly durable: boolean
  readonly resolved: number
}

export const startGate = (options: GateOptions): Effect.Effect<RunningGate, ServeError, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* Effect.mapError(fs.readFile(options.mappingFile), (e) =>
      new ServeError({ code: "mandate/unreadable", path: options.mappingFile, message: e.message }))
    const mapping = yield* Effect.mapError(readMapping(text), (e) =>
      new ServeError({ code: e.reason, path: `${options.mappingFile}${e.path === undefined ? "" : `: ${e.path}`}`, message: e.message }))
    const seed = yield* readSeedFile(options.seedFile)
    for (const r of options.roots) {
      if (Option.isNone(publicKeyFromDidKey(r))) return yield* Effect.fail(new ServeError({ code: "mandate/bad_root", message: `not an Ed25519 did:key: ${r}` }))
    }
    const inFlight: InFlightMap = new Map()
    const application = Layer.effect(Application, makeUpstreamApplication(mapping, inFlight)).pipe(Layer.provide(NodeHttpClient.layerUndici))
    const services = Layer.mergeAll(
      Signer.fromSeed(seed),
      application,
      RootPolicy.list(options.roots),
      // Plain HTTP authenticates no peer (section 7.6): the check is skipped and audited as such.
      PeerBindings.none,
      Forwarder.none,
      VerificationCache.layer({ maxBytes: 1 << 24 })
    )
    // What both store Layers provide: the executor's stores (DESIGN.md: a store implements tags).
    type Stores = Layer.Layer<
      Extract<Layer.Layer.Success<typeof MemoryWrit.layer>, Layer.Layer.Success<ReturnType<typeof SqliteWrit.layer>>>,
      Layer.Layer.Error<ReturnType<typeof SqliteWrit.layer>>
    >
    const stores: Stores = options.storeFile === undefined ? MemoryWrit.layer : SqliteWrit.layer(options.storeFile, { synchronous: "full" })
    const context = yield* Layer.build(
      Layer.merge(executorLayer.pipe(Layer.provideMerge(Layer.merge(services, stores))), RevokeRateLimit.layer({ burst: 60, perSecond: 10 }))
    ).pipe(Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", message: e.message })))
    const executor = yield* Effect.provide(Executor, context)
    const resolved = yield* executor.recover.pipe(Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", message: e.message })))
    const bound = yield* listenGate(mapping, inFlight, { port: options.port, ...(options.host === undefined ? {} : { host: options.host }) }).pipe(
      Effect.provide(context),
      Effect.mapError((e) => new ServeError({ code: "mandate/listen", message: String(e) }))
    )
    return {
      did: didKeyFromPublicKey(publicKeyFromSeed(seed)),
      url: bound.url,
      port: bound.port,
      upstream: mapping.upstream,
      durable: options.storeFile !== undefined,
      resolved
    }
  })
