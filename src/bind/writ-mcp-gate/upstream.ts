// The executor's Application for `writ mcp-gate` (docs/mcp-gate.md): an operation the executor
// accepted (section 7 step 11) becomes one request to the plain MCP server behind the gate, through
// the SDK's Client: `mcp/tools/<name>` a `tools/call`, `mcp/resources/read` a `resources/read` of
// `args.uri`, `mcp/prompts/<name>` a `prompts/get` (../writ-mcp/bound.ts). Its result becomes the
// outcome (a resource's body is `{contents}`, a prompt's `{description?, messages}`):
//
//   ok       the tool answered without `isError`; `res` is its `{content, structuredContent?}`
//            (the body form "result" of ../writ-mcp/present.ts: content blocks keep their types);
//   failed   `mcp-gate/tool_error` (it answered with `isError`, `res` as above);
//            `mcp-gate/upstream_error` (a JSON-RPC error: it claims nothing was done);
//            `mcp-gate/result_too_large` (past `maxResultBytes`: it ran, the body is not kept);
//            `unknown_outcome` (section 7.3: the request was sent and no answer came, because the
//            server exited, the time ran out, or the client canceled; it may have run, and it is
//            never sent again).
//
// Progress the server reports is passed on under the client's own progress token, and each report
// restarts the time limit. So does a request the server sends the client while the tool runs (an
// elicitation form, sampling): the time limit is paused while one is open, since a person may be
// typing (server.ts keeps the client's call alive meanwhile with progress of its own).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect } from "effect"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import type { ApplicationService, Outcome } from "../../writ/executor/services.js"
import { toolOfOp } from "../writ-mcp/client.js"
import { resultBody } from "../writ-mcp/present.js"
import { UNKNOWN_TOOL } from "../writ-mcp/reason.js"
import { boundBody, promptOfOp, RESOURCE_READ_OP } from "../writ-mcp/bound.js"
import type { RequestExtra } from "../writ-mcp/server.js"
import { RESULT_TOO_LARGE, TOOL_ERROR, UPSTREAM_ERROR } from "./codes.js"

/** The default bound of a result body the gate keeps and returns (JSON characters): under the
 * 10 MiB line a stdio client reads, with room for the tally. */
export const MAX_RESULT_BYTES = 4 * 1024 * 1024
/** The default time a tool call may take without reporting progress. */
export const UPSTREAM_TIMEOUT = Duration.seconds(60)

export interface UpstreamOptions {
  readonly maxResultBytes?: number
  readonly timeout?: Duration.DurationInput
}

/** The open MCP request of each call the executor is running, by call identity. */
export type Requests = Map<string, RequestExtra>

/** What the time limit watches: a count bumped by every sign of life (progress, a relayed request
 * opening or closing), and how many relayed requests (forms, sampling) are open now. */
export interface Liveness {
  activity: number
  relaying: number
}

export const liveness = (): Liveness => ({ activity: 0, relaying: 0 })

const unknownOutcome: Outcome = { st: "failed", code: "unknown_outcome" }

/** What a failed `callTool` means: an answer (a JSON-RPC error) or no answer. */
const fromError = (e: unknown): Outcome => {
  if (e instanceof McpError && e.code !== ErrorCode.ConnectionClosed && e.code !== ErrorCode.RequestTimeout) {
    return { st: "failed", code: UPSTREAM_ERROR, res: { content: [{ type: "text", text: e.message }] } }
  }
  return unknownOutcome
}

/** Fails once `timeout` passes with no sign of life and no relayed request open. */
const idle = (live: Liveness, timeout: Duration.DurationInput): Effect.Effect<never, "idle"> =>
  Effect.gen(function*() {
    for (;;) {
      const seen = live.activity
      yield* Effect.sleep(timeout)
      if (live.activity === seen && live.relaying === 0) return yield* Effect.fail("idle" as const)
    }
  })

/** The SDK's own per-request limit, set past any idle limit: the watchdog above is the limit. */
const SDK_TIMEOUT_MS = 24 * 3600 * 1000

/** What one accepted operation sends the server, and the body its answer becomes. */
interface Sent {
  readonly what: string
  readonly send: (options: RequestOptions) => Promise<JsonObject>
  readonly body: (result: JsonObject) => JsonObject
}

/** The request an op stands for (../writ-mcp/bound.ts), or undefined for an op the gate does not bind. */
const requestOf = (client: Client, op: string, args: JsonObject): Sent | undefined => {
  const tool = toolOfOp(op)
  if (tool !== undefined) {
    return {
      what: `tool ${tool}`,
      send: (ro) => client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, ro) as Promise<JsonObject>,
      body: resultBody
    }
  }
  const prompt = promptOfOp(op)
  if (prompt !== undefined) {
    return {
      what: `prompt ${prompt}`,
      send: (ro) => client.getPrompt({ name: prompt, arguments: args as Record<string, string> }, ro) as Promise<JsonObject>,
      body: (r) => boundBody("prompts/get", r)
    }
  }
  if (op === RESOURCE_READ_OP && typeof args.uri === "string") {
    const uri = args.uri
    return {
      what: `resource ${uri}`,
      send: (ro) => client.readResource({ uri }, ro) as Promise<JsonObject>,
      body: (r) => boundBody("resources/read", r)
    }
  }
  return undefined
}

type RequestOptions = NonNullable<Parameters<Client["callTool"]>[2]>

export const upstreamApplication = (client: Client, requests: Requests, live: Liveness, o: UpstreamOptions = {}): ApplicationService => {
  const max = o.maxResultBytes ?? MAX_RESULT_BYTES
  const timeout = o.timeout ?? UPSTREAM_TIMEOUT
  return {
    perform: (op) => {
      const sent = op.kind === "forward" ? requestOf(client, op.op, op.args) : undefined
      if (sent === undefined) return Effect.succeed({ st: "failed", code: UNKNOWN_TOOL })
      const extra = requests.get(op.callId)
      const token = extra?._meta?.progressToken
      const onprogress = (p: { progress: number; total?: number; message?: string }) => {
        live.activity++
        if (extra !== undefined && token !== undefined) {
          void extra.sendNotification({ method: "notifications/progress", params: { ...p, progressToken: token } }).catch(() => undefined)
        }
      }
      return Effect.tryPromise({
        try: (signal) =>
          sent.send({
            timeout: SDK_TIMEOUT_MS,
            signal: extra === undefined ? signal : AbortSignal.any([signal, extra.signal]),
            onprogress
          }),
        catch: fromError
      }).pipe(
        // Past the idle limit the request is abandoned (its signal aborts it at the server).
        Effect.raceFirst(Effect.catchAll(idle(live, timeout), () => Effect.fail(unknownOutcome))),
        Effect.map((result): Outcome => {
          // Read as JSON data (no undefined members), then bounded before it is kept.
          const text = JSON.stringify(result)
          if (text.length > max) return { st: "failed", code: RESULT_TOO_LARGE }
          const parsed: unknown = JSON.parse(text)
          const body: JsonObject = sent.body(isJsonObject(parsed) ? parsed : {})
          return result.isError === true ? { st: "failed", code: TOOL_ERROR, res: body } : { st: "ok", res: body }
        }),
        Effect.catchAll((outcome) => Effect.succeed(outcome)),
        Effect.withSpan("writ.mcpGate.upstream", { attributes: { request: sent.what } })
      )
    }
  }
}
