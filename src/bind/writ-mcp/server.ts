// The server side of the MCP binding (docs/adoption.md 2a; docs/bindings.md, Server): a tool runs
// only as the operation of a call the executor accepts (spec section 7 step 11), and its result
// carries the tally, with `structuredContent` the body the tally's `out` commits to.
//
// Before the executor sees a call, the binding refuses, as `malformed`, a call whose `op` names
// another tool or whose `args` differ (canonically, spec 1.4) from the `arguments` the tool would
// run with, so what was signed and what runs are the same bytes (adoption.md 2a). With `require`, a
// tool call carrying no call is refused `missing_call`; without it, it runs unenforced and its
// result carries no tally. Refusals with no tally carry their code in `_meta["io.writ/error"]`.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Option, type Scope } from "effect"
import { encodeCanonical } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import type { ExecutorService } from "../../writ/executor/executor.js"
import type { ApplicationService, Operation, Outcome } from "../../writ/executor/services.js"
import { writError, type WritError } from "../../writ/reason.js"
import { callIdentity } from "../../writ/sign.js"
import { toolOfOp } from "./client.js"
import { CALL_META, EXTENSION, present, presentRefusal, toolOp } from "./present.js"
import { missingCall, type MissingCall, UNKNOWN_TOOL } from "./reason.js"

/** The MCP request a tool runs in: its abort signal, and the way to ask the client something
 * (elicitation, sampling) or report progress mid-call. */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>

export interface ToolContext {
  /** The executor's operation (section 7 step 11); None when the call ran unenforced. */
  readonly operation: Option.Option<Operation>
  /** The MCP request, while it is open (None after a restart's recovery, section 9). */
  readonly request: Option.Option<RequestExtra>
}

export interface McpTool {
  /** The tool definition as listed (`name`, `description`, `inputSchema`, ...). */
  readonly definition: JsonObject & { readonly name: string }
  /** The tool itself. `res` must be a JSON object: it becomes `structuredContent`. */
  readonly run: (args: JsonObject, context: ToolContext) => Effect.Effect<Outcome>
}

/** A set of tools, and the Application (section 7 step 11) that runs them as operations
 * `mcp/tools/<name>`. The open MCP requests are looked up by call identity, so a tool reaches the
 * request whose call it performs. */
export interface ToolSet {
  readonly tools: ReadonlyMap<string, McpTool>
  readonly application: ApplicationService
  readonly requests: Map<string, RequestExtra>
}


export const toolSet = (tools: ReadonlyArray<McpTool>): ToolSet => {
  const byName = new Map(tools.map((t) => [t.definition.name, t] as const))
  const requests = new Map<string, RequestExtra>()
  const application: ApplicationService = {
    perform: (operation) => {
      const name = toolOfOp(operation.op)
      const tool = name === undefined ? undefined : byName.get(name)
      if (operation.kind !== "forward" || tool === undefined) return Effect.succeed({ st: "failed", code: UNKNOWN_TOOL })
      return tool.run(operation.args, { operation: Option.some(operation), request: Option.fromNullable(requests.get(operation.callId)) })
    }
  }
  return { tools: byName, application, requests }
}

/** What the server advertises (adoption.md 2a): the extension with the key its tallies are signed
 * with, under `capabilities.extensions` of the initialize result. */
export const capabilities = (did: string) => ({
  tools: { listChanged: true },
  extensions: { [EXTENSION]: { v: 1, did } }
})

const canonicalOf = (v: unknown, path: string): Effect.Effect<string, WritError> =>
  Effect.try({ try: () => encodeCanonical(v as Json, "utf16"), catch: () => writError("malformed", path, "not a JSON value") })

/** Adoption.md 2a: the signed call and the tool call are the same operation on the same bytes. */
export const matchCall = (tool: string, args: JsonObject, call: unknown): Effect.Effect<JsonObject, WritError> =>
  Effect.gen(function*() {
    if (!isJsonObject(call)) return yield* Effect.fail(writError("malformed", CALL_META, "the call is not a JSON object"))
    if (call.op !== toolOp(tool)) return yield* Effect.fail(writError("malformed", "op", `the call's op is not ${toolOp(tool)}`))
    if ((yield* canonicalOf(call.args, "args")) !== (yield* canonicalOf(args, "arguments"))) {
      return yield* Effect.fail(writError("malformed", "args", "the arguments differ from the signed args"))
    }
    return call
  })

const unenforcedResult = (outcome: Outcome): JsonObject => ({
  content: [{ type: "text", text: outcome.res === undefined ? `failed: ${outcome.code ?? "?"}` : encodeCanonical(outcome.res, "utf16") }],
  ...(isJsonObject(outcome.res) ? { structuredContent: outcome.res } : {}),
  isError: outcome.st !== "ok"
})

export interface ServeToolsOptions {
  readonly executor: ExecutorService
  readonly tools: ToolSet
  /** Refuse a tool call that carries no Writ call (`missing_call`). */
  readonly require: boolean
}

/** One `tools/call`: the binding's checks, the executor, and the result rendered by `present`. */
export const callTool = (
  o: ServeToolsOptions,
  request: { readonly name: string; readonly arguments?: Record<string, unknown>; readonly _meta?: Record<string, unknown> },
  extra: RequestExtra | undefined
): Effect.Effect<JsonObject> =>
  Effect.gen(function*() {
    const tool = o.tools.tools.get(request.name)
    const args = (request.arguments ?? {}) as JsonObject
    if (tool === undefined) return presentRefusal(UNKNOWN_TOOL)
    const given = request._meta?.[CALL_META]
    if (given === undefined) {
      if (o.require) return yield* Effect.fail(missingCall("this server runs tools only under a Writ call"))
      const outcome = yield* tool.run(args, { operation: Option.none(), request: Option.fromNullable(extra) })
      return unenforcedResult(outcome)
    }
    const call = yield* matchCall(request.name, args, given)
    const id = callIdentity(call)
    if (extra !== undefined) o.tools.requests.set(id, extra)
    const answer = yield* o.executor.call(call).pipe(Effect.ensuring(Effect.sync(() => o.tools.requests.delete(id))))
    if (answer._tag === "error") return presentRefusal(answer.reason)
    return present(answer.tally, Option.getOrUndefined(answer.res))
  }).pipe(
    Effect.catchTags({
      WritError: (e) => Effect.succeed(presentRefusal(e.reason)),
      MissingCall: (e: MissingCall) => Effect.succeed(presentRefusal(e.reason))
    }),
    Effect.withSpan("writ.mcp.callTool", { attributes: { tool: request.name } })
  )

/** Registers `tools/list` and `tools/call` on an SDK `Server`; the handlers run on fibers owned by
 * the current scope (closing it interrupts calls in flight; the executor keeps accepted work). */
export const serveTools = (server: Server, o: ServeToolsOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntimePromise<never>()
    const definitions = [...o.tools.tools.values()].map((t) => t.definition)
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: definitions as never }))
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      // MCP: a call to a tool the server does not list is a JSON-RPC error (invalid params).
      if (!o.tools.tools.has(request.params.name)) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`)
      return run(callTool(o, request.params, extra)) as never
    })
  })
