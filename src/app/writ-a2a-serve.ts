// The composition root of `writ a2a-serve`: one executor (src/writ/executor) whose application is
// a handler module (as `writ serve` loads it), its stores (SQLite, which survive a restart, section
// 9; without a store file the memory stores, for trials only, and the start line says so), and the
// A2A agent endpoint of src/bind/writ-a2a/http.ts in front of it. Pending records left by a crash
// are resolved before it listens. Over plain HTTP it authenticates no peer, so the peer binding of
// section 7.6 is skipped (and audited as skipped); over mTLS the peer is the client certificate's,
// checked against the bindings file as `writ serve` does. With a webhook allow list it sends push
// notifications (A2A 1.0 section 4.3.3) to the webhooks on it, and to no other.
import type { FileSystem } from "@effect/platform"
import { Effect, Layer, type Scope } from "effect"
import { listenA2a } from "../bind/writ-a2a/http.js"
import { NodeHttpClient } from "@effect/platform-node"
import { A2aPush, A2aWebhook, type AllowEntry } from "../bind/writ-a2a/push.js"
import { A2aTasks } from "../bind/writ-a2a/rpc.js"
import { didKeyFromPublicKey } from "../kernel/didkey.js"
import { publicKeyFromSeed } from "../kernel/ed25519.js"
import { Executor } from "../writ/executor/executor.js"
import { Application, type ApplicationService, type Outcome } from "../writ/executor/services.js"
import type { TlsOptions } from "../bind/writ-http/listen.js"
import { loadHandler, readBindingsFile, readSeedFile, ServeError } from "./inputs.js"
import { checkRoots, plainExecutor } from "./plain-executor.js"

export interface A2aServeOptions {
  /** The executor's key file: 64 hex digits, mode 0600. It signs every tally. */
  readonly seedFile: string
  /** Root keys the executor acts under (section 7.1). */
  readonly roots: ReadonlyArray<string>
  /** Path of the module exporting the ApplicationService. */
  readonly handlerModule: string
  /** The SQLite file of every store; absent, memory stores that a restart loses. */
  readonly storeFile?: string
  readonly port: number
  readonly host?: string
  /** The JSON-RPC path. Default "/a2a". */
  readonly path?: string
  /** The endpoint URL the Agent Card publishes (default: the one it listens on). */
  readonly publicUrl?: string
  /** The agent's name in its card. */
  readonly name?: string
  /** Bound names listed in the card's Writ extension entry. */
  readonly bounds?: ReadonlyArray<string>
  /** Path of a bindings file (section 7.6): transport identity -> [did:key]. */
  readonly bindings?: string
  /** HTTPS, with `clientCa` mTLS (the peer is the client certificate's). File contents, not paths. */
  readonly tls?: TlsOptions
  /** The webhooks push notifications may go to (src/bind/writ-a2a/push.ts); absent or empty, the
   * endpoint serves no push notifications and its card says so. */
  readonly pushAllow?: ReadonlyArray<AllowEntry>
}

export interface RunningA2a {
  readonly did: string
  /** The JSON-RPC endpoint. */
  readonly url: string
  /** The Agent Card's URL. */
  readonly card: string
  readonly port: number
  readonly durable: boolean
  readonly resolved: number
}

/**
 * The handler as the executor takes it. Its `perform` may return an Effect (as `writ serve` takes
 * it), or the outcome itself or a Promise of it, so that a plain JavaScript module needs no import
 * at all (docs/a2a.md's example is one). A throw or a rejected Promise is `failed` with
 * `unknown_outcome`: the handler may have acted before it failed (section 11).
 */
export const acceptPlainHandler = (app: ApplicationService): ApplicationService => ({
  ...app,
  perform: (op) =>
    Effect.try(() => app.perform(op) as unknown).pipe(
      Effect.flatMap((r) => Effect.isEffect(r) ? r as Effect.Effect<Outcome> : Effect.tryPromise(() => Promise.resolve(r as Outcome))),
      Effect.catchTag("UnknownException", () => Effect.succeed<Outcome>({ st: "failed", code: "unknown_outcome" }))
    )
})

export const startA2a = (options: A2aServeOptions): Effect.Effect<RunningA2a, ServeError, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const seed = yield* readSeedFile(options.seedFile)
    yield* checkRoots(options.roots)
    const bindings = options.bindings === undefined ? undefined : yield* readBindingsFile(options.bindings)
    const app = acceptPlainHandler(yield* loadHandler(options.handlerModule))
    const context = yield* Layer.build(Layer.mergeAll(
      plainExecutor({
        seed,
        application: Layer.succeed(Application, app),
        roots: options.roots,
        ...(options.storeFile === undefined ? {} : { storeFile: options.storeFile }),
        ...(bindings === undefined ? {} : { bindings })
      }),
      A2aTasks.memory(),
      // Push notifications only to the allow list's webhooks, through undici's HttpClient (which
      // follows no redirect: a listed host cannot hand the request on).
      options.pushAllow === undefined || options.pushAllow.length === 0
        ? Layer.empty
        : A2aPush.layer(options.pushAllow).pipe(Layer.provide(A2aWebhook.layer), Layer.provide(NodeHttpClient.layerUndici))
    )).pipe(Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", ...(options.storeFile === undefined ? {} : { path: options.storeFile }), message: e.message })))
    const executor = yield* Effect.provide(Executor, context)
    // Section 9: every pending record is resolved before the first request is answered.
    const resolved = yield* executor.recover.pipe(Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", message: e.message })))
    const bound = yield* listenA2a({
      port: options.port,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.path === undefined ? {} : { path: options.path }),
      ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.bounds === undefined ? {} : { bounds: options.bounds }),
      ...(bindings === undefined ? {} : { bindings }),
      ...(options.tls === undefined ? {} : { tls: options.tls })
    }).pipe(
      Effect.provide(context),
      Effect.mapError((e) => new ServeError({ code: "mandate/listen", message: String(e) }))
    )
    return {
      did: didKeyFromPublicKey(publicKeyFromSeed(seed)),
      url: bound.url,
      card: `${bound.base}/.well-known/agent-card.json`,
      port: bound.port,
      durable: options.storeFile !== undefined,
      resolved
    }
  })
