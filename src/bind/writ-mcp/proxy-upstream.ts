// The proxy's connection to its server when that server is reached over Streamable HTTP
// (./proxy.ts with `reconnect`; docs/mcp-gate.md, "When the server exits"). Such a server does not
// exit, it drops: a request is refused or a stream breaks, and the SDK's transport says so through
// `onerror` (the rule the gate follows too, ../writ-mcp-gate/restart.ts). On a drop the proxy
// answers every request open on it `unreachable_server` and records the bound ones as unanswered
// (they may have run; none is sent again, spec 7.3), and the server is "down". The next request
// that needs it reconnects: a new transport, `initialize` again with the client's own parameters,
// the advertisement learned again (a restarted executor may hold another key), after the wait of
// the reconnect backoff (./backoff.ts); a reconnect that fails answers that request, and the next
// one waits longer. A request that finds the server up resets the backoff.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Duration, Effect } from "effect"
import { backoff } from "./backoff.js"
import { unreachableServer, type UnreachableServer } from "./reason.js"
import type { RpcError } from "./rpc.js"

export type UpstreamState = "up" | "down" | "connecting"

export interface ProxyUpstream {
  /** The transport requests go to now. */
  readonly current: () => Transport
  readonly state: () => UpstreamState
  /** Whether `t`'s drop is news: it is the transport in use and was up (it is down from now). */
  readonly dropped: (t: Transport) => boolean
  /** Up before a request is sent: reconnected first when it is down. */
  readonly ensure: Effect.Effect<void, UnreachableServer>
}

/**
 * `wire` sets a new transport's handlers; `handshake` starts it and initializes the server on it
 * (it is `current` by then). Reconnects are serialized, so requests arriving together reconnect once.
 */
export const proxyUpstream = (
  first: Transport,
  reconnect: (() => Transport) | undefined,
  wire: (t: Transport) => void,
  handshake: (t: Transport) => Effect.Effect<void, RpcError>
): Effect.Effect<ProxyUpstream> =>
  Effect.gen(function*() {
    let current = first
    let state: UpstreamState = "up"
    let inRow = 0
    const waits = yield* backoff()
    const lock = yield* Effect.makeSemaphore(1)
    wire(first)
    const ensure = lock.withPermits(1)(Effect.gen(function*() {
      if (state === "up") {
        if (inRow > 0) yield* waits.reset
        inRow = 0
        return
      }
      if (reconnect === undefined) return yield* Effect.fail(unreachableServer("the server exited"))
      inRow++
      const waited = yield* waits.wait
      yield* Effect.logWarning(`mcp-proxy: reconnecting to the server (attempt ${inRow} in a row, after ${Duration.format(waited)})`)
      const t = reconnect()
      current = t
      state = "connecting"
      wire(t)
      yield* handshake(t).pipe(
        Effect.tapError(() => Effect.sync(() => state = "down")),
        Effect.tapError(() => Effect.promise(() => t.close().catch(() => undefined))),
        Effect.mapError((e) => unreachableServer(`the server dropped and could not be reconnected: ${e.message}`))
      )
      state = "up"
      yield* Effect.logInfo("mcp-proxy: reconnected to the server")
    }))
    return {
      current: () => current,
      state: () => state,
      dropped: (t) => {
        if (t !== current || state !== "up") return false
        state = "down"
        return true
      },
      ensure
    }
  })
