// The `mandate` command line: one @effect/cli tree (tree.ts), of which a run loads only the
// commands its arguments select, so that starting it stays cheap.
//
// Every failure is one line on stderr, `error: <reason> at <where>: <why>`, and exit status 1:
// a command's own failures (writ-io.ts `runCommand`), a usage error found by @effect/cli (which
// would otherwise print its help text; it is re-said here as `mandate/usage` at the command
// path), and anything unexpected (`mandate/internal`). Never a stack trace.
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect } from "effect"
import { commandFor, commandPath } from "./tree.js"
import { CommandPath } from "./where.js"

const VERSION = "0.1.0"

/** `error: <reason> at <where>: <why>` from a multi-line, possibly coloured text. */
const oneLine = (reason: string, where: string, why: string): string =>
  `error: ${reason} at ${where}: ${why.replace(/\x1b\[[0-9;]*m/g, "").trim().replace(/\n\s*\n/g, "; ").replace(/\s+/g, " ")}`

const fail = (line: string) => Effect.zipRight(Console.error(line), Effect.sync(() => { process.exitCode = 1 }))

const main = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const args = argv.slice(2)
    const where = ["mandate", ...commandPath(args)].join(" ")
    const real = yield* Effect.console
    // @effect/cli prints a usage error's help text with Console.error before failing with it; that
    // text is dropped here (the failure is printed as one line below). Commands get the real
    // console back for their own output.
    const quiet: Console.Console = { ...real, error: () => Effect.void }
    const mandate = yield* Effect.tryPromise({
      try: () => commandFor(args, (handler) => handler.pipe(Effect.withConsole(real), Effect.provideService(CommandPath, where))),
      catch: (e) => e
    })
    // The commands are loaded by name, so their types are erased; every one needs at most what
    // NodeContext provides (FileSystem, Path, Terminal, CommandExecutor), as before the split.
    const run = Command.run(mandate, { name: "mandate", version: VERSION }) as (
      argv: ReadonlyArray<string>
    ) => Effect.Effect<void, unknown, NodeContext.NodeContext>
    yield* run(argv).pipe(
      Effect.withConsole(quiet),
      Effect.catchIf(ValidationError.isValidationError, (e) => fail(oneLine("mandate/usage", where, HelpDoc.toAnsiText(e.error))))
    )
  }).pipe(
    Effect.catchAllCause((cause) => {
      const e = Cause.squash(cause)
      return fail(oneLine("mandate/internal", "mandate", e instanceof Error ? e.message : String(e)))
    })
  )

main(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
