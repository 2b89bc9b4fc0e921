// `mandate writ scenarios DIR`: runs every executor scenario in DIR (spec section 14.1) against the
// real executor, first with the SQLite stores (one fresh file per scenario), then with the memory
// stores; prints one line per failed step and ends with `N passed, N failed` (N counts scenarios,
// a scenario passing only when it passes on every store). Exit status 1 on any failure.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Console, Context, Effect, Either, Layer, type Scope } from "effect"
import * as MemoryWrit from "../store/memory/writ-stores.js"
import * as SqliteWrit from "../store/sqlite/writ-stores.js"
import {
  decodeScenario,
  failureLines,
  runScenario,
  type Scenario,
  type ScenarioResult,
  type ScenarioStore,
  type StoreContext
} from "../writ/executor/scenario.js"
import { exitFailed } from "./io.js"

/**
 * A memory store: one instance for the whole scenario, which a restart keeps (it is the "file").
 * It lives in the current scope, which must outlast the scenario.
 */
export const memoryScenarioStore: Effect.Effect<ScenarioStore, never, Scope.Scope> = Effect.map(
  Layer.build(MemoryWrit.layer),
  (context) => ({
    name: "memory",
    open: () => Effect.succeed(context as Context.Context<StoreContext>)
  })
)

/** A SQLite store on `filename`; each open is a new connection to the same file. */
export const sqliteScenarioStore = (filename: string): ScenarioStore => ({
  name: "sqlite",
  open: (scope) =>
    Effect.map(Layer.buildWithScope(SqliteWrit.layer(filename), scope), (c) => c as Context.Context<StoreContext>)
})

export interface FileResult {
  readonly file: string
  readonly store: string
  readonly result: ScenarioResult
}

/** Runs every `*.json` scenario of `dir`, in file-name order, on each store kind named. */
export const runScenarioDir = (dir: string, stores: ReadonlyArray<"sqlite" | "memory"> = ["sqlite", "memory"]) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const files = (yield* fs.readDirectory(dir)).filter((f) => f.endsWith(".json")).sort()
    const tmp = yield* fs.makeTempDirectoryScoped({ prefix: "mandate-scenarios-" })
    const results: Array<FileResult> = []
    for (const file of files) {
      const text = yield* fs.readFileString(path.join(dir, file))
      const decoded = yield* Effect.either(decodeScenario(file, text))
      if (Either.isLeft(decoded)) {
        results.push({ file, store: "-", result: { name: file, failures: [{ step: -1, message: decoded.left.message }] } })
        continue
      }
      const scenario: Scenario = decoded.right
      for (const kind of stores) {
        const store = kind === "memory"
          ? memoryScenarioStore
          : Effect.succeed(sqliteScenarioStore(path.join(tmp, `${file.replace(/\.json$/, "")}.sqlite`)))
        // One scope per scenario run: the store's resources close when its scenario is done.
        results.push({ file, store: kind, result: yield* Effect.scoped(Effect.flatMap(store, (s) => runScenario(scenario, s))) })
      }
    }
    return results
  }).pipe(Effect.scoped)

/** Scenario files that passed on every store, and those that failed on any. */
export const tally = (results: ReadonlyArray<FileResult>) => {
  const failed = new Set(results.filter((r) => r.result.failures.length > 0).map((r) => r.file))
  const all = new Set(results.map((r) => r.file))
  return { passed: all.size - failed.size, failed: failed.size }
}

const dir = Args.directory({ name: "DIR", exists: "yes" }).pipe(Args.withDescription("A folder of scenario files (section 14.1)"))
const store = Options.choice("store", ["both", "sqlite", "memory"]).pipe(
  Options.withDefault("both" as const),
  Options.withDescription("Which store Layer to run the executor on")
)

export const writScenariosCommand = Command.make("scenarios", { dir, store }, ({ dir, store }) =>
  Effect.gen(function*() {
    const kinds = store === "both" ? (["sqlite", "memory"] as const) : ([store] as const)
    const results = yield* runScenarioDir(dir, kinds)
    for (const r of results) {
      for (const line of failureLines(`${r.file} (${r.store})`, r.result)) yield* Console.log(line)
    }
    const { passed, failed } = tally(results)
    yield* Console.log(`${passed} passed, ${failed} failed`)
    if (failed > 0) yield* exitFailed
  })
)
