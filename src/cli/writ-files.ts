// `mandate writ files run DIR` and `mandate writ files check WORK`: the file binding (a call and its
// tally as files beside the work, src/bind/writ-file). `run` is the executor's side, one pass over
// a folder; `check` is the delegator's, verifying the tally beside a work item against the call
// beside it (spec section 6.2). A delegator hands a call over with `mandate writ call --out
// WORK.writ-call.json`.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { describeServeError } from "../app/inputs.js"
import { runFiles } from "../app/writ-files.js"
import { readTallyBeside } from "../bind/writ-file/index.js"
import { cliError, runCommand } from "./writ-io.js"
import { exitFailed } from "./io.js"

const runCommand_ = Command.make(
  "run",
  {
    dir: Args.text({ name: "DIR" }).pipe(Args.withDescription("The shared folder")),
    key: Options.file("key", { exists: "yes" }).pipe(Options.withDescription("The executor's key file (the leaf hld)")),
    root: Options.text("root").pipe(Options.repeated, Options.withDescription("A root did:key to act under (section 7.1)")),
    handler: Options.file("handler", { exists: "yes" }).pipe(Options.withDescription("Module exporting the ApplicationService")),
    store: Options.text("store").pipe(Options.optional, Options.withDescription("SQLite file of every store (absent: memory, lost after this pass)")),
    max: Options.integer("max").pipe(Options.withDefault(1000), Options.withDescription("At most this many work items in this pass"))
  },
  (o) =>
    Effect.scoped(Effect.gen(function*() {
      const done = yield* runFiles({
        dir: o.dir, seedFile: o.key, roots: o.root, handlerModule: o.handler, max: o.max,
        ...(Option.isSome(o.store) ? { storeFile: o.store.value } : {})
      })
      for (const d of done) yield* Console.log(`${d.outcome}  ${d.work}`)
      yield* Console.log(`${done.length} executed`)
    })).pipe(
      Effect.catchAll((e) =>
        Effect.zipRight(Console.error(`error: ${describeServeError(e, "mandate writ files run")}`), exitFailed)
      )
    )
).pipe(Command.withDescription("Execute every call file in DIR whose work has no final tally; write each answer beside the work"))

const checkCommand = Command.make(
  "check",
  { work: Args.text({ name: "WORK" }).pipe(Args.withDescription("The work item (its .writ-call.json and .writ-tally.json beside it)")) },
  (o) =>
    runCommand(Effect.gen(function*() {
      const v = yield* readTallyBeside(o.work).pipe(
        Effect.catchTag("FileBindError", (e) => Effect.fail(cliError(e.reason, e.message, e.path)))
      )
      const t = v.tally.value
      yield* Console.log(`tally ${v.tally.id}: valid`)
      yield* Console.log(`  st ${t.st}${t.err === null ? "" : ` (${t.err.code})`}  used ${JSON.stringify(t.used)}`)
    }))
).pipe(Command.withDescription("Verify the tally beside WORK against the call beside it (section 6.2)"))

export const writFilesCommand = Command.make("files").pipe(Command.withSubcommands([runCommand_, checkCommand]))
