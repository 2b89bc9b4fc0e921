// The composition root of `mandate writ files run`: one executor (src/writ/executor) over the file
// binding (src/bind/writ-file), with a handler module as its application and the SQLite stores
// (which survive a restart, section 9) or, without a store file, the memory stores (which do not).
// One pass over a folder: every call file beside a work item with no final tally is executed.
import type { FileSystem } from "@effect/platform"
import { Effect, Layer, Option, type Scope } from "effect"
import { executeFolder } from "../bind/writ-file/index.js"
import { publicKeyFromDidKey } from "../kernel/didkey.js"
import { Signer } from "../kernel/services.js"
import { VerificationCache } from "../kernel/verification-cache.js"
import * as MemoryWrit from "../store/memory/writ-stores.js"
import * as SqliteWrit from "../store/sqlite/writ-stores.js"
import { Executor, layer as executorLayer } from "../writ/executor/executor.js"
import { Application, Forwarder, PeerBindings, RootPolicy } from "../writ/executor/services.js"
import { loadHandler, readSeedFile, ServeError } from "./inputs.js"

export interface FilesRunOptions {
  readonly dir: string
  readonly seedFile: string
  readonly roots: ReadonlyArray<string>
  readonly handlerModule: string
  readonly storeFile?: string
  /** At most this many work items per pass. */
  readonly max: number
}

/** One pass over the folder; returns each work item with its outcome (`ok`, `failed:<code>`, or
 * the reason it was refused unsigned). */
export const runFiles = (
  options: FilesRunOptions
): Effect.Effect<ReadonlyArray<{ readonly work: string; readonly outcome: string }>, ServeError, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const seed = yield* readSeedFile(options.seedFile)
    for (const r of options.roots) {
      if (Option.isNone(publicKeyFromDidKey(r))) return yield* Effect.fail(new ServeError({ code: "mandate/bad_root", message: `not an Ed25519 did:key: ${r}` }))
    }
    const app = yield* loadHandler(options.handlerModule)
    const services = Layer.mergeAll(
      Signer.fromSeed(seed),
      Layer.succeed(Application, app),
      RootPolicy.list(options.roots),
      PeerBindings.none,
      Forwarder.none,
      VerificationCache.layer({ maxBytes: 1 << 24 })
    )
    type Stores = Layer.Layer<
      Extract<Layer.Layer.Success<typeof MemoryWrit.layer>, Layer.Layer.Success<ReturnType<typeof SqliteWrit.layer>>>,
      Layer.Layer.Error<ReturnType<typeof SqliteWrit.layer>>
    >
    const stores: Stores = options.storeFile === undefined ? MemoryWrit.layer : SqliteWrit.layer(options.storeFile, { synchronous: "full" })
    const context = yield* Layer.build(executorLayer.pipe(Layer.provideMerge(Layer.merge(services, stores)))).pipe(
      Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", message: e.message }))
    )
    const executor = yield* Effect.provide(Executor, context)
    yield* executor.recover.pipe(Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", message: e.message })))
    const done = yield* executeFolder(options.dir, options.max).pipe(
      Effect.provideService(Executor, executor),
      Effect.catchTag("FileBindError", (e) => Effect.fail(new ServeError({ code: e.reason, path: e.path ?? options.dir, message: e.message })))
    )
    return done.map(({ work, answer }) => ({
      work,
      outcome: answer._tag === "Left"
        ? answer.left.reason
        : answer.right._tag === "error"
        ? answer.right.reason
        : answer.right.tally.st === "ok"
        ? "ok"
        : `${String(answer.right.tally.st)}:${String((answer.right.tally.err as { code?: unknown } | null)?.code)}`
    }))
  })
