// The executor's Application for `writ mcp-gate` (docs/mcp-gate.md): an operation
// `mcp/tools/<name>` the executor accepted (section 7 step 11) becomes one `tools/call` to the
// plain MCP server behind the gate, through the SDK's Client. Its result becomes the outcome:
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
// restarts the time limit, so a tool that waits for a person keeps its call open.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect } from "effect"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import type { ApplicationService, Outcome } from "../../writ/executor/services.js"
import { toolOfOp } from "../writ-mcp/client.js"
import { resultBody } from "../writ-mcp/present.js"
import { type RequestExtra, UNKNOWN_TOOL } from "../writ-mcp/server.js"
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

const unknownOutcome: Outcome = { st: "failed", code: "unknown_outcome" }

/** What a failed `callTool` means: an answer (a JSON-RPC error) or no answer. */
const fromError = (e: unknown): Outcome => {
  if (e instanceof McpError && e.code !== ErrorCode.ConnectionClosed && e.code !== ErrorCode.RequestTimeout) {
    return { st: "failed", code: UPSTREAM_ERROR, res: { content: [{ type: "text", text: e.message }] } }
  }
  return unknownOutcome
}

export const upstreamApplication = (client: Client, requests: Requests, o: UpstreamOptions = {}): ApplicationService => {
  const max = o.maxResultBytes ?? MAX_RESULT_BYTES
  const timeout = Duration.toMillis(Duration.decode(o.timeout ?? UPSTREAM_TIMEOUT))
  return {
    perform: (op) => {
      const name = toolOfOp(op.op)
      if (op.kind !== "forward" || name === undefined) return Effect.succeed({ st: "failed", code: UNKNOWN_TOOL })
      const extra = requests.get(op.callId)
      const token = extra?._meta?.progressToken
      const onprogress = extra === undefined || token === undefined ? undefined : (p: { progress: number; total?: number; message?: string }) =>
        void extra.sendNotification({ method: "notifications/progress", params: { ...p, progressToken: token } }).catch(() => undefined)
      return Effect.tryPromise({
        try: () =>
          client.callTool({ name, arguments: op.args as Record<string, unknown> }, undefined, {
            timeout,
            resetTimeoutOnProgress: true,
            ...(extra === undefined ? {} : { signal: extra.signal }),
            ...(onprogress === undefined ? {} : { onprogress })
          }),
        catch: fromError
      }).pipe(
        Effect.map((result): Outcome => {
          // Read as JSON data (no undefined members), then bounded before it is kept.
          const text = JSON.stringify(result)
          if (text.length > max) return { st: "failed", code: RESULT_TOO_LARGE }
          const parsed: unknown = JSON.parse(text)
          const body: JsonObject = resultBody(isJsonObject(parsed) ? parsed : {})
          return result.isError === true ? { st: "failed", code: TOOL_ERROR, res: body } : { st: "ok", res: body }
        }),
        Effect.catchAll((outcome) => Effect.succeed(outcome)),
        Effect.withSpan("writ.mcpGate.upstream", { attributes: { tool: name } })
      )
    }
  }
}
