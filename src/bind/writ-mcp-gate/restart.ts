// Restarting the plain MCP server behind `writ mcp-gate` (docs/mcp-gate.md, "When the server
// exits"). A call in flight when the server exits is answered `unknown_outcome` (upstream.ts: it
// may have run, and it is never sent again); the server itself is started again by the next call
// that needs it, not at once, so a server that keeps exiting costs a restart per call and no more.
// Restarts in a row (the server found dead again by the next call) wait the next step of the
// reconnect backoff (../writ-mcp/backoff.ts: doubling, capped, jittered, an Effect Schedule on the
// Clock and Random in context); a call that finds the server alive resets it. A restart
// that fails (the command cannot start, or does not initialize in time) answers that call
// `unreachable_server`, and the next call tries again after a longer wait.
//
// A server over Streamable HTTP does not exit, it drops: the connection is refused or a stream
// breaks, and the SDK's transport says so only through `onerror`. With `dropsOnError`, such an
// error closes the client, which answers every request in flight (ConnectionClosed:
// `unknown_outcome` in upstream.ts, recorded by the executor, never sent again), and the next call
// reconnects (a new transport from `restart`, initialize again) with the same backoff.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Duration, Effect, Runtime, type Schedule } from "effect"
import { backoff, reconnectSchedule } from "../writ-mcp/backoff.js"
import { unreachableServer, type UnreachableServer } from "../writ-mcp/reason.js"

/**
 * `ensure` for `client`'s server (server.ts `Upstream`; true when it restarted it): the SDK Client keeps its handlers across
 * a new `connect`, so a restart is a new transport from `restart` connected to the same Client
 * (initialize again). Restarts are serialized, so concurrent calls restart the server once.
 */
export const restarter = (
  client: Client,
  connectTimeoutMs: number,
  restart: (() => Transport) | undefined,
  dropsOnError = false,
  schedule: Schedule.Schedule<Duration.Duration> = reconnectSchedule()
): Effect.Effect<Effect.Effect<boolean, UnreachableServer>> =>
  Effect.gen(function*() {
    let alive = true
    let inRow = 0
    const waits = yield* backoff(schedule)
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
        if (inRow > 0) yield* waits.reset
        inRow = 0
        return false
      }
      if (restart === undefined) return yield* Effect.fail(unreachableServer("the server behind the gate has exited"))
      inRow++
      yield* Effect.logWarning(`mcp-gate: the MCP server has exited or dropped; restarting or reconnecting it (restart ${inRow} in a row)`)
      const waited = yield* waits.wait
      yield* Effect.logDebug(`mcp-gate: waited ${Duration.format(waited)} before restart ${inRow}`)
      yield* Effect.tryPromise({
        try: () => client.connect(restart(), { timeout: connectTimeoutMs }),
        catch: (e) => unreachableServer(`the server behind the gate exited and could not be restarted: ${String(e)}`)
      }).pipe(Effect.tapError((e) => Effect.logWarning(`mcp-gate: ${e.message}`)))
      alive = true
      yield* Effect.logInfo("mcp-gate: the MCP server was restarted")
      return true
    }))
  })
