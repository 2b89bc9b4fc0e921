// The composition root of an MCP server under Writ (`mandate writ mcp-echo`; docs/bindings.md):
// one executor (src/writ/executor) whose Application is the binding's tool set, on the memory
// stores or the embedded SQLite file, served by the SDK's `Server` over a transport. The executor
// key, the roots and the store are chosen here, never in the binding (DESIGN.md's arrows).
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Context, Deferred, Effect, Layer, type Scope } from "effect"
import { Signer } from "../kernel/services.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../kernel/verification-cache.js"
import * as MemoryWrit from "../store/memory/writ-stores.js"
import * as SqliteWrit from "../store/sqlite/writ-stores.js"
import { Executor, type ExecutorService, layer as executorLayer } from "../writ/executor/executor.js"
import { Application, Forwarder, PeerBindings, RootPolicy } from "../writ/executor/services.js"
import { capabilities, type McpTool, serveTools, type ToolSet } from "../bind/writ-mcp/server.js"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import type { StoreError, WritStores } from "../writ/executor/stores.js"
import { ServeError } from "./inputs.js"

export interface McpExecutorOptions {
  /** The executor's key seed (the key its tallies are signed with, advertised to clients). */
  readonly seed: Uint8Array
  /** Root keys it acts under (spec section 7.1). */
  readonly roots: ReadonlyArray<string>
  readonly tools: ToolSet
  /** The SQLite file of every store; memory stores when absent (counts last as long as the process). */
  readonly storeFile?: string
}

/**
 * An executor whose operations are the tools, in the current scope. On SQLite, pending records
 * left by a crash are resolved (section 9) before the first call. MCP has no transport identity
 * to bind (section 7.6), so no peer speaks for any key, and revokes are not forwarded.
 */
export const mcpExecutor = (o: McpExecutorOptions): Effect.Effect<ExecutorService, ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const services = Layer.mergeAll(
      Signer.fromSeed(o.seed),
      Layer.succeed(Application, o.tools.application),
      RootPolicy.list(o.roots),
      PeerBindings.none,
      Forwarder.none,
      VerificationCache.layer({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })
    )
    const unavailable = (e: { readonly message: string }) =>
      new ServeError({ code: "mandate/store_unavailable", ...(o.storeFile === undefined ? {} : { path: o.storeFile }), message: e.message })
    const stores: Layer.Layer<WritStores | Reservations | Atomic, StoreError> = o.storeFile === undefined
      ? MemoryWrit.layer
      : SqliteWrit.layer(o.storeFile, { synchronous: "full" })
    const context = yield* Layer.build(executorLayer.pipe(Layer.provideMerge(Layer.merge(services, stores)))).pipe(
      Effect.mapError(unavailable)
    )
    const executor = Context.get(context, Executor)
    if (o.storeFile !== undefined) yield* Effect.mapError(executor.recover, unavailable)
    return executor
  })

export interface ServeMcpOptions extends McpExecutorOptions {
  /** Toward the client (stdio for `mcp-echo`). */
  readonly transport: Transport
  /** Refuse tool calls without a Writ call (`missing_call`). */
  readonly require: boolean
  readonly name?: string
}

/** Serves the tools under Writ on `transport` until the client closes it. */
export const serveMcp = (o: ServeMcpOptions): Effect.Effect<{ readonly did: string }, ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const executor = yield* mcpExecutor(o)
    const server = new Server({ name: o.name ?? "mandate-writ-mcp", version: "0.1.0" }, { capabilities: capabilities(executor.did) })
    yield* serveTools(server, { executor, tools: o.tools, require: o.require })
    const closed = yield* Deferred.make<void>()
    server.onclose = () => Deferred.unsafeDone(closed, Effect.void)
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => server.connect(o.transport), catch: (e) => new ServeError({ code: "mandate/transport", message: String(e) }) }),
      () => Effect.promise(() => server.close().catch(() => undefined))
    )
    yield* Deferred.await(closed)
    return { did: executor.did }
  })

/** `echo`: returns its `text` as `{"text": ...}`, and runs only under a call the executor accepted
 * (the binding's `require`). The README's and the tests' minimal tool. */
export const echoTool: McpTool = {
  definition: {
    name: "echo",
    description: "Returns the text it is given. Runs only under a Writ call.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
  },
  run: (args) =>
    Effect.succeed(typeof args.text === "string"
      ? { st: "ok" as const, res: { text: args.text } }
      : { st: "failed" as const, code: "mandate/bad_arguments" })
}
