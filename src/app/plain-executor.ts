// The executor of a composition root whose transport authenticates no peer (`writ gate`, `writ
// files run`): the executor's key, an application, the accepted roots, no peer bindings (section
// 7.6: the check is skipped and audited as such), no forwarding, the default verification cache,
// and the SQLite stores (which survive a restart, section 9) or, without a store file, the memory
// stores (which do not).
import { Effect, Layer, Option } from "effect"
import { publicKeyFromDidKey } from "../kernel/didkey.js"
import { Signer } from "../kernel/services.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../kernel/verification-cache.js"
import * as MemoryWrit from "../store/memory/writ-stores.js"
import * as SqliteWrit from "../store/sqlite/writ-stores.js"
import { layer as executorLayer } from "../writ/executor/executor.js"
import { type Application, Forwarder, PeerBindings, RootPolicy } from "../writ/executor/services.js"
import { transportPeerBindings, type TransportBindings } from "../bind/writ-http/peer.js"
import { ServeError } from "./inputs.js"

/** Every root must be an Ed25519 did:key (section 2), refused before anything is opened. */
export const checkRoots = (roots: ReadonlyArray<string>): Effect.Effect<void, ServeError> =>
  Effect.forEach(roots, (r) =>
    Option.isNone(publicKeyFromDidKey(r))
      ? Effect.fail(new ServeError({ code: "mandate/bad_root", message: `not an Ed25519 did:key: ${r}` }))
      : Effect.void, { discard: true })

export interface PlainExecutorOptions {
  readonly seed: Uint8Array
  readonly application: Layer.Layer<Application, never, never>
  readonly roots: ReadonlyArray<string>
  readonly storeFile?: string
  /** Transport identities -> keys (section 7.6), for a transport that names peers (mTLS); none:
   * the check is skipped and audited as such. */
  readonly bindings?: TransportBindings
}

// What both store Layers provide: the executor's stores (DESIGN.md: a store implements tags).
type Stores = Layer.Layer<
  Extract<Layer.Layer.Success<typeof MemoryWrit.layer>, Layer.Layer.Success<ReturnType<typeof SqliteWrit.layer>>>,
  Layer.Layer.Error<ReturnType<typeof SqliteWrit.layer>>
>

/** The executor with its services and stores, all of them in the Layer's output. */
export const plainExecutor = (o: PlainExecutorOptions) => {
  const services = Layer.mergeAll(
    Signer.fromSeed(o.seed),
    o.application,
    RootPolicy.list(o.roots),
    o.bindings === undefined ? PeerBindings.none : transportPeerBindings(o.bindings),
    Forwarder.none,
    VerificationCache.layer({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })
  )
  const stores: Stores = o.storeFile === undefined ? MemoryWrit.layer : SqliteWrit.layer(o.storeFile, { synchronous: "full" })
  return executorLayer.pipe(Layer.provideMerge(Layer.merge(services, stores)))
}
