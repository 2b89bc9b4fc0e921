// Proposals (SPEC §5.1) and their hash.
//
//   hash = b64url(sha256(utf8(canonical(proposal without "hash" and "data"))))
//
// The hash binds everything a human is shown (summary, effects, uses, risk, undo, expiry); `data`
// is outside it, so only `data` may carry floats. A number elsewhere that is not an integer in
// ±(2^53−1) leaves the proposal without a hash, so it is invalid.
import { Either, Schema } from "effect"
import { hashB64 } from "../kernel/hash.js"
import { canonicalBytes, type NoCanonicalForm } from "./canonical.js"
import { RiskLevel } from "./caveat.js"
import { Uses } from "./measure.js"
import { yeaError, type YeaError } from "./reason.js"

export const EffectOp = Schema.Literal("create", "update", "delete", "send", "other")
export type EffectOp = typeof EffectOp.Type

/** `from` and `to` MUST be scalars (§5.1). */
const Scalar = Schema.Union(Schema.Null, Schema.Boolean, Schema.Number, Schema.String)

/** One principal-observable change (§5.1 `effects`). */
export const ProposalEffect = Schema.Struct({
  op: EffectOp,
  target: Schema.String,
  field: Schema.optional(Schema.String),
  from: Schema.optional(Scalar),
  to: Schema.optional(Scalar),
  detail: Schema.optional(Schema.String)
}).annotations({ identifier: "ProposalEffect" })
export type ProposalEffect = typeof ProposalEffect.Type

/** `null` if irreversible, else `{"window": seconds}` (§5.1). */
export const ProposalUndo = Schema.NullOr(Schema.Struct({ window: Schema.Int }))

/** A proposal (§5.1). Decoding rejects a malformed `uses` or `risk`: clients treat those as invalid. */
export const Proposal = Schema.Struct({
  id: Schema.String,
  capability: Schema.String,
  summary: Schema.String,
  effects: Schema.Array(ProposalEffect),
  uses: Schema.optional(Uses),
  risk: RiskLevel,
  undo: ProposalUndo,
  expires: Schema.Int,
  hash: Schema.String,
  data: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "Proposal" })
export type Proposal = typeof Proposal.Type

/** The proposal without `hash` and `data`: what the hash covers. */
export const hashedPart = (proposal: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(proposal)) if (k !== "hash" && k !== "data") out[k] = proposal[k]
  return out
}

/** §5.1 `hash`, or why the proposal has none (a float or a lone surrogate in a hashed field). */
export const proposalHash = (proposal: Readonly<Record<string, unknown>>): Either.Either<string, NoCanonicalForm> =>
  Either.map(canonicalBytes(hashedPart(proposal)), hashB64)

/**
 * Decodes a proposal a service sent and checks its hash. A malformed proposal, or one whose `hash`
 * is not the hash of what it shows, is `invalid_params` here; the client must not act on it.
 */
export const decodeProposal = (u: unknown): Either.Either<Proposal, YeaError> =>
  Either.gen(function* () {
    const p = yield* Either.mapLeft(Schema.decodeUnknownEither(Proposal)(u), (e) =>
      yeaError("invalid_params", `malformed proposal: ${e.message.split("\n")[0]}`)
    )
    const h = yield* Either.mapLeft(proposalHash(u as Record<string, unknown>), (e) =>
      yeaError("invalid_params", `proposal has no hash: ${e.message}`, { path: e.path })
    )
    if (h !== p.hash) return yield* Either.left(yeaError("invalid_params", "proposal hash does not match its content", { path: "hash" }))
    return p
  })

/**
 * §4.4: the COMMIT's `hash` must equal the proposal's. The `conflict` error MUST NOT reveal the
 * correct hash, so the message names neither.
 */
export const checkCommitHash = (proposal: { readonly hash: string }, hash: unknown): Either.Either<void, YeaError> =>
  proposal.hash === hash ? Either.void : Either.left(yeaError("conflict", "the proposal changed since it was shown; run INTENT again"))
