// POSTing one Writ object to an executor (spec section 10): `application/writ+json`, the answer's
// status and its JSON body read strictly (section 1.1). Used by `writ send` and the demo.
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Either } from "effect"
import { type Json, parseJson } from "../kernel/json.js"
import { cliError, type CliError } from "./writ-io.js"

export interface PostAnswer {
  readonly status: number
  readonly text: string
  readonly body: Json
}

/** Section 10's media type. */
export const WRIT_JSON = "application/writ+json"

export const postWrit = (url: string, body: string | Uint8Array): Effect.Effect<PostAnswer, CliError> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body
    const req = HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUint8Array(bytes, WRIT_JSON))
    const res = yield* Effect.mapError(client.execute(req), (e) => cliError("mandate/unreachable", e.message, url))
    const text = yield* Effect.mapError(res.text, (e) => cliError("mandate/unreachable", e.message, url))
    // An answer nests one level above the objects it carries (section 1.1 rule 7 applies to those).
    const parsed = parseJson(text, { maxDepth: 66, integersOnly: true })
    if (Either.isLeft(parsed)) return yield* Effect.fail(cliError(parsed.left.reason, `answer (status ${res.status}): ${parsed.left.message}`, url))
    return { status: res.status, text, body: parsed.right }
  }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
