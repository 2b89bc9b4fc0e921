// The composition root of `writ gate` (docs/writ-gate.md): the mapping file read and checked, one
// executor (src/writ/executor) whose application is the API behind the gate
// (src/bind/writ-gate/upstream.ts, on @effect/platform's HttpClient), its stores, and the gate's
// HTTP server. With `storeFile` the stores are the SQLite ones, which survive a restart (section 9);
// without it they are the memory stores, which do not (for tests and trials only), and the startup
// message says so. Pending records left by a crash are resolved before the gate listens.
import { FileSystem } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, type Scope } from "effect"
import { listenGate } from "../bind/writ-gate/server.js"
import { readMapping } from "../bind/writ-gate/mapping.js"
import { makeUpstreamApplication, type InFlightMap } from "../bind/writ-gate/upstream.js"
import { RevokeRateLimit } from "../bind/writ-http/rate-limit.js"
import { didKeyFromPublicKey } from "../kernel/didkey.js"
import { publicKeyFromSeed } from "../kernel/ed25519.js"
import { Executor } from "../writ/executor/executor.js"
import { Application } from "../writ/executor/services.js"
import { readSeedFile, ServeError } from "./inputs.js"
import { checkRoots, plainExecutor } from "./plain-executor.js"

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
  /** The largest API response body the gate reads (default upstream.ts MAX_RESPONSE_BYTES, 4 MiB); past it, `gate/result_too_large`. */
  readonly maxResponseBytes?: number
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
    yield* checkRoots(options.roots)
    const inFlight: InFlightMap = new Map()
    const application = Layer.effect(Application, makeUpstreamApplication(mapping, inFlight, options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes })).pipe(Layer.provide(NodeHttpClient.layerUndici))
    const context = yield* Layer.build(
      Layer.merge(plainExecutor({ seed, application, roots: options.roots, ...(options.storeFile === undefined ? {} : { storeFile: options.storeFile }) }), RevokeRateLimit.layer({ burst: 60, perSecond: 10 }))
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
