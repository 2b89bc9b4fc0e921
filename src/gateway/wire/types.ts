// The contract between the gateway's provider wire modules (src/gateway/wire/, price/: pure, no
// I/O) and its server, budgets and ledger (src/gateway/*.ts). Both sides are written against these
// names; change them in one commit with both sides.
import type { Either } from "effect"

/** The routes the gateway speaks; the route, never the upstream's host, decides the provider. */
export type Route = "openai.chat" | "openai.responses" | "anthropic.messages"
export type Provider = "openai" | "anthropic"

/** Each route's path, the one the gateway serves and forwards to (never the client's string). */
export const ROUTE_PATH: Readonly<Record<Route, string>> = {
  "openai.chat": "/v1/chat/completions",
  "openai.responses": "/v1/responses",
  "anthropic.messages": "/v1/messages"
}

/** The route a request path names, if any (the server's routing and writFetch's signing agree by it). */
export const routeOfPath = (path: string): Route | undefined =>
  (Object.keys(ROUTE_PATH) as Array<Route>).find((r) => ROUTE_PATH[r] === path)

/** What the gateway must read from a request body before forwarding it. */
export interface RequestInfo {
  readonly route: Route
  readonly provider: Provider
  readonly model: string
  readonly stream: boolean
  /** max_tokens / max_completion_tokens / max_output_tokens as the request states it, if any. */
  readonly maxOutputTokens: number | undefined
  /** Input tokens estimated from the request's text (messages, system, tools, input). */
  readonly inputTokensEstimate: number
  /** The body to send upstream: the client's bytes unchanged unless the gateway had to add
   * `stream_options.include_usage` (OpenAI chat streams); unknown fields always kept. */
  readonly upstreamBody: Uint8Array
}

/** Token usage as the upstream reported it (or as estimated when it did not). */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  /** true when no usage arrived and the figures were estimated from what was relayed. */
  readonly estimated: boolean
}

/** A refusal of the request itself (before any budget): its reason code and HTTP status. */
export interface WireRefusal {
  readonly _tag: "WireRefusal"
  readonly code: "gateway/malformed_request" | "gateway/unsupported_request"
  readonly message: string
  readonly status: 400
}

export type ReadRequest = (route: Route, body: Uint8Array) => Either.Either<RequestInfo, WireRefusal>

/** An incremental reader of a streamed (SSE) answer: bytes in, the same bytes out to the client,
 * and what has been learnt so far. */
export interface StreamMeter {
  /** Feed a chunk as received from upstream; returns the bytes to relay (unchanged, except that a
   * usage-only chunk the gateway itself asked for is dropped when the client did not ask). */
  readonly push: (chunk: Uint8Array) => Uint8Array
  /** The usage chunk, when one has arrived. */
  readonly usage: () => Usage | undefined
  /** Output tokens estimated from the text relayed so far (for disconnects and missing usage). */
  readonly relayedOutputTokensEstimate: () => number
  /** The model the upstream says it answered with, when it says so. */
  readonly model: () => string | undefined
}

export type MakeStreamMeter = (info: RequestInfo) => StreamMeter

/** Usage read from a non-streamed answer body; undefined when it has none. */
export type ReadUsage = (route: Route, body: Uint8Array) => Usage | undefined

/** A price in micro-USD (integer) or the reason none is known. */
export interface NoPrice {
  readonly _tag: "NoPrice"
  readonly provider: Provider
  readonly model: string
}
export type PriceOf = (provider: Provider, model: string, usage: Usage, at: Date) => Either.Either<bigint, NoPrice>
