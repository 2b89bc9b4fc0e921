// A request body read with its bound applied while it arrives: the bytes are counted chunk by
// chunk and reading stops at the first chunk past the bound (`console/too_large`), whatever the
// request declared. A chunked body declares no length, and a reader that collects the whole body
// before measuring it (or one that destroys the socket on the way) would either hold everything an
// attacker sends or leave the client with no answer. Past the bound, the rest is discarded as it
// comes (no listener keeps it) and the answer closes the connection.
import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import { consoleError, type ConsoleError } from "./reason.js"

export const readBoundedText = (max: number): Effect.Effect<string, ConsoleError, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
    const message = NodeHttpServerRequest.toIncomingMessage(req)
    return Effect.async<string, ConsoleError>((resume) => {
      const chunks: Array<Buffer> = []
      let size = 0
      let settled = false
      const stop = () => {
        message.off("data", onData)
        message.off("end", onEnd)
        message.off("error", onError)
      }
      const settle = (result: Effect.Effect<string, ConsoleError>) => {
        if (settled) return
        settled = true
        stop()
        chunks.length = 0
        // Flowing on without a listener: what still arrives is dropped, not buffered.
        message.resume()
        resume(result)
      }
      const onData = (d: Buffer) => {
        size += d.length
        if (size > max) return settle(Effect.fail(consoleError("console/too_large", `a body of at most ${max} bytes (${size} read when reading stopped)`, "body")))
        chunks.push(d)
      }
      const onEnd = () => {
        const text = Buffer.concat(chunks).toString("utf8")
        settle(Effect.succeed(text))
      }
      const onError = (e: Error) => settle(Effect.fail(consoleError("console/bad_request", `the body could not be read: ${e.message.slice(0, 200)}`, "body")))
      message.on("data", onData)
      message.on("end", onEnd)
      message.on("error", onError)
      return Effect.sync(stop)
    })
  })
