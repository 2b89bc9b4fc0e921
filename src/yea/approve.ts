// Approving a consent code (SPEC §6.6; docs/cli.md `approve`): what `mandate yea approve <pc1.code>`
// and any other approver (the MCP bridge's) run before a principal signs.
//
// A `pc1.` code is unsigned and written by the agent's tooling from what a service sent, so
// nothing in it is taken on trust (design.md, security review, "High": a consent for a different
// proposal behind a friendly summary). Before anything is shown:
//   1. the code must decode strictly and carry its whole proposal (the service-written summary
//      alone is not enough to sign);
//   2. the proposal's hash is recomputed from what will be shown (§5.1) and must equal both the
//      proposal's `hash` and the consent request's `hash`;
//   3. the consent request must name that proposal: id, capability, summary and expiry;
//   4. it must not have expired;
//   5. the agent it is for must be this machine's agent key, or named explicitly (`to`) after the
//      principal checked its fingerprint, since the code's `agent` is only a suggestion.
// The view is rendered with the hardened Lens (README, "Lens"): the text comes from a service.
// Signing then checks that the signer is the principal the request asks (§6.6 grant selection
// uses the proposal's principal) and issues the five-caveat consent grant (consent.ts).
import { Effect, Either, Schema } from "effect"
import { unixSeconds } from "../kernel/clock.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { type ConsentCode, decodeConsentCode, issueConsentGrant } from "./consent.js"
import { encodeKey, isKey } from "./keys.js"
import { lensProposalUndo, lensTime, lensUses } from "./lens/fields.js"
import { printable } from "./lens/printable.js"
import { Proposal, proposalHash } from "./proposal.js"
import { yeaError, type YeaError } from "./reason.js"
import { HardenedReply } from "./lens/reply.js"
import { Hardened } from "./lens/value.js"

export interface ConsentCodeReview {
  readonly code: ConsentCode
  /** The proposal the code carries, its hash re-checked. */
  readonly proposal: Proposal
  /** The agent key the consent grant will be issued to. */
  readonly agent: string
  /** What the principal is shown before confirming, one line each (hardened Lens). */
  readonly lines: ReadonlyArray<string>
}

export interface ConsentReviewOptions {
  /** This machine's agent key, if it has one: a code suggesting it needs no `to`. */
  readonly localAgent?: string
  /** The agent key the principal names explicitly (after checking its fingerprint). */
  readonly to?: string
}

const decodeProposal = Schema.decodeUnknownEither(Proposal)

/** The lines a principal reads: every field the hash binds, never only the summary. */
export const consentCodeLines = (code: ConsentCode, proposal: Proposal, agent: string): ReadonlyArray<string> => {
  const c = code.consent
  const lines = [
    `service:    ${printable(c.service)}`,
    `capability: ${printable(proposal.capability)}`,
    `summary:    ${printable(proposal.summary)}`,
    "effects:"
  ]
  if (proposal.effects.length === 0) lines.push("  (none listed)")
  for (const e of proposal.effects) lines.push("  " + HardenedReply.effectLine(e))
  lines.push(`uses:       ${lensUses(proposal.uses) ?? "nothing metered"}`)
  lines.push(`risk:       ${Hardened.leanScalar(proposal.risk)}`)
  lines.push(`undo:       ${proposal.undo === null ? "irreversible" : "within " + lensProposalUndo(proposal.undo, Hardened.leanScalar)}`)
  lines.push(`expires:    ${lensTime(proposal.expires, Hardened.leanScalar)}`)
  lines.push(`hash:       ${proposal.hash} (re-checked)`)
  lines.push(`principal:  ${c.principal}`)
  lines.push(`for agent:  ${agent}`)
  return lines
}

/** Steps 1 to 5 above: the review of a `pc1.` code, or the reason it must not be signed. */
export const reviewConsentCode = (text: string, options: ConsentReviewOptions = {}): Effect.Effect<ConsentCodeReview, YeaError> =>
  Effect.gen(function* () {
    // 1. Strict decoding, and the whole proposal present.
    const code = yield* decodeConsentCode(text.trim())
    const proposal = yield* Either.mapLeft(decodeProposal(code.detail), () =>
      yeaError("invalid_params", "the consent code does not carry its proposal (effects, uses, risk, undo, hash); a summary alone is not enough to sign", { path: "detail" })
    )
    // 2. §5.1: the hash of what will be shown.
    const hash = yield* Either.mapLeft(proposalHash(code.detail), () => yeaError("conflict", "the proposal in the code has no hash (a float or a lone surrogate)", { path: "detail" }))
    if (hash !== proposal.hash || hash !== code.consent.hash) {
      return yield* Effect.fail(yeaError("conflict", "the proposal in the code does not match its hash; do not sign it", { path: "detail.hash" }))
    }
    // 3. The request names exactly that proposal.
    const c = code.consent
    if (c.proposal !== proposal.id || c.capability !== proposal.capability || c.summary !== proposal.summary || c.expires !== proposal.expires) {
      return yield* Effect.fail(yeaError("conflict", "the consent request does not describe the proposal it carries", { path: "consent" }))
    }
    // 4. Expiry, on the Clock.
    if ((yield* unixSeconds) >= c.expires) return yield* Effect.fail(yeaError("expired", "the proposal has expired; ask the agent to run INTENT again"))
    // 5. Whom the consent is for.
    const agent = options.to ?? code.agent
    if (!isKey(agent)) return yield* Effect.fail(yeaError("invalid_params", "the agent key is not a canonical ed25519: key", { path: options.to !== undefined ? "to" : "agent" }))
    if (options.to === undefined && agent !== options.localAgent) {
      return yield* Effect.fail(
        yeaError("invalid_params", `the code suggests agent ${agent}, which is not this machine's agent key; check its fingerprint with the agent and pass it with --to`, { path: "agent" })
      )
    }
    return { code, proposal, agent, lines: consentCodeLines(code, proposal, agent) }
  }).pipe(Effect.withSpan("yea.approve.review"))

/**
 * Signs the one-time consent of a reviewed code with the principal's `Signer`. Refused
 * (`unauthorized`) when the signer is not the principal the request names: the service would
 * select the grant by the proposal's principal (§6.6), so another key's consent could not work.
 */
export const signConsentCode = (review: ConsentCodeReview): Effect.Effect<string, YeaError, Signer | RandomBytes> =>
  Effect.gen(function* () {
    const me = encodeKey((yield* Signer).publicKey)
    if (me !== review.code.consent.principal) {
      return yield* Effect.fail(yeaError("unauthorized", `this consent is asked of principal ${review.code.consent.principal}, not of this key (${me})`, { path: "principal" }))
    }
    return yield* issueConsentGrant(review.code.consent, review.agent)
  }).pipe(Effect.withSpan("yea.approve.sign"))
