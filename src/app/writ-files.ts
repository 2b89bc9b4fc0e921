// The composition root of `mandate writ files run`: one executor (src/writ/executor) over the file
// binding (src/bind/writ-file), with a handler module as its application and the SQLite stores
// (which survive a restart, section 9) or, without a store file, the memory stores (which do not).
// One pass over a folder: every call file beside a work item with no final tally is executed.
import type { FileSystem } from "@effect/platform"
import { Effect, Layer, type Scope } from "effect"
import { executeFolder } from "../bind/writ-file/index.js"
import { Executor } from "../writ/executor/executor.js"
import { Application } from "../writ/executor/services.js"
import { loadHandler, readSeedFile, ServeError } from "./inputs.js"
import { checkRoots, plainExecutor } from "./plain-executor.js"

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
    yield* checkRoots(options.roots)
    const app = yield* loadHandler(options.handlerModule)
    const context = yield* Layer.build(plainExecutor({ seed, application: Layer.succeed(Application, app), roots: options.roots, ...(options.storeFile === undefined ? {} : { storeFile: options.storeFile }) })).pipe(
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
