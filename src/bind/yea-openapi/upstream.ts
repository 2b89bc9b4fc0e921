// The upstream HTTP calls of the OpenAPI adapter (src/yea/openapi): fetch with fixed headers (such
// as credentials, never shown to the model), a timeout, and a bounded response body. A network
// failure or a timeout is `unavailable`; a body that is not JSON is returned as text. The body is
// read as it arrives and the read stops at the bound: a body over it is `unavailable` (the request
// was sent, so a COMMIT records it as an unknown outcome, service/commit.ts), never buffered whole.
import { Effect, Layer } from "effect"
import { Upstream } from "../../yea/openapi/index.js"
import { yeaError } from "../../yea/reason.js"

export interface UpstreamOptions {
  readonly headers?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
  /** At most this many bytes of a response are read (default 1 MiB). */
  readonly maxBody?: number
}

/** The default bound of a response body. */
export const MAX_BODY = 1024 * 1024

/** The body of `res`, read chunk by chunk; past `max` bytes the read is cancelled (closing the connection). */
const readCapped = async (res: Response, max: number): Promise<Buffer> => {
  const tooLarge = () => new Error(`the upstream response is too large (over ${max} bytes)`)
  const declared = Number(res.headers.get("content-length") ?? "")
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined)
    throw tooLarge()
  }
  if (res.body === null) return Buffer.alloc(0)
  const reader = res.body.getReader()
  const parts: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > max) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge()
    }
    parts.push(value)
  }
  return Buffer.concat(parts, size)
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
          const text = (await readCapped(res, options.maxBody ?? MAX_BODY)).toString("utf8")
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
