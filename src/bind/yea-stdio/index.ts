// `stdio:` (SPEC §2.3): a local service as a child process speaking NDJSON on stdin/stdout.
// `serveStdio` serves a runtime on this process's own stdin/stdout; `connectStdio` starts a child
// and talks to it (the child is killed when the scope ends).
import { Effect, Scope } from "effect"
import { spawn } from "node:child_process"
import type { YeaConnection } from "../../yea/client.js"
import type { YeaServiceRuntime } from "../../yea/service/runtime.js"
import { streamConnection, type StreamClientOptions } from "../yea-stream/client.js"
import { serveConnection, type StreamLimits } from "../yea-stream/serve.js"

/** Serves until stdin ends (the parent closed it). No idle timeout: the parent owns the lifetime. */
export const serveStdio = (runtime: YeaServiceRuntime, limits: StreamLimits = {}): Effect.Effect<void> =>
  serveConnection(runtime, process.stdin, process.stdout, { idleMs: Number.MAX_SAFE_INTEGER, ...limits }, () => process.stdin.destroy())

export const connectStdio = (
  command: string,
  args: ReadonlyArray<string>,
  options: StreamClientOptions & { readonly env?: NodeJS.ProcessEnv } = {}
): Effect.Effect<YeaConnection, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], env: options.env ?? process.env })),
    (child) => Effect.sync(() => void child.kill("SIGKILL"))
  ).pipe(Effect.flatMap((child) => streamConnection(child.stdout!, child.stdin!, () => void child.kill(), options)))
