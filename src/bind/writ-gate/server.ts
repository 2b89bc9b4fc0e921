// `writ gate`'s HTTP side (docs/writ-gate.md), on @effect/platform's HTTP server:
//
//   <route>       the caller's ordinary request with `Writ-Call: <base64url of the call>`: no route
//                 is 404; no call, or a request that breaks the route's contract (./contract.ts),
//                 or values that differ from the signed `args`, or an `op` other than the route's
//                 `act`, is 400 {"error"}; otherwise the executor decides (spec section 7) and an
//                 accepted call reaches the API as the request rebuilt from the signed values.
//                 The answer is the API's own status, headers and body, plus `Writ-Tally`; a
//                 refusal after the signature verified, or a replay, is 200 {"tally"}.
//   POST /writ    section 10, for standing calls (`sys/undo`, `sys/tallies`) and revokes; a
//                 forward call there is 400 `gate/use_route` (it goes with its request).
//   GET /.well-known/writ  Appendix B.
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, Option, type Scope } from "effect"
import * as Http from "node:http"
import { decodeBase64url, encodeBase64url } from "../../kernel/base64url.js"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { isJsonObject, type Json, parseJson } from "../../kernel/json.js"
import { callAnswerJson, Executor, type ExecutorService } from "../../writ/executor/executor.js"
import { callIdentity } from "../../writ/sign.js"
import { Received } from "../../writ/verify.js"
import { readBody } from "../writ-http/body.js"
import type { RevokeRateLimit } from "../writ-http/rate-limit.js"
import { writHttpApp } from "../writ-http/server.js"
import { checkRequest, DROPPED_REQUEST_HEADERS, matchRoute, MAX_BODY_BYTES } from "./contract.js"
import { gateError, type GateReason } from "./errors.js"
import type { CheckedMapping } from "./mapping.js"
import type { InFlight, InFlightMap } from "./upstream.js"

export const CALL_HEADER = "writ-call"
export const TALLY_HEADER = "writ-tally"
/** A call is at most 65536 canonical bytes (section 1.6); base64url makes it 4/3 longer. */
export const MAX_HEADER_BYTES = 96 * 1024

const json = (status: number, body: Json, headers: Record<string, string> = {}) =>
  HttpServerResponse.uint8Array(utf8(encodeCanonical(body, "utf16")), { status, contentType: "application/json", headers })
const refuse = (reason: GateReason, path: string, message: string) => Effect.fail(gateError(reason, path, message))

/** Whether bytes hold a forward call (not a revoke, not a standing call): those go with a request. */
const isForwardCall = (bytes: Uint8Array | string): boolean => {
  const p = parseJson(bytes, { maxDepth: 64, integersOnly: true })
  return Either.isRight(p) && isJsonObject(p.right) && p.right.typ !== "revoke" && typeof p.right.op === "string" && !p.right.op.startsWith("sys/")
}

/** The section 10 endpoint over an executor that sends forward calls back to their routes. */
const standingOnly = (executor: ExecutorService): ExecutorService => ({
  ...executor,
  call: (input, peer) =>
    input instanceof Received && isForwardCall(input.bytes)
      ? Effect.succeed({ _tag: "error", reason: "gate/use_route" })
      : executor.call(input, peer)
})

export const gateHttpApp = (mapping: CheckedMapping, inFlight: InFlightMap): HttpApp.Default<never, Executor | RevokeRateLimit> => {
  const writ = writHttpApp({ path: "/writ", wellKnown: { endpoint: "", act: mapping.routes.map((r) => r.route.act) } })

  const route = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    const url = new URL(req.url ?? "/", "http://gate")
    const executor = yield* Executor
    if (url.pathname === "/writ" || url.pathname === "/.well-known/writ") {
      return yield* Effect.provideService(writ, Executor, standingOnly(executor))
    }
    const matched = matchRoute(mapping, req.method ?? "GET", url.pathname)
    if (matched === undefined) return yield* refuse("gate/no_route", "path", "no route matches the method and path")
    const header = req.headers[CALL_HEADER]
    if (typeof header !== "string" || header === "") return yield* refuse("missing_call", "headers", "no Writ-Call header")
    const body = yield* readBody(req, MAX_BODY_BYTES)
    if (body._tag === "too_large") return json(400, { error: "too_large" }, { connection: "close" })
    if (body._tag === "error") return yield* refuse("malformed", "body", body.message)
    // The request contract (./contract.ts); its failure is the 400 answer (catchTag below).
    const args = yield* checkRequest(matched.route, matched.params, url.search.replace(/^\?$/, ""), body.bytes)
    const callBytes = decodeBase64url(header.trim())
    if (Option.isNone(callBytes)) return yield* refuse("malformed", "headers.writ-call", "not canonical base64url")
    const parsed = parseJson(callBytes.value, { maxDepth: 64, integersOnly: true })
    // The call must sign exactly what the request carries: its op is the route's act, its args the
    // request's values (canonical forms compared, section 1.2). A call that does not parse is left
    // to the executor, whose section 7 step 1 names what is wrong with it.
    if (Either.isRight(parsed)) {
      const call = parsed.right
      if (!isJsonObject(call) || call.op !== matched.route.route.act) return yield* refuse("malformed", "op", "the call names another op than the route's act")
      if (!isJsonObject(call.args) || encodeCanonical(call.args, "utf16") !== encodeCanonical(args, "utf16")) {
        return yield* refuse("malformed", "args", "the request does not carry exactly the signed values")
      }
    }
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) {
      if (!DROPPED_REQUEST_HEADERS.has(k) && typeof v === "string") headers[k] = v
    }
    const id = Either.isRight(parsed) && isJsonObject(parsed.right) ? callIdentity(parsed.right) : ""
    const flight: InFlight = { headers }
    // The same call sent twice at once: the first request owns the entry (the executor performs the
    // call once, section 7 step 9; the second is answered with a pending tally).
    const owner = id !== "" && !inFlight.has(id)
    if (owner) inFlight.set(id, flight)
    const answer = yield* executor.call(new Received(callBytes.value)).pipe(
      Effect.ensuring(Effect.sync(() => owner && inFlight.delete(id)))
    )
    if (answer._tag === "error") return json(400, { error: answer.reason })
    const response = flight.response
    if (response === undefined) return json(200, callAnswerJson(answer))
    // The API's response unchanged, with the gate's signed tally beside it.
    const tally = encodeBase64url(utf8(encodeCanonical(answer.tally, "utf16")))
    return HttpServerResponse.uint8Array(response.body, {
      status: response.status,
      headers: { ...response.headers, [TALLY_HEADER]: tally },
      ...(response.headers["content-type"] === undefined ? {} : { contentType: response.headers["content-type"] })
    })
  })
  // Every refusal before the executor runs is a GateError: 404 for no route, else 400 naming it.
  // A span per request, so a trace shows the gate's time apart from the executor's and the API's.
  return route.pipe(
    Effect.catchTag("GateError", (e) => Effect.succeed(json(e.reason === "gate/no_route" ? 404 : 400, { error: e.reason }))),
    Effect.withSpan("writ.gate.request")
  )
}

/** Serves the gate on 127.0.0.1 (or `host`) within the scope. */
export const listenGate = (
  mapping: CheckedMapping,
  inFlight: InFlightMap,
  options: { readonly port: number; readonly host?: string }
): Effect.Effect<{ readonly port: number; readonly url: string }, unknown, Scope.Scope | Executor | RevokeRateLimit> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const server = yield* NodeHttpServer.make(
      () => Http.createServer({ maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 }),
      { port: options.port, host }
    )
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    yield* server.serve(gateHttpApp(mapping, inFlight))
    return { port, url: `http://${host.includes(":") ? `[${host}]` : host}:${port}` }
  })
