// The gate's application (spec section 7 step 11): the operation is the API request rebuilt from
// the call's signed arguments (./contract.ts), sent with @effect/platform's HttpClient. What the
// API answered travels back to the HTTP handler unchanged, beside the outcome the executor signs:
//
//   res   {"status", "body_sha256", "reverse_id"} (docs/writ-gate.md): a caller rebuilds it from
//         the response it received and verifies the tally, which proves the response unaltered;
//         `body_sha256` is the base64url SHA-256 of the response body bytes (spec section 1's Hash);
//   st    `ok` for a 2xx status, else `failed` with `gate/upstream_status`; no answer at all is
//         `unknown_outcome`, because an unanswered request may still have had its effect (section 7.3);
//   used  for each `used` entry naming a `max` or `total` bound of the leaf, the signed argument;
//   rev   `acc + ttl` when the route has `reverse` and the response carries its identifier.
//
// The response body is read as it arrives, up to `maxResponseBytes` (default MAX_RESPONSE_BYTES):
// past it the read stops and the connection is dropped. The API answered, so the request may have
// acted: the outcome is `failed` with `gate/result_too_large`, recorded like any final tally (the
// call is not performed again, section 7.3), its `res` naming the status and `used` reported as for
// any request the API received; the caller gets the signed tally, not the body.
//
// `sys/undo` (section 8.1) sends the route's `reverse` request with the identifier the target
// tally's result body recorded, once the executor has checked the target.
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Option, Stream } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import { sha256 } from "../../kernel/hash.js"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import type { ApplicationService, Operation, Outcome } from "../../writ/executor/services.js"
import { DROPPED_RESPONSE_HEADERS, fillPath, rebuild } from "./contract.js"
import type { CheckedMapping, CheckedRoute } from "./mapping.js"

/** The API's response, kept for the HTTP handler to return unchanged. */
export interface UpstreamResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

/** What the HTTP handler leaves for the operation of one call, by call identity. */
export interface InFlight {
  /** The caller's request headers, less those the gate never forwards. */
  readonly headers: Readonly<Record<string, string>>
  /** Set by the operation when the API answered. */
  response?: UpstreamResponse
}

export type InFlightMap = Map<string, InFlight>

export const UPSTREAM_TIMEOUT = Duration.seconds(30)

/** The default bound of an API response body the gate reads and returns (it holds it whole to hash and return it). */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024

/** An API answer whose body went past the bound: only its status is kept. */
export interface TooLargeResponse {
  readonly status: number
  readonly tooLarge: number
}

const TOO_LARGE = "gate/result_too_large" as const
const isTooLarge = (r: UpstreamResponse | TooLargeResponse): r is TooLargeResponse => "tooLarge" in r

/** The identifier at a `$.a.b` path of a JSON body, when it is a string or an integer. */
const readId = (body: Uint8Array, path: string): string | number | null => {
  const parsed = parseJson(body, { maxDepth: 64 })
  if (parsed._tag === "Left") return null
  let v: Json = parsed.right
  for (const n of path.slice(2).split(".")) {
    if (!isJsonObject(v) || !Object.prototype.hasOwnProperty.call(v, n)) return null
    v = v[n]
  }
  return typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v)) ? v : null
}

const ok = (status: number) => status >= 200 && status < 300

export const makeUpstreamApplication = (
  mapping: CheckedMapping,
  inFlight: InFlightMap,
  options: { readonly maxResponseBytes?: number } = {}
): Effect.Effect<ApplicationService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const max = options.maxResponseBytes ?? MAX_RESPONSE_BYTES

    const send = (method: string, path: string, headers: Readonly<Record<string, string>>, body: Uint8Array | undefined) =>
      Effect.scoped(Effect.gen(function*() {
        let req = HttpClientRequest.make(method as "POST")(`${mapping.upstream}${path}`).pipe(HttpClientRequest.setHeaders(headers))
        if (body !== undefined) req = HttpClientRequest.bodyUint8Array(req, body, "application/json")
        const res = yield* client.execute(req)
        // A declared length over the bound is refused unread; otherwise the read stops at the bound.
        const declared = Number(res.headers["content-length"] ?? "")
        if (Number.isFinite(declared) && declared > max) return { status: res.status, tooLarge: max } satisfies TooLargeResponse
        const read = yield* res.stream.pipe(Stream.runFoldWhile(
          { parts: [] as Array<Uint8Array>, size: 0 },
          (acc) => acc.size <= max,
          (acc, chunk) => {
            acc.size += chunk.length
            if (acc.size <= max) acc.parts.push(chunk)
            return acc
          }
        ))
        if (read.size > max) return { status: res.status, tooLarge: max } satisfies TooLargeResponse
        const bytes = new Uint8Array(read.size)
        let at = 0
        for (const p of read.parts) {
          bytes.set(p, at)
          at += p.length
        }
        const kept: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) if (!DROPPED_RESPONSE_HEADERS.has(k.toLowerCase())) kept[k] = v
        return { status: res.status, headers: kept, body: bytes } satisfies UpstreamResponse
      })).pipe(Effect.timeout(UPSTREAM_TIMEOUT), Effect.option)

    const routeOf = (op: string): CheckedRoute | undefined => mapping.routes.find((r) => r.route.act === op)

    const forward = (op: Operation, route: CheckedRoute): Effect.Effect<Outcome> =>
      Effect.gen(function*() {
        const flight = inFlight.get(op.callId)
        const r = rebuild(route, op.args)
        const answer = yield* send(r.method, r.path, flight?.headers ?? {}, r.body)
        if (Option.isNone(answer)) return { st: "failed", code: "unknown_outcome" } satisfies Outcome
        const leaf = op.chain[op.chain.length - 1]
        const bnd = (isJsonObject(leaf.bnd) ? leaf.bnd : {}) as Record<string, { t?: unknown }>
        const used: Record<string, number> = {}
        for (const [n, arg] of route.used) {
          const v = op.args[arg]
          if ((bnd[n]?.t === "max" || bnd[n]?.t === "total") && typeof v === "number") used[n] = v
        }
        if (isTooLarge(answer.value)) {
          return { st: "failed", code: TOO_LARGE, res: { status: answer.value.status, max_bytes: answer.value.tooLarge }, used } satisfies Outcome
        }
        const response = answer.value
        if (flight !== undefined) flight.response = response
        const reverseId = route.reverse === undefined ? null : readId(response.body, route.reverse.id)
        const res: JsonObject = { status: response.status, body_sha256: encodeBase64url(sha256(response.body)), reverse_id: reverseId }
        if (!ok(response.status)) return { st: "failed", code: "gate/upstream_status", res, used } satisfies Outcome
        const rev = route.reverse !== undefined && reverseId !== null ? op.acc + route.reverse.ttl : undefined
        return { st: "ok", res, used, ...(rev === undefined ? {} : { rev }) } satisfies Outcome
      })

    const undo = (op: Operation): Effect.Effect<Outcome> =>
      Effect.gen(function*() {
        const target = Option.getOrUndefined(op.target)
        const route = target === undefined ? undefined : routeOf(String(target.object.op))
        const res = target === undefined ? undefined : Option.getOrUndefined(target.res)
        const id = isJsonObject(res) ? res.reverse_id : null
        if (route?.reverse === undefined || (typeof id !== "string" && typeof id !== "number")) {
          return { st: "failed", code: "gate/reverse_failed" } satisfies Outcome
        }
        const answer = yield* send(route.reverse.method.toUpperCase(), fillPath(route.reverse.path, { id }), {}, undefined)
        if (Option.isNone(answer)) return { st: "failed", code: "unknown_outcome" } satisfies Outcome
        if (isTooLarge(answer.value)) return { st: "failed", code: TOO_LARGE, res: { status: answer.value.status, max_bytes: answer.value.tooLarge } } satisfies Outcome
        const body: JsonObject = { status: answer.value.status, body_sha256: encodeBase64url(sha256(answer.value.body)) }
        return ok(answer.value.status) ? { st: "ok", res: body } : { st: "failed", code: "gate/reverse_failed", res: body }
      })

    return {
      perform: (op) => {
        if (op.kind === "undo") return undo(op)
        const route = routeOf(op.op)
        // A forward op with no route never reaches here from a route; refused without a request.
        return route === undefined ? Effect.succeed({ st: "failed", code: "gate/no_route" }) : forward(op, route)
      }
    }
  })
