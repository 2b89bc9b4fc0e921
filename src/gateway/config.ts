// The gateway's configuration and what it reports of each call: the types server.ts is started
// with and calls back with, apart from the server itself.
import type { Effect } from "effect"
import type { StoreError } from "../accounting/store-error.js"
import type { BudgetSpec, Level, Mode } from "./budget.js"
import type { WritExecutor } from "./writ-budget.js"
import type { PriceOf, Route } from "./wire/types.js"

/** What the gateway knows of a key (by its SHA-256 hex). */
export interface KeyInfo {
  readonly hash: string
  readonly mode: Mode
  /** Every level that applies (key, user, team); each must hold. */
  readonly levels: ReadonlyArray<Level>
  readonly models?: ReadonlyArray<string> | undefined
  /** Per-call ceiling on the worst-case cost, micro-USD. */
  readonly ceiling?: bigint | undefined
  readonly user?: string | undefined
  readonly team?: string | undefined
}

export type KeyLookup = (hash: string) => Effect.Effect<KeyInfo | "revoked" | undefined, StoreError>

export interface GatewayConfig {
  readonly upstreams: { readonly openai?: string | undefined; readonly anthropic?: string | undefined }
  /** The credential the gateway sends upstream; the client's gateway key is never forwarded. */
  readonly upstreamKeys: { readonly openai?: string | undefined; readonly anthropic?: string | undefined }
  /** Who a key is (undefined: no key is known, every key gets `defaultBudget`). */
  readonly lookup?: KeyLookup | undefined
  /** For a key the lookup does not know: this budget per key (undefined: unknown keys are refused). */
  readonly defaultBudget?: BudgetSpec | undefined
  readonly defaultMode?: Mode | undefined
  readonly maxBodyBytes?: number | undefined
  /** Output tokens assumed when a request states no maximum. */
  readonly defaultMaxOutputTokens?: number | undefined
  readonly timeZone?: string | undefined
  /** Prices (default Wire.priceOf; `--prices FILE` puts its entries first, src/gateway/prices.ts). */
  readonly priceOf?: PriceOf | undefined
  /** Every call's outcome, once settled or refused (the ledger writer and the tests read it). */
  readonly onCall?: ((record: CallRecord) => void) | undefined
  /** Writ-delegated budgets (writ-budget.ts): the executor a `Writ-Call` header is checked by; none: the header is ignored. */
  readonly writ?: WritExecutor | undefined
}

export interface CallRecord {
  readonly keyHash: string | undefined
  readonly route: Route | "openai.models"
  readonly model: string | undefined
  readonly mode: Mode
  readonly decision: "allowed" | "refused"
  readonly code: string | undefined
  readonly reservation: string | undefined
  readonly reserved: bigint
  /** micro-USD charged; 0 for a refusal or a release. */
  readonly charged: bigint
  readonly settlement: "committed" | "released" | "failed" | "none"
  readonly estimated: boolean
  readonly overrun: bigint
  readonly inputTokens: number
  readonly outputTokens: number
  readonly latencyMs: number
  readonly status: number
}
