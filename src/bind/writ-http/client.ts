// The client side of the section 10 binding: POST one call or one revoke and read the answer.
// Used by `mandate writ send`, the demo, the benchmark, and the executor's Forwarder (section 9.1:
// a revoke is forwarded to the holders of writs the executor issued, and their acks relayed).
import { Data, Duration, Effect, Either, Layer, Option } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
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
  readonly timeout?: Duration.DurationInput
  /** A keep-alive agent shared by many requests (the benchmark). */
  readonly agent?: Http.Agent
}

/** What came back: the status, the exact bytes, and the JSON when the body parses strictly. */
export interface PostAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly bytes: Uint8Array
  readonly json: Option.Option<Json>
}

/**
 * POSTs `body` (an object, sent as its canonical form, or bytes sent as they are) to `url` with
 * Content-Type application/writ+json.
 */
export const postWrit = (
  url: string,
  body: JsonObject | Uint8Array | string,
  options: PostOptions = {}
): Effect.Effect<PostAnswer, WritHttpError> =>
  Effect.async<PostAnswer, WritHttpError>((resume) => {
    const payload = typeof body === "string"
      ? Buffer.from(body, "utf8")
      : body instanceof Uint8Array
      ? Buffer.from(body)
      : Buffer.from(utf8(encodeCanonical(body, "utf16")))
    const target = new URL(url)
    const https = target.protocol === "https:"
    const mod = https ? Https : Http
    const req = mod.request(target, {
      method: "POST",
      headers: {
        "content-type": options.contentType ?? MEDIA_TYPE,
        "content-length": String(payload.length),
        ...(options.headers ?? {})
      },
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(https && options.tls !== undefined
        ? {
          ...(options.tls.ca === undefined ? {} : { ca: options.tls.ca }),
          ...(options.tls.cert === undefined ? {} : { cert: options.tls.cert }),
          ...(options.tls.key === undefined ? {} : { key: options.tls.key }),
          ...(options.tls.servername === undefined ? {} : { servername: options.tls.servername })
        }
        : {}),
      timeout: Duration.toMillis(options.timeout ?? Duration.seconds(30))
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("error", (e) => resume(Effect.fail(new WritHttpError({ url, message: e.message }))))
      res.on("end", () => {
        const bytes = new Uint8Array(Buffer.concat(chunks))
        const parsed = parseJson(bytes, { integersOnly: true })
        resume(Effect.succeed({
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes,
          json: Either.isRight(parsed) ? Option.some(parsed.right) : Option.none()
        }))
      })
    })
    req.on("timeout", () => req.destroy(new Error("timed out")))
    req.on("error", (e) => resume(Effect.fail(new WritHttpError({ url, message: e.message }))))
    req.end(payload)
    return Effect.sync(() => req.destroy())
  })

/** GETs the Appendix B document at `base` + /.well-known/writ. */
export const fetchWellKnown = (baseUrl: string, options: Pick<PostOptions, "tls" | "timeout"> = {}) =>
  Effect.async<Json, WritHttpError>((resume) => {
    const url = new URL("/.well-known/writ", baseUrl).toString()
    const target = new URL(url)
    const mod = target.protocol === "https:" ? Https : Http
    const req = mod.request(target, {
      method: "GET",
      ...(options.tls === undefined ? {} : options.tls),
      timeout: Duration.toMillis(options.timeout ?? Duration.seconds(30))
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const parsed = parseJson(Buffer.concat(chunks), { integersOnly: true })
        if (res.statusCode !== 200 || Either.isLeft(parsed)) {
          resume(Effect.fail(new WritHttpError({ url, message: `status ${res.statusCode}` })))
        } else resume(Effect.succeed(parsed.right))
      })
    })
    req.on("timeout", () => req.destroy(new Error("timed out")))
    req.on("error", (e) => resume(Effect.fail(new WritHttpError({ url, message: e.message }))))
    req.end()
    return Effect.sync(() => req.destroy())
  })

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
