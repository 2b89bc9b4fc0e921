// `writ mcp-proxy --listen` (docs/mcp-gate.md, "Serving remote clients"): the proxy served over
// Streamable HTTP by the listener `writ mcp-gate` uses (../bind/mcp/remote.ts), one proxy per
// session. The proxy relays one client to one server, renumbering the client's ids and routing the
// server's own requests (elicitation, sampling) back to that client (../bind/writ-mcp/proxy.ts), so
// each session gets its own server, started for it (a new child for a stdio server) and closed
// with it: no session sees another's messages, requests or notifications.
//
// The grant is taken up once before the listener binds, so a chain that does not verify, or whose
// leaf the agent's key does not hold, stops the command at start rather than at each session.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect, ExecutionStrategy, Exit, Runtime, Scope } from "effect"
import { type RemoteListener, type RemoteOptions, serveRemote } from "../bind/mcp/remote.js"
import type { Connectable } from "../bind/mcp/serve.js"
import { type ProxyOptions, startProxy } from "../bind/writ-mcp/proxy.js"
import type { Receipts } from "../bind/writ-mcp/receipts.js"
import type { RpcError } from "../bind/writ-mcp/rpc.js"
import type { RandomBytes, Signer } from "../kernel/services.js"
import { holdChain } from "../writ/issue.js"
import type { WritError } from "../writ/reason.js"
import { ServeError } from "./inputs.js"

export interface ListenProxyOptions extends Omit<ProxyOptions, "client" | "server" | "reconnect"> {
  readonly listen: RemoteOptions
  /** A new transport to the real server (not started: each session's proxy starts its own). */
  readonly server: () => Transport
  /** The server is over Streamable HTTP: each session's proxy reconnects it when it drops. */
  readonly reconnect?: boolean
}

/** Serves the proxy at `listen` within the scope; returns the listener (its URL). */
export const listenProxy = (o: ListenProxyOptions): Effect.Effect<RemoteListener, ServeError | WritError, Signer | RandomBytes | Receipts | Scope.Scope> =>
  Effect.gen(function*() {
    yield* holdChain(o.grant)
    const rt = yield* Effect.runtime<Signer | RandomBytes | Receipts>()
    const parent = yield* Effect.scope
    const { listen, server: newServer, reconnect, ...proxy } = o
    const makeServer = (): Connectable => {
      const scope = Runtime.runSync(rt)(Scope.fork(parent, ExecutionStrategy.sequential))
      const close = () => Runtime.runPromise(rt)(Scope.close(scope, Exit.void))
      return {
        // Resolves once the proxy reads the session's transport: the listener then hands it the
        // initialize request. When the proxy ends (the client closed the session, or the server
        // exited), its scope is closed, and with it the session's server.
        connect: (transport) =>
          Runtime.runPromise(rt)(Effect.gen(function*() {
            const started = yield* Scope.extend(startProxy({ ...proxy, client: transport, server: newServer(), ...(reconnect === true ? { reconnect: newServer } : {}) }), scope)
            yield* Effect.forkIn(Effect.zipRight(started.done, Scope.close(scope, Exit.void)), parent)
          }).pipe(
            Effect.tapErrorCause((cause) => Effect.zipRight(Effect.logWarning("a session's proxy did not start", cause), Scope.close(scope, Exit.void))),
            Effect.catchAll((e: WritError | RpcError) => Effect.die(new Error(`the session's proxy did not start: ${e.message}`)))
          )),
        close
      }
    }
    return yield* serveRemote(listen, makeServer).pipe(
      Effect.mapError((e) => new ServeError({ code: "mandate/usage", message: e.message }))
    )
  }).pipe(Effect.withSpan("writ.mcp.proxy.listen"))
