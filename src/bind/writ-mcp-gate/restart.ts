// Restarting the plain MCP server behind `writ mcp-gate` (docs/mcp-gate.md, "When the server
// exits"). A call in flight when the server exits is answered `unknown_outcome` (upstream.ts: it
// may have run, and it is never sent again); the server itself is started again by the next call
// that needs it, not at once, so a server that keeps exiting costs a restart per call and no more.
// Restarts in a row (the server found dead again by the next call) wait a backoff doubling from
// RESTART_DELAY up to RESTART_DELAY_MAX; a call that finds the server alive resets it. A restart
// that fails (the command cannot start, or does not initialize in time) answers that call
// `unreachable_server`, and the next call tries again after a longer wait.
//
// A server over Streamable HTTP does not exit, it drops: the connection is refused or a stream
// breaks, and the SDK's transport says so only through `onerror`. With `dropsOnError`, such an
// error closes the client, which answers every request in flight (ConnectionClosed:
// `unknown_outcome` in upstream.ts, recorded by the executor, never sent again), and the next call
// reconnects (a new transport from `restart`, initialize again) with the same backoff, each wait an
// `Effect.sleep` on the Clock in context.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Duration, Effect, Runtime } from "effect"
import { unreachableServer, type UnreachableServer } from "../writ-mcp/reason.js"

export const RESTART_DELAY = Duration.millis(200)
export const RESTART_DELAY_MAX = Duration.seconds(10)

/** The wait before the `n`th restart in a row (n >= 1). */
export const restartDelay = (n: number): Duration.Duration =>
  Duration.min(Duration.times(RESTART_DELAY, 2 ** Math.min(n - 1, 16)), RESTART_DELAY_MAX)

/**
 * `ensure` for `client`'s server (server.ts `Upstream`; true when it restarted it): the SDK Client keeps its handlers across
 * a new `connect`, so a restart is a new transport from `restart` connected to the same Client
 * (initialize again). Restarts are serialized, so concurrent calls restart the server once.
 */
export const restarter = (
  client: Client,
  connectTimeoutMs: number,
  restart: (() => Transport) | undefined,
  dropsOnError = false
): Effect.Effect<Effect.Effect<boolean, UnreachableServer>> =>
  Effect.gen(function*() {
    let alive = true
    let inRow = 0
    const previous = client.onclose
    client.onclose = () => {
      alive = false
      previous?.()
    }
    if (dropsOnError) {
      const run = Runtime.runFork(yield* Effect.runtime<never>())
      const previousError = client.onerror
      client.onerror = (e) => {
        previousError?.(e)
        if (!alive) return
        alive = false
        run(Effect.zipRight(
          Effect.logWarning(`mcp-gate: the MCP server dropped (${e.message}); calls in flight are answered unknown_outcome, the next call reconnects`),
          Effect.promise(() => client.close().catch(() => undefined))
        ))
      }
    }
    const lock = yield* Effect.makeSemaphore(1)
    return lock.withPermits(1)(Effect.gen(function*() {
      if (alive) {
        inRow = 0
        return false
      }
      if (restart === undefined) return yield* Effect.fail(unreachableServer("the server behind the gate has exited"))
      inRow++
      const delay = restartDelay(inRow)
      yield* Effect.logWarning(`mcp-gate: the MCP server has exited or dropped; restarting or reconnecting it (restart ${inRow} in a row, after ${Duration.format(delay)})`)
      yield* Effect.sleep(delay)
      yield* Effect.tryPromise({
        try: () => client.connect(restart(), { timeout: connectTimeoutMs }),
        catch: (e) => unreachableServer(`the server behind the gate exited and could not be restarted: ${String(e)}`)
      }).pipe(Effect.tapError((e) => Effect.logWarning(`mcp-gate: ${e.message}`)))
      alive = true
      yield* Effect.logInfo("mcp-gate: the MCP server was restarted")
      return true
    }))
  })
