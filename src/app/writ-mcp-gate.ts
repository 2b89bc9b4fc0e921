// The composition root of `mandate writ mcp-gate` (docs/mcp-gate.md): the SDK Client connected to
// the plain MCP server (stdio child or Streamable HTTP), one executor (src/writ/executor) whose
// Application is that server's tools (src/bind/writ-mcp-gate/upstream.ts), on the SQLite stores
// (which survive a restart, section 9) or the memory stores, and the SDK Server toward the client
// (src/bind/writ-mcp-gate/server.ts). Pending records left by a crash are resolved to
// `unknown_outcome` before the first call (section 9): the gate never sends such a call again.
// A stdio server that exits is restarted for the next call (../bind/writ-mcp-gate/restart.ts).
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Context, Deferred, type Duration, Effect, ExecutionStrategy, Exit, Layer, Runtime, Scope } from "effect"
import { type RemoteOptions, serveRemote } from "../bind/mcp/remote.js"
import { RandomBytes } from "../kernel/services.js"
import { restarter } from "../bind/writ-mcp-gate/restart.js"
import { gateCapabilities, serveGate } from "../bind/writ-mcp-gate/server.js"
import { gateSessions } from "../bind/writ-mcp-gate/sessions.js"
import { liveness, type Requests, upstreamApplication } from "../bind/writ-mcp-gate/upstream.js"
import type { PinFile } from "../bind/writ-mcp/policy.js"
import { CLIENT_CAPABILITIES } from "../bind/writ-mcp/rpc.js"
import { Executor } from "../writ/executor/executor.js"
import { Application } from "../writ/executor/services.js"
import { ServeError } from "./inputs.js"
import { checkRoots, plainExecutor } from "./plain-executor.js"

export interface McpGateOptions {
  /** The gate's key seed: it signs every tally, and is advertised to clients. */
  readonly seed: Uint8Array
  /** Root keys the gate acts under (section 7.1). */
  readonly roots: ReadonlyArray<string>
  /** The SQLite file of every store; absent, memory stores that a restart loses. */
  readonly storeFile?: string
  /** Toward the client: one transport (stdio for the command), or a Streamable HTTP listener
   * (../bind/mcp/remote.ts) with a server per session over the one executor. */
  readonly client: Transport | { readonly listen: RemoteOptions }
  /** Toward the plain MCP server (not started: the gate starts it). */
  readonly upstream: Transport
  /** A new transport to the same server (a stdio child), to restart it when it has exited: the
   * next call that needs it restarts it after a bounded backoff. Absent, a server that exited
   * stays gone and every call is `unreachable_server`. */
  readonly restart?: () => Transport
  /** The upstream is Streamable HTTP: a transport error is a drop (../bind/writ-mcp-gate/restart.ts),
   * the calls in flight are answered, and the next call reconnects through `restart`. */
  readonly reconnectOnError?: boolean
  readonly pins?: PinFile
  readonly closed?: boolean
  /** Requests other than `tools/call` relayed unchecked (../bind/writ-mcp/methods.ts). */
  readonly allow?: ReadonlyArray<string>
  readonly maxResultBytes?: number
  /** How long a tool may go without answering or reporting progress (default 60 s). */
  readonly timeout?: Duration.DurationInput
  /** How often open calls get progress while the client is answering a form (default 15 s). */
  readonly keepAlive?: Duration.DurationInput
  /** How long connecting to the server may take (default 30 s). */
  readonly connectTimeout?: number
}

export interface RunningMcpGate {
  readonly did: string
  /** Pending records resolved at start (section 9). */
  readonly resolved: number
  /** Resolves when the client has closed the session (a listener: never, until the scope closes). */
  readonly closed: Effect.Effect<void>
  /** The endpoint's URL when listening. */
  readonly url?: string
}

const transportError = (what: string) => (e: unknown) => new ServeError({ code: "mandate/transport", message: `${what}: ${String(e)}` })

/** Starts the gate in the current scope; closing the scope closes both sides. */
export const startMcpGate = (o: McpGateOptions): Effect.Effect<RunningMcpGate, ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkRoots(o.roots)
    if (o.roots.length === 0) return yield* Effect.fail(new ServeError({ code: "mandate/usage", message: "give at least one --root" }))
    const upstream = new Client({ name: "mandate-writ-mcp-gate", version: "0.1.0" }, { capabilities: CLIENT_CAPABILITIES })
    const connectTimeout = o.connectTimeout ?? 30_000
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => upstream.connect(o.upstream, { timeout: connectTimeout }), catch: transportError("cannot connect to the MCP server") }),
      () => Effect.promise(() => upstream.close().catch(() => undefined))
    )
    const ensure = yield* restarter(upstream, connectTimeout, o.restart, o.reconnectOnError ?? false)
    const requests: Requests = new Map()
    const live = liveness()
    const application = Layer.succeed(Application, upstreamApplication(upstream, requests, live, {
      ...(o.maxResultBytes === undefined ? {} : { maxResultBytes: o.maxResultBytes }),
      ...(o.timeout === undefined ? {} : { timeout: o.timeout })
    }))
    const context = yield* Layer.build(plainExecutor({ seed: o.seed, application, roots: o.roots, ...(o.storeFile === undefined ? {} : { storeFile: o.storeFile }) })).pipe(
      Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", ...(o.storeFile === undefined ? {} : { path: o.storeFile }), message: e.message }))
    )
    const executor = Context.get(context, Executor)
    const resolved = yield* executor.recover.pipe(Effect.mapError((e) => new ServeError({ code: "mandate/store_unavailable", message: e.message })))
    const allow = o.allow ?? []
    const capabilities = gateCapabilities(executor.did, upstream.getServerCapabilities(), allow)
    const instructions = upstream.getInstructions()
    const gateOptions = {
      executor,
      upstream: { client: upstream, ensure },
      requests,
      closed: o.closed ?? false,
      allow,
      capabilities,
      live,
      // Every session's server over the one upstream: the server's own requests and notifications
      // routed to the session they belong to (../bind/writ-mcp-gate/sessions.ts).
      sessions: gateSessions(upstream),
      ...(o.keepAlive === undefined ? {} : { keepAlive: o.keepAlive }),
      ...(o.pins === undefined ? {} : { pins: o.pins })
    }
    const newServer = () => new Server({ name: "mandate-writ-mcp-gate", version: "0.1.0" }, {
      capabilities: capabilities as never,
      ...(instructions === undefined ? {} : { instructions })
    })
    if ("listen" in o.client) {
      // One SDK Server per session, its handlers' fibers in a scope of its own, closed with it.
      const rt = yield* Effect.runtime<never>()
      const parent = yield* Effect.scope
      const makeServer = () => {
        const server = newServer()
        const scope = Runtime.runSync(rt)(Scope.fork(parent, ExecutionStrategy.sequential))
        Runtime.runSync(rt)(Scope.extend(serveGate(server, gateOptions), scope))
        server.onclose = () => void Runtime.runFork(rt)(Scope.close(scope, Exit.void))
        return server
      }
      const listener = yield* serveRemote(o.client.listen, makeServer).pipe(
        Effect.provide(RandomBytes.live),
        Effect.mapError((e) => new ServeError({ code: "mandate/usage", message: e.message }))
      )
      return { did: executor.did, resolved, closed: Effect.never, url: listener.url }
    }
    const client = o.client
    const server = newServer()
    yield* serveGate(server, gateOptions)
    const closed = yield* Deferred.make<void>()
    server.onclose = () => Deferred.unsafeDone(closed, Effect.void)
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => server.connect(client), catch: transportError("cannot serve the client") }),
      () => Effect.promise(() => server.close().catch(() => undefined))
    )
    return { did: executor.did, resolved, closed: Deferred.await(closed) }
  }).pipe(Effect.withSpan("writ.mcpGate.start"))
