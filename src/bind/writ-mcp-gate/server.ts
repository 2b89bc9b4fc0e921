// `writ mcp-gate` toward the client (docs/mcp-gate.md): an MCP server that speaks the binding's
// server side (docs/bindings.md, Server; adoption.md 2a) for tools that are not its own. It lists
// the plain server's tools (only the pinned definitions, with pins), and runs a `tools/call`, a
// `resources/read` or a `prompts/get` only as the operation of a Writ call its executor accepts
// (../writ-mcp/bound.ts maps each to its op and args; ./upstream.ts performs it), so the grant,
// `count`/`total`, exactly-once and the signed tally are Mandate's, not the server's.
//
// Before the executor sees a call, in this order, each refused unsigned with its code (a tool's in
// `_meta["io.writ/error"]`, a resource's or prompt's as a JSON-RPC error with `data.reason`;
// nothing counted, nothing sent): no call (`missing_call`); a call that names another operation or
// other arguments (`malformed`, adoption.md 2a); a resource or prompt the leaf's `act` does not name
// (`method_refused`, as before these methods were bound); the server gone and not restartable
// (`unreachable_server`; ./restart.ts); a tool with no pin or a changed definition
// (`unpinned_tool`, `tool_changed`); with `closed`, an argument the leaf has no application bound
// for (`unbound_argument`). Then the executor: its refusals (`out_of_bounds`, `count_exhausted`,
// ...) are signed tallies.
//
// Every other request follows ../writ-mcp/methods.ts: the listings relayed, others open, allowed
// by `--allow` (relayed to the server unchecked), or refused `method_refused`. The server's own
// requests (sampling, elicitation, roots) go to the client, and notifications pass both ways. While such a request is open (a person
// may be filling in a form), every open tool call whose client gave a progress token gets a
// progress notification each `keepAlive`, so a client that restarts its time limit on progress
// (the SDK's `resetTimeoutOnProgress`; MCP basic/utilities/progress) does not give up on a call a
// person is still answering; the gate's own limit toward the server is paused meanwhile.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema, CompleteRequestSchema, CompleteResultSchema,
  EmptyResultSchema, GetPromptRequestSchema, GetPromptResultSchema, ListPromptsRequestSchema,
  ListPromptsResultSchema, ListResourcesRequestSchema, ListResourcesResultSchema, ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema, ListToolsRequestSchema, McpError,
  ReadResourceRequestSchema, ReadResourceResultSchema, ResultSchema, SetLevelRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Duration, Effect, FiberSet, Option, Schedule, type Scope } from "effect"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import type { ExecutorService } from "../../writ/executor/executor.js"
import { callIdentity } from "../../writ/sign.js"
import { type BoundRequest, boundRequest, checkNamed, matchBound, presentBound, receivedLeafBounds, refusalData } from "../writ-mcp/bound.js"
import { checkMethod, offeredCapabilities, ruleOf } from "../writ-mcp/methods.js"
import { checkClosedReceived, checkPinned, pinnedOnly, pinOf, type PinFile } from "../writ-mcp/policy.js"
import { CALL_META, EXTENSION, present, presentRefusal } from "../writ-mcp/present.js"
import { missingCall, unreachableServer, type UnreachableServer } from "../writ-mcp/reason.js"
import { listAllTools, REFUSED } from "../writ-mcp/rpc.js"
import { type GateSession, type GateSessions, gateSessions } from "./sessions.js"
import type { Liveness, Requests } from "./upstream.js"

/** The plain server behind the gate: the SDK Client connected to it, and whether it is still there. */
export interface Upstream {
  readonly client: Client
  /** Succeeds when the server is there, restarting it first if it exited and can be restarted
   * (restart.ts; true then); else `unreachable_server`. */
  readonly ensure: Effect.Effect<boolean, UnreachableServer>
}

export interface GateServeOptions {
  readonly executor: ExecutorService
  readonly upstream: Upstream
  readonly requests: Requests
  readonly pins?: PinFile
  readonly closed: boolean
  readonly allow: ReadonlyArray<string>
  /** The capabilities the server was made with (`gateCapabilities`). */
  readonly capabilities: JsonObject
  /** Shared with the Application (upstream.ts): relayed requests pause its time limit. */
  readonly live: Liveness
  /** How often open calls get progress while a relayed request is open (default 15 s). */
  readonly keepAlive?: Duration.DurationInput
  /** How long a relayed request may wait for the client (default 30 minutes: a person answers). */
  readonly relayTimeout?: Duration.DurationInput
  /** The sessions over the one upstream (./sessions.ts), shared by every session's server; absent,
   * a router of this one session's own. */
  readonly sessions?: GateSessions
}

export const KEEP_ALIVE = Duration.seconds(15)
export const RELAY_TIMEOUT = Duration.minutes(30)

type Extra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1]

/** The requests relayed unchecked: the listings always (../writ-mcp/methods.ts), the others when
 * allowed; each with the capability it needs. */
const RELAYED = [
  { capability: "resources", request: ListResourcesRequestSchema, result: ListResourcesResultSchema },
  { capability: "resources", request: ListResourceTemplatesRequestSchema, result: ListResourceTemplatesResultSchema },
  { capability: "prompts", request: ListPromptsRequestSchema, result: ListPromptsResultSchema },
  { capability: "completions", request: CompleteRequestSchema, result: CompleteResultSchema },
  { capability: "logging", request: SetLevelRequestSchema, result: EmptyResultSchema }
] as const

const relayed = (method: string, allow: ReadonlyArray<string>): boolean => {
  const rule = ruleOf(method, allow)
  return rule === "allowed" || rule === "listing"
}

const methodOf = (schema: { readonly shape: { readonly method: { readonly value: string } } }): string => schema.shape.method.value

/** What the gate advertises: tools (its own listing), the extension with the executor's key, and
 * each family of the server's capabilities that a bound or allowed method needs (the gate holds
 * no grant: every bound method is offered, and each call is checked). */
export const gateCapabilities = (did: string, upstream: unknown, allow: ReadonlyArray<string>): JsonObject => {
  const theirs = isJsonObject(upstream) ? upstream : {}
  const offered = offeredCapabilities(theirs, allow) as JsonObject
  const families = Object.fromEntries(["resources", "prompts", "completions", "logging"].flatMap((f) => offered[f] === undefined ? [] : [[f, offered[f]]]))
  return { tools: { listChanged: true }, ...families, extensions: { [EXTENSION]: { v: 1, did } } }
}

const refused = (reason: string, message: string) => new McpError(REFUSED, `${reason}: ${message}`, { reason })

/** Registers the gate's handlers on an SDK `Server` whose capabilities are `gateCapabilities`. */
export const serveGate = (server: Server, o: GateServeOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntimePromise<never>()
    const up = o.upstream.client
    /** Each tool's pin as the server last listed it; stale after `list_changed`. */
    const listed = new Map<string, string>()
    let stale = true

    const listTools = Effect.gen(function*() {
      const tools = yield* listAllTools((method, params) =>
        Effect.tryPromise({ try: () => up.request({ method, params }, ListToolsResultSchemaLoose), catch: (e) => e }).pipe(
          Effect.map((r) => JSON.parse(JSON.stringify(r)) as JsonObject)
        ))
      listed.clear()
      for (const t of tools) if (typeof t.name === "string") listed.set(t.name, pinOf(t))
      stale = false
      return tools
    })

    server.setRequestHandler(ListToolsRequestSchema, () =>
      run(Effect.map(listTools, (tools) => ({ tools: (o.pins === undefined ? tools : pinnedOnly(o.pins, tools)) as never })).pipe(
        Effect.catchAll((e) => Effect.die(refused("unreachable_server", `listing the server's tools: ${String(e)}`)))
      )))

    /** Open tool calls whose client gave a progress token, and the progress each has been sent. */
    const waiting = new Map<Extra, { readonly token: string | number; sent: number }>()
    const keepAlive = Effect.suspend(() =>
      Effect.forEach([...waiting.entries()], ([extra, w]) =>
        Effect.promise(() =>
          extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: w.token, progress: ++w.sent, message: "waiting for an answer from the client (a form or sampling)" }
          }).catch(() => undefined)
        ), { discard: true }))

    /** A request of the server's relayed to the client: the server's time limit paused, and the
     * open calls kept alive, while it is open. */
    const relay = <A>(send: (timeout: number) => Promise<A>): Promise<A> =>
      run(Effect.scoped(Effect.gen(function*() {
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            o.live.relaying++
            o.live.activity++
          }),
          () => Effect.sync(() => {
            o.live.relaying--
            o.live.activity++
          })
        )
        yield* Effect.forkScoped(Effect.repeat(keepAlive, Schedule.spaced(o.keepAlive ?? KEEP_ALIVE)).pipe(Effect.delay(o.keepAlive ?? KEEP_ALIVE)))
        return yield* Effect.promise(() => send(Duration.toMillis(Duration.decode(o.relayTimeout ?? RELAY_TIMEOUT))))
      })))

    /** One bound request (../writ-mcp/bound.ts): the binding's checks in the header's order, then
     * the executor; a refusal before the executor fails with its code, unsigned. */
    const execute = (r: BoundRequest, given: unknown, extra: Extra) =>
      Effect.gen(function*() {
        if (given === undefined) return yield* Effect.fail(missingCall(`this gate serves ${r.method} only under a Writ call`))
        const call = yield* matchBound(r, given)
        yield* checkNamed(receivedLeafBounds(call), r)
        // A restarted server is listed again before a pin is compared with its tools.
        if (yield* o.upstream.ensure) stale = true
        if (r.method === "tools/call" && o.pins !== undefined) {
          if (stale) yield* Effect.mapError(listTools, (e) => unreachableServer(`listing the server's tools: ${String(e)}`))
          yield* checkPinned(o.pins, r.name, listed.get(r.name))
        }
        if (o.closed) yield* checkClosedReceived(call, r.args)
        const id = callIdentity(call)
        o.requests.set(id, extra)
        const token = extra._meta?.progressToken
        if (token !== undefined) waiting.set(extra, { token, sent: 0 })
        session.open++
        return yield* o.executor.call(call).pipe(Effect.ensuring(Effect.sync(() => {
          session.open--
          o.requests.delete(id)
          waiting.delete(extra)
        })))
      }).pipe(
        Effect.tapError((e) => Effect.logInfo(`${r.method} refused before the executor: ${e.reason}: ${e.message}`)),
        Effect.withSpan("writ.mcpGate.bound", { attributes: { method: r.method, name: r.name } })
      )

    const callTool = (params: JsonObject, extra: Extra) =>
      execute(boundRequest("tools/call", params)!, isJsonObject(params._meta) ? params._meta[CALL_META] : undefined, extra).pipe(
        Effect.map((answer) =>
          answer._tag === "error" ? presentRefusal(answer.reason) : present(answer.tally, Option.getOrUndefined(answer.res), "result")),
        Effect.catchAll((e) => Effect.succeed(presentRefusal(e.reason)))
      )

    /** A resource or prompt: its result when the tally is `ok`, else a JSON-RPC error carrying the
     * tally (bound.ts), or the unsigned code of a refusal before the executor. */
    const callOther = (method: string, params: JsonObject, extra: Extra): Promise<JsonObject> =>
      run(Effect.either(execute(boundRequest(method, params)!, isJsonObject(params._meta) ? params._meta[CALL_META] : undefined, extra).pipe(
        Effect.mapError((e) => refused(e.reason, e.message)),
        Effect.flatMap((answer) => {
          if (answer._tag === "error") return Effect.fail(refused(answer.reason, "refused unsigned by the executor"))
          const res = Option.getOrUndefined(answer.res)
          if (answer.tally.st === "ok" && isJsonObject(res)) return Effect.succeed(presentBound(answer.tally, res))
          const data = refusalData(answer.tally, res)
          return Effect.fail(new McpError(REFUSED, `${String(data.reason)}: the tally of this ${method} is ${String(answer.tally.st)}`, data))
        })
      ))).then((r) => {
        if (r._tag === "Left") throw r.left
        return r.right
      })

    server.setRequestHandler(CallToolRequestSchema, (request, extra) => run(callTool(request.params as JsonObject, extra)) as never)
    const offered = o.capabilities
    if (offered.resources !== undefined) {
      server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => callOther("resources/read", request.params as JsonObject, extra) as never)
    }
    if (offered.prompts !== undefined) {
      server.setRequestHandler(GetPromptRequestSchema, (request, extra) => callOther("prompts/get", request.params as JsonObject, extra) as never)
    }

    // The other requests: the listings and what is allowed relayed (when the server offers them),
    // the rest refused.
    for (const r of RELAYED) {
      if (offered[r.capability] === undefined || !relayed(methodOf(r.request), o.allow)) continue
      server.setRequestHandler(r.request as typeof ListResourcesRequestSchema, (request, extra) =>
        up.request(request as never, r.result as typeof ListResourcesResultSchema, { signal: extra.signal }) as never)
    }
    // A subscription is this session's (./sessions.ts): its updates reach it and no other.
    if (offered.resources !== undefined && relayed("resources/subscribe", o.allow)) {
      server.setRequestHandler(SubscribeRequestSchema, (request, extra) => sessions.subscribe(session, request.params.uri, extra.signal) as never)
    }
    if (offered.resources !== undefined && relayed("resources/unsubscribe", o.allow)) {
      server.setRequestHandler(UnsubscribeRequestSchema, (request, extra) => sessions.unsubscribe(session, request.params.uri, extra.signal) as never)
    }
    server.fallbackRequestHandler = async (request) => {
      const refusal = await run(Effect.either(checkMethod(request.method, o.allow)))
      throw refusal._tag === "Left"
        ? refused(refusal.left.reason, refusal.left.message)
        : refused("method_refused", `the server behind the gate does not offer ${request.method}`)
    }

    // The server's requests go to the client; notifications pass both ways. The server is
    // connected (and may speak) before the client has initialized, and MCP's lifecycle
    // (basic/lifecycle, "Initialization") has nothing but pings and logging reach a client before
    // its `notifications/initialized`: the server's requests wait for it (bounded by their own time
    // limits), and its notifications before it are dropped (a client lists the tools after
    // initializing anyway). Seen while testing third-party clients: roots/list and tools/list_changed from
    // server-everything reached the client before its initialize was answered. Which session a
    // server's request or notification reaches is ./sessions.ts's to say.
    const initialized = yield* Deferred.make<void>()
    let ready = false
    server.oninitialized = () => {
      ready = true
      Deferred.unsafeDone(initialized, Effect.void)
    }
    const session: GateSession = {
      server,
      ready: () => ready,
      whenReady: () => run(Deferred.await(initialized)),
      open: 0,
      subscriptions: new Set(),
      stale: () => {
        stale = true
      },
      relay
    }
    const sessions = o.sessions ?? gateSessions(up)
    const remove = sessions.add(session)
    yield* Effect.addFinalizer(() => Effect.promise(remove))
    server.fallbackNotificationHandler = async (n) => {
      await up.notification(n as never).catch(() => undefined)
    }
  })

/** The tool listing read as it was sent (a loose object): each definition kept whole, for its pin,
 * hashed exactly as `mcp-proxy --print-pins` hashes it. */
const ListToolsResultSchemaLoose = ResultSchema


