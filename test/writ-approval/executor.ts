// An executor on the memory stores, in the current scope, for tests that need one in process with
// no transport: its key, the roots it accepts, and an application that answers every call ok.
import { Context, Effect, Layer, type Scope } from "effect"
import { Signer } from "../../src/kernel/services.js"
import { VerificationCache } from "../../src/kernel/verification-cache.js"
import * as MemoryWrit from "../../src/store/memory/writ-stores.js"
import { Executor, layer as executorLayer, type ExecutorService } from "../../src/writ/executor/executor.js"
import { Application, type ApplicationService, Forwarder, PeerBindings, RootPolicy } from "../../src/writ/executor/services.js"

export const okApplication: ApplicationService = {
  perform: (op) => Effect.succeed({ st: "ok", res: { done: op.op }, used: {} })
}

export const memoryExecutor = (
  seed: Uint8Array,
  roots: ReadonlyArray<string>,
  app: ApplicationService = okApplication
): Effect.Effect<ExecutorService, never, Scope.Scope> =>
  Effect.gen(function*() {
    const services = Layer.mergeAll(
      Signer.fromSeed(seed),
      Layer.succeed(Application, app),
      RootPolicy.list(roots),
      PeerBindings.none,
      Forwarder.none,
      VerificationCache.layer({ maxBytes: 1 << 20 })
    )
    const context = yield* Layer.build(executorLayer.pipe(Layer.provide(Layer.merge(services, MemoryWrit.layer))))
    return Context.get(context, Executor)
  })
