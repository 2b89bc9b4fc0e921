// The gateway server's own reason codes (the request-level ones, malformed and unsupported bodies,
// come from the wire reader): one union, each with the HTTP status it answers with. A budget
// refusal is 402, not 429: the official clients retry 429 on their own, and a budget that is spent
// stays spent until its period resets.
import { Schema } from "effect"

export const GatewayServerCode = Schema.Literal(
  "gateway/key_missing",
  "gateway/key_unknown",
  "gateway/key_revoked",
  "gateway/not_found",
  "gateway/body_too_large",
  "gateway/model_not_allowed",
  "gateway/no_price",
  "gateway/call_ceiling",
  "gateway/budget_exhausted",
  "gateway/upstream_unreachable",
  "gateway/store_unavailable",
  // Writ-delegated budgets (writ-budget.ts): a call not bound to its request, one already
  // accepted, and the failed tally's code for an upstream error.
  "gateway/writ_mismatch",
  "gateway/writ_replayed",
  "gateway/upstream_error"
)
export type GatewayServerCode = typeof GatewayServerCode.Type

export const SERVER_STATUS: Record<GatewayServerCode, number> = {
  "gateway/key_missing": 401,
  "gateway/key_unknown": 401,
  "gateway/key_revoked": 401,
  "gateway/not_found": 404,
  "gateway/body_too_large": 413,
  "gateway/model_not_allowed": 403,
  "gateway/no_price": 403,
  "gateway/call_ceiling": 402,
  "gateway/budget_exhausted": 402,
  "gateway/upstream_unreachable": 502,
  "gateway/store_unavailable": 503,
  "gateway/writ_mismatch": 400,
  "gateway/writ_replayed": 409,
  "gateway/upstream_error": 502
}

/** The gateway's start-up refusals (before it serves): a `--prices` file that cannot be used. */
export const GatewayConfigCode = Schema.Literal("gateway/bad_price_file")
export type GatewayConfigCode = typeof GatewayConfigCode.Type
