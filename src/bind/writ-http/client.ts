// The client side of the section 10 binding: POST one call or one revoke and read the answer.
// Used by `mandate writ send`, the demo, the benchmark, and the executor's Forwarder (section 9.1:
// a revoke is forwarded to the holders of writs the executor issued, and their acks relayed).
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Data, Duration, Effect, Either, Layer, Option } from "effect"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import { Forwarder, type ForwardedAnswer } from "../../writ/executor/services.js"
import { MEDIA_TYPE } from "./server.js"

export class WritHttpError extends Data.TaggedError("WritHttpError")<{
  readonly url: string
  readonly message: string
}> {}

/** Client TLS: the server's CA, and the client certificate for mTLS. */
export interface ClientTls {
  readonly ca?: string | Buffer
  readonly cert?: string | Buffer
  readonly key?: string | Buffer
  /** Expected server name when it differs from the URL's host. */
  readonly servername?: string
}

export interface PostOptions {
  readonly tls?: ClientTls
  /** Extra request headers (tests use them to show a header names no peer). */
  readonly headers?: Readonly<Record<string, string>>
  readonly contentType?: string
  /** Time for the whole exchange. Default 30 seconds. */
  readonly timeout?: Duration.DurationInput
}

/** What came back: the status, the exact bytes, and the JSON when the body parses strictly. */
export interface PostAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly bytes: Uint8Array
  readonly json: Option.Option<Json>
}

/**
 * @effect/platform's Node HttpClient whose agents carry `tls`: the CA that verifies the server,
 * and for mTLS the client certificate and key (Node's agent options). The agents live as long as
 * the Layer.
 */
export const clientLayer = (tls: ClientTls = {}): Layer.Layer<HttpClient.HttpClient> =>
  NodeHttpClient.layerWithoutAgent.pipe(Layer.provide(NodeHttpClient.makeAgentLayer({
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    ...(tls.servername === undefined ? {} : { servername: tls.servername })
  })))

/** Runs `request` on the HttpClient in context within `timeout`, and reads the whole answer. */
const exchange = (
  url: string,
  request: HttpClientRequest.HttpClientRequest,
  timeout: Duration.DurationInput | undefined
): Effect.Effect<PostAnswer, WritHttpError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(request)
    const bytes = new Uint8Array(yield* response.arrayBuffer)
    const parsed = parseJson(bytes, { integersOnly: true })
    return {
      status: response.status,
      headers: response.headers,
      bytes,
      json: Either.isRight(parsed) ? Option.some(parsed.right) : Option.none()
    }
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({
      duration: timeout ?? Duration.seconds(30),
      onTimeout: () => new WritHttpError({ url, message: "timed out" })
    }),
    Effect.catchTags({
      RequestError: (e) => Effect.fail(new WritHttpError({ url, message: messageOf(e) })),
      ResponseError: (e) => Effect.fail(new WritHttpError({ url, message: messageOf(e) }))
    })
  )

const messageOf = (e: { readonly cause?: unknown; readonly message: string }): string =>
  e.cause instanceof Error ? e.cause.message : e.message

/**
 * POSTs `body` (an object, sent as its canonical form, or bytes sent as they are) to `url` with
 * Content-Type application/writ+json, on the HttpClient in context.
 */
export const post = (
  url: string,
  body: JsonObject | Uint8Array | string,
  options: Omit<PostOptions, "tls"> = {}
): Effect.Effect<PostAnswer, WritHttpError, HttpClient.HttpClient> => {
  const payload = typeof body === "string"
    ? new Uint8Array(Buffer.from(body, "utf8"))
    : body instanceof Uint8Array
    ? body
    : utf8(encodeCanonical(body, "utf16"))
  return exchange(
    url,
    HttpClientRequest.post(url).pipe(
      HttpClientRequest.bodyUint8Array(payload, options.contentType ?? MEDIA_TYPE),
      HttpClientRequest.setHeaders(options.headers ?? {})
    ),
    options.timeout
  )
}

/** `post` on a client of its own, made for `options.tls` and closed after. */
export const postWrit = (
  url: string,
  body: JsonObject | Uint8Array | string,
  options: PostOptions = {}
): Effect.Effect<PostAnswer, WritHttpError> => Effect.provide(post(url, body, options), clientLayer(options.tls))

/** GETs the Appendix B document at `base` + /.well-known/writ. */
export const fetchWellKnown = (
  baseUrl: string,
  options: Pick<PostOptions, "tls" | "timeout"> = {}
): Effect.Effect<Json, WritHttpError> => {
  const url = new URL("/.well-known/writ", baseUrl).toString()
  return exchange(url, HttpClientRequest.get(url), options.timeout).pipe(
    Effect.flatMap((a) =>
      a.status === 200 && Option.isSome(a.json)
        ? Effect.succeed(a.json.value)
        : Effect.fail(new WritHttpError({ url, message: `status ${a.status}` }))
    ),
    Effect.provide(clientLayer(options.tls))
  )
}

/** Reads a revoke answer's `ack`, `res` and `fwd` (section 10), or None when it is not one. */
export const forwardedAnswerOf = (json: Json): Option.Option<ForwardedAnswer> => {
  if (!isJsonObject(json) || !isJsonObject(json.ack) || json.res === undefined) return Option.none()
  const fwd: Array<{ ack: JsonObject; res: Json }> = []
  if (json.fwd !== undefined) {
    if (!Array.isArray(json.fwd)) return Option.none()
    for (const f of json.fwd as ReadonlyArray<Json>) {
      if (isJsonObject(f) && isJsonObject(f.ack) && f.res !== undefined) fwd.push({ ack: f.ack, res: f.res })
    }
  }
  return Option.some({ ack: json.ack, res: json.res, fwd })
}

/**
 * A Forwarder (section 9.1) over this binding: the holder's did:key is looked up in `endpoints`
 * (a decision held outside the protocol, like root acceptance); an unknown holder, a failed
 * delivery or an answer that is not a recorded revoke forwards nothing. The executor checks every
 * ack it relays (section 9.4 steps 2 to 4).
 */
export const httpForwarder = (
  endpoints: Readonly<Record<string, string>>,
  options: Pick<PostOptions, "tls" | "timeout"> = {}
): Layer.Layer<Forwarder> =>
  Layer.succeed(Forwarder, {
    forward: (revoke, holder) => {
      const url = Object.prototype.hasOwnProperty.call(endpoints, holder) ? endpoints[holder] : undefined
      if (url === undefined) return Effect.succeed(Option.none())
      return postWrit(url, revoke, { timeout: Duration.seconds(10), ...options }).pipe(
        Effect.map((a) => (a.status === 200 ? Option.flatMap(a.json, forwardedAnswerOf) : Option.none())),
        Effect.catchAll((e) => Effect.as(Effect.logWarning(`revoke not forwarded to ${holder}: ${e.message}`), Option.none()))
      )
    }
  })
