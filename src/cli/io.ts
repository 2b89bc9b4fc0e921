// The streams, environment and exit status of one `mandate` run. The CLI is the composition root,
// so it alone may touch the process; it does so through this one service, whose default is the
// process itself (the bin), and which `run` (main.ts) replaces with a caller's streams so that a
// run can happen inside another program (a test) without a child process: its output captured,
// its environment its own, its exit status returned instead of written to `process.exitCode`.
import { Console as NodeConsole } from "node:console"
import { Console, Context, Effect } from "effect"

export interface Io {
  readonly stdout: NodeJS.WritableStream & { readonly isTTY?: boolean }
  readonly stderr: NodeJS.WritableStream & { readonly isTTY?: boolean }
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  readonly env: NodeJS.ProcessEnv
  /** Marks the run as failed: its exit status becomes 1. */
  readonly fail: () => void
}

/** This process's own streams and environment; a failure sets `process.exitCode`. */
export const processIo = (): Io => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  fail: () => { process.exitCode = 1 }
})

export class CliIo extends Context.Reference<CliIo>()("mandate/cli/CliIo", { defaultValue: processIo }) {}

/** The run's exit status becomes 1 (without an error line of its own). */
export const exitFailed: Effect.Effect<void> = Effect.flatMap(CliIo, (io) => Effect.sync(() => io.fail()))

/** The run's environment. */
export const cliEnv: Effect.Effect<NodeJS.ProcessEnv> = Effect.map(CliIo, (io) => io.env)

/** Effect's Console writing to the run's stdout and stderr (formatting as Node's console does). */
export const consoleOf = (io: Io): Console.Console => {
  const c = new NodeConsole({ stdout: io.stdout, stderr: io.stderr, colorMode: false })
  const s = (f: () => void) => Effect.sync(f)
  return {
    [Console.TypeId]: Console.TypeId,
    assert: (condition, ...args) => s(() => c.assert(condition, ...args)),
    clear: s(() => c.clear()),
    count: (label) => s(() => c.count(label)),
    countReset: (label) => s(() => c.countReset(label)),
    debug: (...args) => s(() => c.debug(...args)),
    dir: (item, options) => s(() => c.dir(item, options)),
    dirxml: (...args) => s(() => c.dirxml(...args)),
    error: (...args) => s(() => c.error(...args)),
    group: (options) => s(() => options?.collapsed ? c.groupCollapsed(options.label) : c.group(options?.label)),
    groupEnd: s(() => c.groupEnd()),
    info: (...args) => s(() => c.info(...args)),
    log: (...args) => s(() => c.log(...args)),
    table: (data, properties) => s(() => c.table(data, properties as Array<string> | undefined)),
    time: (label) => s(() => c.time(label)),
    timeEnd: (label) => s(() => c.timeEnd(label)),
    timeLog: (label, ...args) => s(() => c.timeLog(label, ...args)),
    trace: (...args) => s(() => c.trace(...args)),
    warn: (...args) => s(() => c.warn(...args)),
    unsafe: c
  }
}
