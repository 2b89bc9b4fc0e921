// An A2A agent endpoint in front of an executor, over HTTP (@effect/platform's HttpRouter on the
// listener of ../writ-http/listen.ts, with its section 12 limits):
//
//   GET  /.well-known/agent-card.json  the Agent Card: a 1.0 card (`supportedInterfaces`, JSON-RPC
//        at 1.0 and at 0.3) that carries a 0.3 card's `url`, `protocolVersion` and
//        `preferredTransport` too, so a 0.3 client finds the same endpoint; its
//        `capabilities.extensions` holds the Writ entry (adoption.md 2b), and
//        `pushNotifications` is true exactly when the A2aPush service is in context (./push.ts);
//        signed (A2A 1.0 section 8.4, ./card-signature.ts) by the executor's key when the Signer
//        in context is that key.
//   POST <path>  JSON-RPC 2.0 (./rpc.ts), the body bounded before it is read (`too_large`); over
//        mTLS the peer is the client certificate's (section 7.6, ../writ-http/peer.ts), and a
//        certificate the TLS layer did not verify is 403 `mandate/unverified_client_certificate`.
//   *    <path>/...  the HTTP+JSON binding (./rest.ts: /message:send, /tasks/{id}, ...), with the
//        same body bound and peer; the card names <path> as its HTTP+JSON interface URL too.
//   A stream (SubscribeToTask on either binding) is server-sent events, one per change, ending
//   with the task's terminal state or the client's going away; each holds its connection, so the
//   listener's per-peer cap bounds a peer's subscribers.
//   Anything else: 404 (405 on a known path).
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option, type Scope, Stream } from "effect"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import type { Json, JsonObject } from "../../kernel/json.js"
import { Executor } from "../../writ/executor/executor.js"
import { readBody } from "../writ-http/body.js"
import { type ListenerLimits, nodeServer, type TlsOptions } from "../writ-http/listen.js"
import { peerOfRequest, type TransportBindings } from "../writ-http/peer.js"
import { HTTP_CODES } from "../writ-http/server.js"
import { didKeyFromPublicKey } from "../../kernel/didkey.js"
import { Signer } from "../../kernel/services.js"
import { signCard } from "./card-signature.js"
import { a2aError } from "./errors.js"
import { A2aPush } from "./push.js"
import { A2aTasks, handleRpcRequest, rpcError } from "./rpc.js"
import { handleRest, restError } from "./rest.js"
import { A2A_JSON_MEDIA_TYPE, A2A_LEGACY_VERSION, A2A_VERSION, AGENT_CARD_PATH, JSONRPC_BINDING, REST_BINDING } from "./schema.js"
import { cardExtension, MAX_MESSAGE_BYTES } from "./server.js"

/** Section 8.6.1: the card SHOULD say how long it may be cached; it changes only on restart. */
export const CARD_CACHE_CONTROL = "max-age=300"

/** The version a 0.3 card names (0.3 cards carry a full semantic version). */
export const LEGACY_CARD_VERSION = "0.3.0"

export interface AgentCardOptions {
  /** The JSON-RPC endpoint's URL. */
  readonly url: string
  /** Whether push notifications are served (a webhook allow list was given; ./push.ts). */
  readonly pushNotifications?: boolean
  readonly name?: string
  readonly description?: string
  /** The bound names the executor understands (the extension's `bounds`). */
  readonly bounds?: ReadonlyArray<string>
  readonly maxChain?: number
}

/** The Agent Card this endpoint publishes (A2A 1.0 `AgentCard`, readable by a 0.3 client too). */
export const agentCard = (did: string, o: AgentCardOptions): JsonObject => ({
  name: o.name ?? "Writ executor",
  description: o.description ?? "Runs Writ calls (a data part of application/writ-call+json) and answers each with a signed tally",
  version: "0.1.0",
  // In order of preference (A2A 1.0: the first is the agent's preferred): JSON-RPC, then
  // HTTP+JSON at the same URL (its paths are under it), then JSON-RPC for 0.3 clients.
  supportedInterfaces: [
    { url: o.url, protocolBinding: JSONRPC_BINDING, protocolVersion: A2A_VERSION },
    { url: o.url, protocolBinding: REST_BINDING, protocolVersion: A2A_VERSION },
    { url: o.url, protocolBinding: JSONRPC_BINDING, protocolVersion: A2A_LEGACY_VERSION }
  ],
  // The extension entry is JSON by its Schema (CardExtension); the cast states what the type cannot.
  capabilities: { streaming: true, pushNotifications: o.pushNotifications === true, extensions: [cardExtension(did, o.bounds ?? [], o.maxChain ?? 8) as unknown as JsonObject] },
  defaultInputModes: ["application/writ-call+json", "application/json"],
  defaultOutputModes: ["application/writ-tally+json", "application/json"],
  skills: [{
    id: "writ-call",
    name: "Writ call",
    description: "Performs a signed Writ call under its delegation chain and returns the executor's signed tally",
    tags: ["writ"]
  }],
  // The 0.3 card's members, for 0.3 clients (a 1.0 client reads supportedInterfaces first).
  url: o.url,
  protocolVersion: LEGACY_CARD_VERSION,
  preferredTransport: JSONRPC_BINDING
})

export interface A2aHttpOptions extends Omit<AgentCardOptions, "url"> {
  /** Transport identities -> keys (section 7.6), for peers named by TLS client certificates. */
  readonly bindings?: TransportBindings
  /** The JSON-RPC endpoint's path. Default "/a2a". */
  readonly path?: string
  /** The endpoint URL the card publishes (default: the one it listens on). */
  readonly publicUrl?: string
}

const json = (status: number, body: Json, headers: Record<string, string> = {}, contentType = "application/json") =>
  HttpServerResponse.uint8Array(utf8(encodeCanonical(body, "utf16")), { status, contentType, headers })

/** Server-sent events, one `data:` line of canonical JSON per event, sent as each comes (the
 * stream ends with the task's terminal state, or when the client goes away). */
const sse = (events: Stream.Stream<JsonObject>) =>
  HttpServerResponse.stream(
    events.pipe(Stream.map((e) => `data: ${encodeCanonical(e, "utf16")}\n\n`), Stream.encodeText),
    { status: 200, contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
  )

/** The endpoint as an HttpApp over the Executor and the task log in context. */
export const a2aHttpApp = (url: string, options: A2aHttpOptions = {}): HttpApp.Default<never, Executor | A2aTasks> => {
  const path = options.path ?? "/a2a"
  const card = Effect.gen(function*() {
    const executor = yield* Executor
    // The card says push notifications exactly when the push service is there to send them.
    const push = yield* Effect.serviceOption(A2aPush)
    const plain = agentCard(executor.did, { ...options, url, pushNotifications: Option.isSome(push) })
    // Section 8.4: signed by the key the card's Writ extension names, the executor's, so a client
    // can tell the endpoints it lists are that executor's; never by any other key.
    const signer = yield* Effect.serviceOption(Signer)
    const signed = Option.isSome(signer) && didKeyFromPublicKey(signer.value.publicKey) === executor.did
      ? yield* Effect.provideService(signCard(plain), Signer, signer.value)
      : plain
    return json(200, signed, { "cache-control": CARD_CACHE_CONTROL })
  })
  const endpoint = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    // Section 7.6: the peer from the TLS connection only; a certificate the TLS layer did not
    // verify is refused, never read as "no peer".
    const connection = peerOfRequest(req, options.bindings ?? {})
    if (connection._tag === "unverified") return json(403, { error: HTTP_CODES.unverifiedCertificate }, { connection: "close" })
    const body = yield* readBody(req, MAX_MESSAGE_BYTES)
    if (body._tag !== "ok") {
      const e = body._tag === "too_large"
        ? a2aError("too_large", "request", `over ${MAX_MESSAGE_BYTES} bytes`)
        : a2aError("mandate/a2a_bad_request", "request", body.message)
      return json(200, { jsonrpc: "2.0", id: null, error: rpcError(e) }, { connection: "close" })
    }
    const answer = yield* handleRpcRequest(body.bytes, connection.peer)
    if (answer.events !== undefined) return sse(answer.events)
    // A stream (server-sent events) of the one final answer; an error is still one JSON answer.
    if (answer.stream && answer.response.error === undefined) {
      return HttpServerResponse.text(`data: ${encodeCanonical(answer.response, "utf16")}\n\n`, {
        status: 200,
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache" }
      })
    }
    return json(200, answer.response)
  })
  // The HTTP+JSON paths are under the interface URL, `path` (its trailing slash not doubled).
  const restBase = path.replace(/\/$/, "")
  const rest = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    const connection = peerOfRequest(req, options.bindings ?? {})
    if (connection._tag === "unverified") return json(403, { error: HTTP_CODES.unverifiedCertificate }, { connection: "close" })
    const [pathname, ...query] = request.url.split("?")
    const sub = pathname.slice(restBase.length)
    let body: Uint8Array | undefined
    if (request.method !== "GET" && request.method !== "HEAD") {
      const read = yield* readBody(req, MAX_MESSAGE_BYTES)
      if (read._tag !== "ok") {
        const e = restError(read._tag === "too_large"
          ? a2aError("too_large", "request", `over ${MAX_MESSAGE_BYTES} bytes`)
          : a2aError("mandate/a2a_bad_request", "request", read.message))
        return json(e.status, e.body, { connection: "close" }, A2A_JSON_MEDIA_TYPE)
      }
      body = read.bytes
    }
    const answer = yield* handleRest({ method: request.method, path: sub, headers: request.headers, body, query: query.join("?") }, connection.peer)
    if (answer.events !== undefined) return sse(answer.events)
    if (answer.status === 204) return HttpServerResponse.empty({ status: 204 })
    if (answer.stream && answer.status === 200) {
      return HttpServerResponse.text(`data: ${encodeCanonical(answer.body, "utf16")}\n\n`, {
        status: 200,
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache" }
      })
    }
    return json(answer.status, answer.body, answer.allow === undefined ? {} : { allow: answer.allow }, A2A_JSON_MEDIA_TYPE)
  })
  const routes = HttpRouter.empty.pipe(
    HttpRouter.get(AGENT_CARD_PATH, card),
    HttpRouter.post(path as HttpRouter.PathInput, endpoint),
    HttpRouter.all(`${restBase}/*` as HttpRouter.PathInput, rest),
    Effect.catchTag("RouteNotFound", () =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const pathname = request.url.split("?")[0]
        if (pathname === path) return json(405, { error: HTTP_CODES.methodNotAllowed }, { allow: "POST" })
        if (pathname === AGENT_CARD_PATH) return json(405, { error: HTTP_CODES.methodNotAllowed }, { allow: "GET" })
        return json(404, { error: HTTP_CODES.notFound })
      }))
  )
  return HttpRouter.withRouterConfig(routes, { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false })
}

export interface A2aListenOptions extends A2aHttpOptions {
  readonly port: number
  readonly host?: string
  readonly limits?: ListenerLimits
  /** HTTPS, and with `clientCa` mTLS: the peer is the client certificate's (section 7.6). */
  readonly tls?: TlsOptions
}

/** Serves the endpoint within the scope; returns the bound port, the base URL and the endpoint URL. */
export const listenA2a = (
  options: A2aListenOptions
): Effect.Effect<{ readonly port: number; readonly base: string; readonly url: string }, unknown, Scope.Scope | Executor | A2aTasks> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const server = yield* NodeHttpServer.make(() =>
      nodeServer({
        port: options.port,
        ...(options.limits === undefined ? {} : { limits: options.limits }),
        ...(options.tls === undefined ? {} : { tls: options.tls })
      }), { port: options.port, host })
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const base = `${options.tls === undefined ? "http" : "https"}://${host.includes(":") ? `[${host}]` : host}:${port}`
    const url = options.publicUrl ?? `${base}${options.path ?? "/a2a"}`
    yield* server.serve(a2aHttpApp(url, options))
    return { port, base, url }
  })
