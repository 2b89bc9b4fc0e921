// YEA's error codes (SPEC §7), defined once. Every YEA check fails with `YeaError`, whose `reason`
// is one of these codes, so a transport can turn any failure into an ERROR frame without a table.
import { Schema } from "effect"
import { Stackless } from "../kernel/stackless.js"

/** SPEC §7 "Codes". */
export const YeaReason = Schema.Literal(
  "bad_frame",
  "unknown_capability",
  "invalid_params",
  "unauthorized", // missing or invalid grant or proof
  "forbidden", // a valid grant that doesn't cover the request (also every malformed caveat, §6.3)
  "consent_required", // only `risk`, `each` or `total` failed (§6.6)
  "not_found",
  "expired",
  "conflict",
  "limit",
  "unavailable",
  "internal"
)
export type YeaReason = typeof YeaReason.Type

/**
 * A rejection. `need` carries the caveats that blocked the request (§7 `need`): for `forbidden`
 * the hard failures, for `consent_required` the soft ones (`risk`, `each`, `total`). `path` names
 * the member that failed where that helps (e.g. `grants[0].blocks[1].s`).
 */
/**
 * The `consent` member of a `consent_required` ERROR (§6.6): what the principal is asked to approve.
 * It is part of the error body (§7), so it is defined beside the error.
 */
export const ConsentRequest = Schema.Struct({
  proposal: Schema.String,
  hash: Schema.String,
  service: Schema.String,
  capability: Schema.String,
  principal: Schema.String,
  summary: Schema.String,
  expires: Schema.Int
}).annotations({ identifier: "ConsentRequest" })
export type ConsentRequest = typeof ConsentRequest.Type

export class YeaError extends Stackless(Schema.TaggedError<YeaError>()("YeaError", {
  reason: YeaReason,
  message: Schema.String,
  path: Schema.optional(Schema.String),
  need: Schema.optional(Schema.Array(Schema.Unknown)),
  consent: Schema.optional(ConsentRequest),
  /** §7 `fix`: sentences with params merge patches that should make the request succeed. */
  fix: Schema.optional(Schema.Array(Schema.Struct({ say: Schema.String, params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })) }))),
  /** §7 `retry`: seconds after which a retry may succeed. */
  retry: Schema.optional(Schema.Int)
})) {}

export interface YeaErrorExtra {
  readonly path?: string
  readonly need?: ReadonlyArray<unknown>
  readonly consent?: ConsentRequest
  readonly fix?: ReadonlyArray<{ readonly say: string; readonly params?: Readonly<Record<string, unknown>> }>
  readonly retry?: number
}

export const yeaError = (reason: YeaReason, message: string, extra: YeaErrorExtra = {}): YeaError =>
  new YeaError({ reason, message, ...extra })
