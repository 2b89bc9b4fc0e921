// The upstream HTTP calls of the OpenAPI adapter (src/yea/openapi): fetch with fixed headers (such
// as credentials, never shown to the model), a timeout, and a bounded response body. A network
// failure or a timeout is `unavailable`; a body that is not JSON is returned as text.
import { Effect, Layer } from "effect"
import { Upstream } from "../yea/openapi/index.js"
import { yeaError } from "../yea/reason.js"

export interface UpstreamOptions {
  readonly headers?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
  /** At most this many bytes of a response are read (default 1 MiB). */
  readonly maxBody?: number
}

export const upstreamLayer = (options: UpstreamOptions = {}): Layer.Layer<Upstream> =>
  Layer.succeed(Upstream, {
    send: (req) =>
      Effect.tryPromise({
        try: async (signal) => {
          const res = await fetch(req.url, {
            method: req.method,
            headers: { accept: "application/json", ...(req.body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
            ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
            signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs ?? 30_000)])
          })
          const buf = Buffer.from(await res.arrayBuffer())
          if (buf.length > (options.maxBody ?? 1024 * 1024)) throw new Error("the upstream response is too large")
          const text = buf.toString("utf8")
          let body: unknown = text
          try {
            body = text === "" ? null : JSON.parse(text)
          } catch {
            // not JSON: keep the text
          }
          return { status: res.status, body }
        },
        catch: (e) => yeaError("unavailable", `upstream: ${e instanceof Error ? e.message : String(e)}`)
      })
  })
