// Writ-delegated budgets (issue 29): a caller presents a signed Writ call in the `Writ-Call`
// header (base64url of its canonical bytes, as `writ gate` carries one beside a plain request) and
// the gateway acts as the Writ executor named by the leaf `hld` (spec section 7). Its admission
// runs section 7 steps 1 to 8 in the spec's order; steps 9 and 10 (replay, `count` and `total`)
// become draws of the call's one atomic reservation on the ledger guard, beside the gateway key's
// levels (guarded-call.ts), so a `total` holds across concurrent calls and gateway processes.
//
// Conventions of this executor (the application's, which section 3.2 leaves to the parties):
//   op     `llm/<route>`: `llm/openai.chat`, `llm/openai.responses`, `llm/anthropic.messages`
//   args   `model` (the request's model; a `set` bound on it is an allow list), `usd` (the most
//          this call may consume, micro-USD: a `total` bound named `usd` caps the spend),
//          `req` (base64url SHA-256 of the request body: the signed call is bound to that body)
// Section 7.3 consumes a total's argument at acceptance and gives none back. Here the argument is
// a ceiling: what is consumed at acceptance is the call's worst case (at most the argument), and
// the actual cost settles it, the difference given back as the accounting core settles any
// reservation. The tally's `used.usd` is the actual cost (section 6), above the worst case too
// when the upstream produced more than it was asked for (charged in full, a budget overrun).
import { createHash } from "node:crypto"
import { type Context, Effect, Either, Option, Schema } from "effect"
import { protocolDecision } from "../accounting/decision-events.js"
import type { StoreError } from "../accounting/store-error.js"
import { decodeBase64url, encodeBase64url } from "../kernel/base64url.js"
import { encodeCanonical, utf8 } from "../kernel/canonical.js"
import { didKeyFromPublicKey } from "../kernel/didkey.js"
import type { JsonObject } from "../kernel/json.js"
import { Signer } from "../kernel/services.js"
import type { Draw, Policy } from "../ledger/policy.js"
import { fromNanos } from "../ledger/usd.js"
import { LedgerWriter } from "../ledger/writer.js"
import { forwardFailure, verifyCallStepsEither } from "../writ/call.js"
import { DEFAULT_ROOT_LIFETIME_SECONDS, expiryFailure } from "../writ/chain.js"
import { signTally } from "../writ/issue.js"
import { type WritReason } from "../writ/reason.js"
import { Received } from "../writ/verify.js"
import type { CheckedWrit } from "../writ/writ.js"
import { NANOS_PER_MICRO } from "./guarded-call.js"
import type { Route, Usage } from "./wire/types.js"

export const CALL_HEADER = "writ-call"
export const TALLY_HEADER = "writ-tally"
/** The `total` bound (and argument) that caps model spend, in micro-USD. */
export const TOTAL_BOUND = "usd"

export const writOp = (route: Route): string => `llm/${route}`

/** base64url SHA-256 of a request body: the call's `req` argument. */
export const requestDigest = (body: Uint8Array): string => createHash("sha256").update(body).digest("base64url")

export interface WritExecutorConfig {
  /** The executor's key seed (32 bytes): its did:key is the leaf `hld` it acts for, and it signs tallies. */
  readonly seed: Uint8Array
  /** The root issuers it acts under (section 7.1). */
  readonly roots: ReadonlyArray<string>
  /** Section 7 step 7: whether a writ (by identity) or an issuer (key-wide) is revoked. Default: none is. */
  readonly revoked?: ((writs: ReadonlyArray<string>, issuers: ReadonlyArray<string>) => Effect.Effect<boolean, StoreError>) | undefined
  /** Section 12: how far ahead a root's `exp` may be (default 24 h; null lifts it). */
  readonly rootLifetimeSeconds?: number | null | undefined
}

export interface WritExecutor {
  readonly did: string
  readonly config: WritExecutorConfig
  readonly signer: Context.Tag.Service<Signer>
}

export const makeWritExecutor = (config: WritExecutorConfig): WritExecutor => {
  const signer = Signer.make(config.seed)
  return { did: didKeyFromPublicKey(signer.publicKey), config, signer }
}

/** What a tally names of a call that passed step 2 (section 6: `call`, `writ`, `op`, `acc`). */
export const TallyBasis = Schema.Struct({ call: Schema.String, writ: Schema.String, op: Schema.String, acc: Schema.Number })
export type TallyBasis = typeof TallyBasis.Type

/**
 * A Writ refusal, its code a section 11 reason (or the gateway's own for what the spec leaves to
 * the application). With a basis it came after the signature verified (step 3 on) and is answered
 * with a signed `failed` tally; without, it is unsigned (steps 1 and 2).
 */
export class WritRefused extends Schema.TaggedError<WritRefused>()("WritRefused", {
  code: Schema.String,
  message: Schema.String,
  basis: Schema.optional(TallyBasis)
}) {}

/** HTTP status of a Writ refusal: spent totals are 402 (as the gateway's budgets), the rest 400 or 403. */
export const writStatus = (code: string): number => {
  switch (code) {
    case "total_exhausted":
    case "count_exhausted":
      return 402
    case "gateway/writ_replayed":
      return 409
    case "expired": case "revoked": case "root_not_accepted": case "wrong_executor": case "no_standing":
    case "forbidden_op": case "out_of_bounds": case "bad_signature": case "chain_broken": case "not_narrowed":
      return 403
    default:
      return 400
  }
}

/** One `total` bound of the chain: the writ carrying it, its name, its value (micro-USD when `usd`). */
export interface TotalSpec {
  readonly writ: string
  readonly name: string
  readonly limit: bigint
}

/** A call admitted through section 7 step 8; steps 9 and 10 are its draws (`writDraws`). */
export interface AdmittedWrit {
  readonly basis: TallyBasis
  readonly from: string
  readonly root: string
  /** The call's `usd` argument: the most it may consume. */
  readonly cap: bigint
  readonly totals: ReadonlyArray<TotalSpec>
  /** Count bounds of the chain (section 7.3), consumed at acceptance like the executor's. */
  readonly counts: ReadonlyArray<TotalSpec>
}

const refused = (code: WritReason | "gateway/writ_mismatch", message: string, basis?: TallyBasis) =>
  new WritRefused({ code, message, ...(basis !== undefined ? { basis } : {}) })

/**
 * Section 7 steps 1 to 8 for the call in `header`, received at `now` (seconds) for a request on
 * `route` for `model` whose body is `body`; then the gateway's own binding of the call to the
 * request (op, model, body digest).
 */
export const admitWrit = (
  exec: WritExecutor,
  header: string,
  request: { readonly route: Route; readonly model: string; readonly body: Uint8Array },
  now: number
): Effect.Effect<AdmittedWrit, WritRefused | StoreError> =>
  Effect.gen(function*() {
    const bytes = decodeBase64url(header.trim())
    if (Option.isNone(bytes)) return yield* refused("malformed", "the Writ-Call header is not canonical base64url")
    // Steps 1 to 3 (section 6.1 on the call, its writs and signature, then the chain's links).
    const steps = verifyCallStepsEither(new Received(bytes.value), undefined)
    if (Either.isLeft(steps)) {
      const f = steps.left
      if (f.step !== 3) return yield* refused(f.error.reason, f.error.message)
      return yield* refused(f.error.reason, f.error.message, basisOf(f.call.id, f.chain[f.chain.length - 1].id, f.call.value.op, now))
    }
    const { call, chain } = steps.right
    const leaf = chain[chain.length - 1]
    const basis = basisOf(call.id, leaf.id, call.value.op, now)
    const fail = (code: WritReason | "gateway/writ_mismatch", message: string) => Effect.fail(refused(code, message, basis))
    if (call.value.op.startsWith("sys/")) return yield* fail("forbidden_op", "standing operations are not served on the model routes")
    // Step 4: expiry by the gateway's clock (and section 12's root lifetime).
    const expired = expiryFailure(chain, now, exec.config.rootLifetimeSeconds === undefined ? DEFAULT_ROOT_LIFETIME_SECONDS : exec.config.rootLifetimeSeconds)
    if (expired !== undefined) return yield* fail(expired.reason, expired.message)
    // Step 5 (section 7.1), step 6.
    if (!exec.config.roots.includes(chain[0].value.iss)) return yield* fail("root_not_accepted", "this gateway does not act under writs of this root")
    if (leaf.value.hld !== exec.did) return yield* fail("wrong_executor", "the leaf writ is held by another executor")
    // Step 7: by identity, or key-wide by an issuer.
    if (exec.config.revoked !== undefined) {
      const isRevoked = yield* exec.config.revoked(chain.map((w) => w.id), chain.map((w) => w.value.iss))
      if (isRevoked) return yield* fail("revoked", "a writ of the chain is revoked")
    }
    // Step 8 (no peer binding: the gateway's transport authenticates no peer, section 7.6), then 7.2.
    const forward = forwardFailure(call, chain)
    if (forward !== undefined) return yield* fail(forward.reason, forward.message)
    const args = call.value.args
    if (call.value.op !== writOp(request.route)) return yield* fail("gateway/writ_mismatch", `the call's op is not ${writOp(request.route)}, this route's`)
    if (args.model !== request.model) return yield* fail("gateway/writ_mismatch", "the call's model argument is not the request's model")
    if (args.req !== requestDigest(request.body)) return yield* fail("gateway/writ_mismatch", "the call's req argument is not the digest of this request body")
    const cap = args[TOTAL_BOUND]
    if (typeof cap !== "number" || !Number.isSafeInteger(cap) || cap < 0) {
      return yield* fail("missing_arg", `the call carries no ${TOTAL_BOUND} argument (micro-USD, an integer)`)
    }
    return { basis, from: call.value.from, root: chain[0].value.iss, cap: BigInt(cap), totals: boundsOf(chain, "total"), counts: boundsOf(chain, "count") }
  })

const basisOf = (call: string, writ: string, op: string, acc: number): TallyBasis => ({ call, writ, op, acc })

const boundsOf = (chain: ReadonlyArray<CheckedWrit>, t: "total" | "count"): Array<TotalSpec> => {
  const out: Array<TotalSpec> = []
  for (const w of chain) {
    for (const [name, b] of Object.entries(w.value.bnd)) {
      if (b.t === t) out.push({ writ: w.id, name, limit: BigInt(b.v as number) })
    }
  }
  return out
}

/** The policy name of a Writ draw, read back by `writRefusalOf` when the guard refuses one. */
export const WRIT_POLICY = { total: "writ:total_exhausted", count: "writ:count_exhausted", replay: "writ:replayed" } as const

/**
 * Section 7 steps 9 and 10 as draws of the call's reservation (one atomic reserve with the key's
 * levels, ledger/guard.ts): the (leaf, id) pair at most once while the call holds or has succeeded
 * (a dedup draw); one use of every `count` bound; the worst case on every `usd` total of the
 * chain. Keys are this executor's own (`gwrit/...`: section 7.3's totals are per executor); the
 * third segment is the ledger measure the guard settles them by.
 */
export const writDraws = (a: AdmittedWrit, worstMicro: bigint): ReadonlyArray<Draw> => [
  { key: `gwrit/${a.basis.writ}/dedup/${a.basis.call}`, limit: 1n, amount: 1n, reason: "duplicate_action", policy: WRIT_POLICY.replay, measure: "dedup" },
  ...a.counts.map((c): Draw => ({ key: `gwrit/${c.writ}/count/${c.name}`, limit: c.limit, amount: 1n, reason: "kind_limit_reached", policy: WRIT_POLICY.count, measure: "count" })),
  ...a.totals.filter((t) => t.name === TOTAL_BOUND).map((t): Draw => ({
    key: `gwrit/${t.writ}/usd/${t.name}`, limit: t.limit * NANOS_PER_MICRO, amount: worstMicro * NANOS_PER_MICRO,
    reason: "usd_budget_exhausted", policy: WRIT_POLICY.total, measure: "usd"
  }))
]

/** The Writ code of a guard refusal on one of `writDraws`, or undefined when another level refused. */
export const writRefusalOf = (policy: string | undefined): { readonly code: string; readonly message: string } | undefined =>
  policy === WRIT_POLICY.total ? { code: "total_exhausted", message: "the call's worst case would take a total bound of the chain past its value" }
    : policy === WRIT_POLICY.count ? { code: "count_exhausted", message: "a count bound of the chain is used up" }
    : policy === WRIT_POLICY.replay ? { code: "gateway/writ_replayed", message: "this call (leaf writ, id) was already accepted; sign a new call" }
    : undefined

/** Sections 6 and 10: the signed tally, as the `Writ-Tally` header value (base64url of its canonical bytes). */
export const tallyHeader = (
  exec: WritExecutor,
  basis: TallyBasis,
  outcome: { readonly st: "ok" | "failed"; readonly code?: string | undefined; readonly usedMicro?: bigint | undefined }
): string => {
  const tally = Effect.runSync(signTally({
    call: basis.call, writ: basis.writ, op: basis.op, acc: basis.acc, st: outcome.st,
    err: outcome.st === "ok" ? null : { code: outcome.code ?? "failed" },
    used: outcome.usedMicro === undefined ? {} : { [TOTAL_BOUND]: Number(outcome.usedMicro) }
  }).pipe(Effect.provideService(Signer, exec.signer), Effect.orDie))
  return encodeBase64url(utf8(encodeCanonical(tally.json as JsonObject, "utf16")))
}

/** The call's policy with the Writ draws after the key's levels (its verdicts unchanged). */
export const withWritDraws = (policy: Policy, draws: ReadonlyArray<Draw>): Policy => ({
  name: policy.name,
  evaluate: (input) => Effect.map(policy.evaluate(input), (c) => ({ ...c, draws: [...c.draws, ...draws] }))
})

/**
 * The Writ decision as a `protocol` line of the gateway's ledger (beside the call's own action,
 * decision and settlement lines): refused with its code, or consumed with the call's actual cost
 * in USD. Who: the call's `from`; what: the leaf writ. A ledger that cannot be written is logged.
 */
export const recordWritDecision = (
  d: { readonly from: string | undefined; readonly basis: TallyBasis | undefined; readonly refused?: string | undefined; readonly usedMicro?: bigint | undefined }
): Effect.Effect<void, never, LedgerWriter> =>
  Effect.flatMap(LedgerWriter, (writer) =>
    writer.append([{
      type: "protocol",
      decision: protocolDecision({
        protocol: "writ", kind: d.refused !== undefined ? "refused" : "consumed", principal: d.from, subject: d.basis?.writ,
        operation: d.basis?.op, reason: d.refused,
        ...(d.usedMicro !== undefined ? { amounts: [{ name: TOTAL_BOUND, amount: fromNanos(d.usedMicro * NANOS_PER_MICRO) }] } : {})
      })
    }])).pipe(Effect.catchAll((e) => Effect.logWarning("gateway: Writ decision not recorded", e)))

/** The signed `failed` tally of a refusal after the call's signature verified; none before (section 7). */
export const refusalTally = (exec: WritExecutor | undefined, basis: TallyBasis | undefined, code: string): Record<string, string> =>
  exec === undefined || basis === undefined ? {} : { [TALLY_HEADER]: tallyHeader(exec, basis, { st: "failed", code }) }

/**
 * The tally of a forwarded call, by how it ended (server.ts forwardCall): `ok` with `used.usd` the
 * actual cost (the worst case when a 2xx answer reported no usage, as the guard keeps); `failed`
 * `gateway/upstream_error` for an upstream error, with what it billed when it failed after output.
 */
export const finalTally = (exec: WritExecutor, basis: TallyBasis, worst: bigint | undefined, priceOf: (u: Usage) => bigint) =>
  (how: "commit" | "release" | "fail", usage: Usage | undefined): Record<string, string> => ({
    [TALLY_HEADER]: tallyHeader(exec, basis, how === "release"
      ? { st: "failed", code: "gateway/upstream_error" }
      : { st: how === "commit" ? "ok" : "failed", code: "gateway/upstream_error", usedMicro: usage === undefined ? worst : priceOf(usage) })
  })
