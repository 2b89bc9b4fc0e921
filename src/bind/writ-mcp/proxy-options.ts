// What `runProxy` is given (./proxy.ts; docs/mcp-gate.md, Bounds): the two transports, the grant,
// the policy (pins, closed, allow) and the bounds, each with its default.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { Duration } from "effect"
import type { Json } from "../../kernel/json.js"
import type { PinFile } from "./policy.js"

export interface ProxyOptions {
  /** Toward the MCP client (the proxy is its server). */
  readonly client: Transport
  /** Toward the real server (the proxy is its client); started by the proxy. */
  readonly server: Transport
  /** A new transport to the same server over Streamable HTTP (not started), to reconnect it when
   * it drops (./proxy-upstream.ts). Absent, a server that goes away ends the proxy. */
  readonly reconnect?: () => Transport
  /** The grant: a chain from its root to the Signer's key (the agent). */
  readonly grant: ReadonlyArray<Json>
  /** Only tools whose definition hashes to their pin are listed or called. */
  readonly pins?: PinFile
  /** Refuse arguments no application bound of the grant names. */
  readonly closed?: boolean
  /** After the client closes, how long its open requests may take. Default 60 seconds. */
  readonly shutdownGrace?: Duration.DurationInput
  /** How long the proxy's own requests (re-listing for pins, initialize on a reconnect) may take.
   * Default 30 seconds. */
  readonly requestTimeout?: Duration.DurationInput
  /** Requests other than `tools/call` relayed unchecked (methods.ts `ruleOf`). Default none. */
  readonly allow?: ReadonlyArray<string>
  /** The largest verified result passed on (JSON characters). Default MAX_RESULT_BYTES. */
  readonly maxResultBytes?: number
  /** The most server notifications waiting to be relayed. Default MAX_QUEUED_NOTIFICATIONS. */
  readonly maxQueuedNotifications?: number
  /** How often open tool calls get progress while a form is open. Default 15 seconds. */
  readonly keepAlive?: Duration.DurationInput
}

/** The default bound of a result passed on: under the 10 MiB line a stdio client reads. */
export const MAX_RESULT_BYTES = 8 * 1024 * 1024
