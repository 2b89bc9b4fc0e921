// The `--http URL` option that `writ mcp-gate` and `writ mcp-proxy` share: the real MCP server over
// Streamable HTTP instead of a command after `--` (docs/mcp-gate.md, "A server over HTTP").
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect, Option } from "effect"
import { cliError, type CliError } from "./writ-io.js"

/** A new transport to the `--http` server per call, or `undefined` without `--http`; giving both
 * `--http` and a command, or a string that is not a URL, is a usage error. */
export const httpUpstream = (
  http: Option.Option<string>,
  command: string | undefined
): Effect.Effect<(() => Transport) | undefined, CliError> => {
  if (Option.isNone(http)) return Effect.succeed(undefined)
  if (command !== undefined) return Effect.fail(cliError("mandate/usage", "give --http or a command after --, not both"))
  let url: URL
  try {
    url = new URL(http.value)
  } catch {
    return Effect.fail(cliError("mandate/usage", "not a URL", "--http"))
  }
  return Effect.succeed(() => new StreamableHTTPClientTransport(url))
}
