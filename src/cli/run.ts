// The `mandate` command line as a function: `run(args, io)` runs one command line to its end and
// returns its exit status. main.ts (the bin) calls it with this process's streams; a program (a
// test) calls it with its own, and nothing of the process is touched: output goes to `io`'s
// streams (Effect's Console, @effect/cli's help and usage text included), the environment is
// `io.env`, and the exit status is returned rather than written to `process.exitCode`.
//
// One @effect/cli tree (tree.ts), of which a run loads only the commands its arguments select, so
// that starting it stays cheap.
//
// Before @effect/cli parses, the command's help model (help.ts) answers `--help` (and a group named
// alone) with the whole command's help, and refuses an unknown command or option by name.
//
// Every failure is one line on stderr, `error: <reason> at <where>: <why>`, and exit status 1:
// a command's own failures (writ-io.ts `runCommand`), a usage error found by @effect/cli (which
// would otherwise print its help text; it is re-said here as `mandate/usage` at the command
// path), and anything unexpected (`mandate/internal`). Never a stack trace.
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Readable } from "node:stream"
import { Cause, ConfigProvider, Console, Effect } from "effect"
import { renderHelp, select, unknownCommand, unknownOption, useColour, wantsHelp } from "./help.js"
import { CliIo, consoleOf, exitFailed, type Io } from "./io.js"
import { commandFor, commandPath } from "./tree.js"
import { CommandPath } from "./where.js"

const VERSION = "0.1.0"

/** `error: <reason> at <where>: <why>` from a multi-line, possibly coloured text. */
const oneLine = (reason: string, where: string, why: string): string =>
  `error: ${reason} at ${where}: ${why.replace(/\x1b\[[0-9;]*m/g, "").trim().replace(/\n\s*\n/g, "; ").replace(/\s+/g, " ")}`

const fail = (line: string) => Effect.zipRight(Console.error(line), exitFailed)

/** Runs `mandate ...args` (the arguments after the program name) with the streams of the `CliIo`
 * in context; its exit status is whatever the commands mark through that service. */
export const runArgs = (args: ReadonlyArray<string>): Effect.Effect<void, never, NodeContext.NodeContext> =>
  Effect.gen(function*() {
    const argv = ["node", "mandate", ...args]
    const where = ["mandate", ...commandPath(args)].join(" ")
    const real = yield* Effect.console
    const io = yield* CliIo
    // Help, the version and the usage checks come from the command's help model (help.ts), before
    // @effect/cli parses: its help names only the last word of a command and its errors name the
    // value after an unknown option rather than the option.
    if (args.length === 1 && args[0] === "--version") return yield* Console.log(`mandate ${VERSION}`)
    const selected = yield* Effect.tryPromise({ try: () => select(args), catch: (e) => e })
    const whole = ["mandate", ...selected.path].join(" ")
    const atGroup = selected.group !== undefined && args.length === selected.path.length
    if (wantsHelp(args) || atGroup) return yield* Console.log(renderHelp(selected.path, selected.model, useColour(io.stdout.isTTY, io.env)).trimEnd())
    const unknown = unknownCommand(args, selected) ?? unknownOption(args, selected)
    if (unknown !== undefined) return yield* fail(oneLine("mandate/usage", whole, unknown))
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
    const command = Command.run(mandate, { name: "mandate", version: VERSION }) as (
      argv: ReadonlyArray<string>
    ) => Effect.Effect<void, unknown, NodeContext.NodeContext>
    yield* command(argv).pipe(
      Effect.withConsole(quiet),
      Effect.catchIf(ValidationError.isValidationError, (e) => fail(oneLine("mandate/usage", where, HelpDoc.toAnsiText(e.error))))
    )
  }).pipe(
    Effect.catchAllCause((cause) => {
      const e = Cause.squash(cause)
      return fail(oneLine("mandate/internal", "mandate", e instanceof Error ? e.message : String(e)))
    })
  )

/** The streams and environment of an in-process run; a failure is counted, not written anywhere. */
export interface RunIo {
  readonly stdout: NodeJS.WritableStream
  readonly stderr: NodeJS.WritableStream
  readonly stdin?: NodeJS.ReadableStream
  readonly env?: NodeJS.ProcessEnv
}

/** Runs `mandate ...args` in this process with `io`'s streams and environment; resolves with its
 * exit status (0 or 1). Never rejects, never touches `process.exitCode` or the process's streams. */
export const run = (args: ReadonlyArray<string>, io: RunIo): Promise<number> => {
  let status = 0
  const full: Io = {
    stdout: io.stdout,
    stderr: io.stderr,
    stdin: io.stdin ?? emptyStdin(),
    env: io.env ?? process.env,
    fail: () => { status = 1 }
  }
  const env = Object.entries(full.env).filter((e): e is [string, string] => e[1] !== undefined)
  return runArgs(args).pipe(
    Effect.withConsole(consoleOf(full)),
    // Config (environment variables read through Effect) sees the run's environment too.
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(env))),
    Effect.provideService(CliIo, full),
    Effect.provide(NodeContext.layer),
    Effect.runPromise
  ).then(() => status, () => 1)
}

const emptyStdin = (): NodeJS.ReadableStream => Readable.from([])
