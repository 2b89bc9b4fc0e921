// Opening the executor's stores for tests: a fresh memory store, or a SQLite file that can be
// closed and reopened (a restart), and a way to make one store method fail (fault injection).
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { StoreError } from "../../src/accounting/store-error.js"
import * as MemoryWrit from "../../src/store/memory/writ-stores.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"

export type Kind = "memory" | "sqlite"
export const kinds: ReadonlyArray<Kind> = ["memory", "sqlite"]

/**
 * A durable store that survives `reopen` (memory: same instance; SQLite: same file, new
 * connection). It lives in the caller's scope: its contexts are used only while that scope is open.
 */
export interface Durable {
  readonly context: () => Context.Context<StoreContext>
  readonly reopen: Effect.Effect<Context.Context<StoreContext>>
  /** Closes the store now (a crash or a shutdown); the scope would close it anyway. */
  readonly close: Effect.Effect<void>
}

export const openDurable = (kind: Kind): Effect.Effect<Durable, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (kind === "memory") {
      const context = (yield* Layer.build(MemoryWrit.layer)) as Context.Context<StoreContext>
      return { context: () => context, reopen: Effect.succeed(context), close: Effect.void }
    }
    const file = join(mkdtempSync(join(tmpdir(), "mandate-writ-")), "executor.sqlite")
    let scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    let context = (yield* Layer.buildWithScope(SqliteWrit.layer(file), scope).pipe(Effect.orDie)) as Context.Context<StoreContext>
    return {
      context: () => context,
      reopen: Effect.gen(function*() {
        yield* Scope.close(scope, Exit.void)
        scope = yield* Scope.make()
        context = (yield* Layer.buildWithScope(SqliteWrit.layer(file), scope).pipe(Effect.orDie)) as Context.Context<StoreContext>
        return context
      }),
      close: Effect.suspend(() => Scope.close(scope, Exit.void))
    }
  })

/** A StoreError as a failing driver would produce it. */
export const injected = (operation: string) =>
  Effect.fail(new StoreError({ operation, message: "injected fault" }))

/** `context` with `tag`'s service replaced by `patch(original)`. */
export const patch = <I, S>(
  context: Context.Context<StoreContext>,
  tag: Context.Tag<I, S>,
  f: (original: S) => S
): Context.Context<StoreContext> => Context.add(context, tag, f(Context.unsafeGet(context, tag))) as Context.Context<StoreContext>
