// Calls answered by plain node:http code in front of the platform's router (per call the
// platform's request, router, response and span took a large share of the CPU, and most of a
// replay's). A POST to the endpoint with the binding's media type, a declared length within
// section 1.6's limit and a peer the connection names (section 7.6) has its body read here; then
//   - a replay the executor answers from its replay table with no effect to run (its `replayNow`:
//     every live check of section 7 passed, in its order, and nothing to write) is answered at once;
//   - a body the executor's strict reading (section 1.1) reads as anything but a revoke is handed
//     to the executor's `call` as one Effect, on the server's runtime, and its answer written with
//     the status the route gives it (400 for section 7 steps 1 and 2, else 200);
// each with the same canonical bytes the route writes. Everything else (another method, path,
// media type or length, an unverified certificate, a revoke, a body that does not read) goes to
// the platform's route as before, with the body already read (body.ts `prefetched`): the route
// answers, refuses and audits it exactly as it would have.
import type { Effect } from "effect"
import type * as Http from "node:http"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { type CallAnswer, callAnswerJson } from "../../writ/executor/answers.js"
import { isJsonObject } from "../../kernel/json.js"
import { Received } from "../../writ/verify.js"
import type { Peer } from "../../writ/executor/services.js"
import { prefetched } from "./body.js"
import { peerOfRequest, type TransportBindings } from "./peer.js"

type Listener = (req: Http.IncomingMessage, res: Http.ServerResponse) => void

export interface FastReplayOptions {
  readonly path: string
  readonly maxBody: number
  readonly mediaType: string
  readonly bindings: TransportBindings
  /** The executor's answer to these bytes from its replay table, or undefined. */
  readonly replayNow: (input: Received, peer: Peer) => CallAnswer | undefined
  /** The executor's section 7 for a call. */
  readonly call: (input: Received, peer: Peer) => Effect.Effect<CallAnswer>
  /** Runs an answer's Effect (the server's runtime); `onExit` gets the answer, or undefined if it
   * failed or was interrupted. Returns an interruptor. */
  readonly run: <A>(self: Effect.Effect<A>, onExit: (a: A | undefined) => void) => () => void
  /** Audits a request whose body could not be read (section 9.3), as the route's refusal does. */
  readonly unreadable: (peer: Peer) => Effect.Effect<void>
  /** The route's answer to it: 400 and its code, the connection closed. */
  readonly unreadableBody: Buffer
}

/** The media type without parameters, lower-cased (as the route reads it). */
const mediaTypeOf = (header: string | undefined): string => (header ?? "").split(";")[0].trim().toLowerCase()

/**
 * Puts the plain replay path in front of `route` (the platform's request listeners, already added to
 * `server`): they are taken off the server and called from here for every request not answered here.
 */
export const serveCallsFirst = (server: Http.Server, route: ReadonlyArray<Listener>, options: FastReplayOptions): void => {
  for (const l of route) server.off("request", l)
  const handOff = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    for (const l of route) l.call(server, req, res)
  }
  // The canonical bytes of each answer, encoded once (a replay answers the same object every time).
  const encoded = new WeakMap<CallAnswer, Buffer>()
  const encode = (a: CallAnswer): Buffer => {
    const bytes = utf8(encodeCanonical(callAnswerJson(a), "utf16"))
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }
  const bodyOf = (a: CallAnswer): Buffer => {
    let b = encoded.get(a)
    if (b === undefined) {
      b = encode(a)
      encoded.set(a, b)
    }
    return b
  }
  const respond = (res: Http.ServerResponse, answer: CallAnswer, replayed = false) => {
    const body = replayed ? bodyOf(answer) : encode(answer)
    res.writeHead(answer._tag === "error" ? 400 : 200, { "content-type": options.mediaType, "content-length": body.length })
    res.end(body)
  }
  server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    const declared = req.headers["content-length"]
    if (
      req.method !== "POST" || req.url !== options.path || mediaTypeOf(req.headers["content-type"]) !== options.mediaType ||
      declared === undefined || !/^\d+$/.test(declared) || Number(declared) > options.maxBody
    ) return handOff(req, res)
    const connection = peerOfRequest(req, options.bindings)
    if (connection._tag !== "peer") return handOff(req, res)
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = (read: { readonly _tag: "ok"; readonly bytes: Uint8Array } | { readonly _tag: "error"; readonly message: string }) => {
      if (done) return
      done = true
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("aborted", onAborted)
      req.off("close", onClose)
      if (read._tag === "ok") {
        const received = new Received(read.bytes)
        const replayed = options.replayNow(received, connection.peer)
        if (replayed !== undefined) return respond(res, replayed, true)
        const reading = received.reading
        if (reading._tag === "Right" && !(isJsonObject(reading.right.value) && reading.right.value.typ === "revoke")) {
          const interrupt = options.run(options.call(received, connection.peer), (answer) => {
            if (answer !== undefined) return respond(res, answer)
            // A defect of the executor: what the platform answers for one.
            if (!res.headersSent) res.writeHead(500, { "content-length": 0 })
            res.end()
          })
          // A client that goes away abandons a call not yet accepted, as the route's does.
          res.once("close", () => {
            if (!res.writableEnded) interrupt()
          })
          return
        }
      }
      if (read._tag === "error") {
        // The client went away mid-body (or sent more than it declared): audited, and answered
        // if it can still be.
        options.run(options.unreadable(connection.peer), () => {
          if (res.writableEnded || res.destroyed) return
          res.writeHead(400, { "content-type": options.mediaType, "content-length": options.unreadableBody.length, connection: "close" })
          res.end(options.unreadableBody)
        })
        return
      }
      prefetched.set(req, read)
      handOff(req, res)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      // More than declared cannot arrive in one request; kept within the limit all the same.
      if (size > options.maxBody) return finish({ _tag: "error", message: "body longer than its Content-Length" })
      chunks.push(chunk)
    }
    const onEnd = () => finish({ _tag: "ok", bytes: new Uint8Array(Buffer.concat(chunks, size)) })
    const onError = (e: Error) => finish({ _tag: "error", message: e.message })
    const onAborted = () => finish({ _tag: "error", message: "request aborted" })
    const onClose = () => finish({ _tag: "error", message: "request aborted" })
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("aborted", onAborted)
    req.on("close", onClose)
  })
}
