// Mandate's A2A client over the HTTP+JSON (REST) binding, A2A 1.0 only: one POST under the
// interface URL (the paths of ./rest.ts, which are the A2A JavaScript SDK's), its answer read as
// JSON, and an error status read as the SDK writes one (`{"error": {code, status, message,
// details}}`): the Writ reason its writ.dev ErrorInfo names, else `mandate/a2a_rpc_error`.
// ./http-client.ts chooses this or JSON-RPC per peer.
import type { HttpClient } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { post } from "../writ-http/client.js"
import { A2aReason, a2aError, type A2aError } from "./errors.js"
import { ERROR_DOMAIN, ERROR_INFO_TYPE } from "./rpc.js"
import { A2A_VERSION, REVOKE_HEADER } from "./schema.js"

/** The Writ reason an HTTP+JSON error body names, else `mandate/a2a_rpc_error` with its status. */
export const restErrorOf = (status: number, body: Option.Option<Json>): A2aError => {
  const error = Option.isSome(body) && isJsonObject(body.value) && isJsonObject(body.value.error) ? body.value.error : undefined
  const details = error !== undefined && Array.isArray(error.details) ? error.details : []
  const info = details.find((d): d is JsonObject => isJsonObject(d) && d["@type"] === ERROR_INFO_TYPE && d.domain === ERROR_DOMAIN)
  const reason = info === undefined ? Option.none() : Schema.decodeUnknownOption(A2aReason)(info.reason)
  const message = typeof error?.message === "string" ? error.message : `status ${status}`
  return Option.isSome(reason)
    ? a2aError(reason.value, "response.error", message)
    : a2aError("mandate/a2a_rpc_error", "response.error", `${status}: ${message}`)
}

/** POSTs `body` to `url` + `path` (an HTTP+JSON method), with `headers`; the JSON answer of a 2xx. */
export const restPost = (
  url: string,
  path: string,
  body: JsonObject,
  headers: Readonly<Record<string, string>> = {}
): Effect.Effect<Json, A2aError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const target = `${url.replace(/\/+$/, "")}${path}`
    const answer = yield* post(target, body, {
      contentType: "application/json",
      headers: { "a2a-version": A2A_VERSION, accept: "application/json", ...headers }
    }).pipe(Effect.mapError((e) => a2aError("mandate/unreachable", target, e.message)))
    if (answer.status < 200 || answer.status > 299) return yield* Effect.fail(restErrorOf(answer.status, answer.json))
    if (Option.isNone(answer.json)) return yield* Effect.fail(a2aError("noncanonical", "response", `the answer (status ${answer.status}) is not strict JSON`))
    return answer.json.value
  })

/** The `writ-revoke` header's value for `revoke`: base64url of its JSON (./rest.ts). */
export const revokeHeader = (revoke: JsonObject): Record<string, string> => ({ [REVOKE_HEADER]: encodeBase64url(utf8(encodeCanonical(revoke, "utf16"))) })

/** The HTTP+JSON path of a task's cancel. */
export const cancelPath = (taskId: string): string => `/tasks/${encodeURIComponent(taskId)}:cancel`
