// Reading a request body within the binding's byte limit (section 1.6, `too_large`).
//
// The limit is @effect/platform's `HttpIncomingMessage.MaxBodySize` (the binding sets it with
// `withMaxBodySize` on its route), but the reading is this module's, for two behaviours the
// platform's `arrayBuffer` does not have and the binding keeps exactly: a declared Content-Length
// over the limit is refused without reading a byte (the platform reads up to the limit first), and
// a body that passes the limit while streaming (chunked, no length) is answered `too_large` before
// the connection is closed (the platform destroys the request, and with it the connection, before
// any answer can be written).
import { HttpIncomingMessage } from "@effect/platform"
import { Effect, Option } from "effect"
import type { IncomingMessage } from "node:http"

export type BodyRead =
  | { readonly _tag: "ok"; readonly bytes: Uint8Array }
  | { readonly _tag: "too_large" }
  | { readonly _tag: "error"; readonly message: string }

/** The platform's MaxBodySize in context, in bytes (none set: `fallback`). */
export const maxBodySize = (fallback: number): Effect.Effect<number> =>
  Effect.map(HttpIncomingMessage.MaxBodySize, (size) => Option.match(size, { onNone: () => fallback, onSome: Number }))

/**
 * Reads at most `limit` bytes of the request body. A declared length over the limit is refused
 * without reading; otherwise reading stops at the first chunk that passes the limit, and the
 * connection is closed after the answer rather than drained.
 */
const readAtMost = (req: IncomingMessage, limit: number): Effect.Effect<BodyRead> =>
  Effect.async<BodyRead>((resume) => {
    const declared = req.headers["content-length"]
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
      req.pause()
      resume(Effect.succeed({ _tag: "too_large" }))
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = (r: BodyRead) => {
      if (done) return
      done = true
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("aborted", onAborted)
      resume(Effect.succeed(r))
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        req.pause()
        finish({ _tag: "too_large" })
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish({ _tag: "ok", bytes: new Uint8Array(Buffer.concat(chunks, size)) })
    const onError = (e: Error) => finish({ _tag: "error", message: e.message })
    const onAborted = () => finish({ _tag: "error", message: "request aborted" })
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("aborted", onAborted)
    return Effect.sync(() => {
      done = true
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("aborted", onAborted)
    })
  })


/**
 * Reads the body of `req` within the platform's MaxBodySize. A declared length over it is refused
 * unread; otherwise reading stops at the first chunk past it, and the connection is closed after
 * the answer rather than drained.
 */
export const readBody = (req: IncomingMessage, fallback: number): Effect.Effect<BodyRead> =>
  Effect.suspend(() => {
    const read = prefetched.get(req)
    return read === undefined ? Effect.flatMap(maxBodySize(fallback), (limit) => readAtMost(req, limit)) : Effect.succeed(read)
  })

/**
 * Bodies read before the route ran, by the plain replay path (fast-replay.ts), which reads only a
 * body whose declared length is within the limit: the route takes the bytes (or the reading's
 * failure) from here instead of the drained stream.
 */
export const prefetched = new WeakMap<IncomingMessage, Extract<BodyRead, { readonly _tag: "ok" | "error" }>>()
