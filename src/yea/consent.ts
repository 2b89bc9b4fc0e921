// Consent (SPEC §6.6): a principal's one-shot approval of one proposal, as a root grant with exactly
// the five scoping caveats [{svc}, {verbs: ["COMMIT"]}, {can}, {only: hash}, {exp}]. Without the
// scoping caveats a consent grant would authorize every other verb until it expired (design.md,
// "Consent is just a grant"), so they are built here and nowhere else.
import { Effect, Either, Option } from "effect"
import { decodeBase64url, encodeBase64url } from "../kernel/base64url.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { canonicalBytes, readCanonical } from "./canonical.js"
import { issueRootGrant } from "./grant.js"
import { hashedPart, proposalHash, type Proposal } from "./proposal.js"
import { ConsentRequest, yeaError, type YeaError } from "./reason.js"
import { Schema } from "effect"

export { ConsentRequest } from "./reason.js"

/** The five caveats of a consent grant, in the order §6.6 lists them. */
export const consentCaveats = (c: ConsentRequest) =>
  [{ svc: [c.service] }, { verbs: ["COMMIT"] }, { can: [c.capability] }, { only: c.hash }, { exp: c.expires }] as const

/** The `consent` a service sends with `consent_required` for `proposal` (§6.6). */
export const consentRequestFor = (proposal: Proposal, service: string, principal: string): ConsentRequest => ({
  proposal: proposal.id,
  hash: proposal.hash,
  service,
  capability: proposal.capability,
  principal,
  summary: proposal.summary,
  expires: proposal.expires
})

/**
 * §6.6: the agent's tooling MUST check that the consent request's proposal, hash, service and
 * capability match the proposal it actually received from that service (whose hash must itself
 * verify). A mismatched request is never shown for signing: `conflict`.
 */
export const checkConsentRequest = (
  request: unknown,
  shown: Proposal,
  service: string
): Either.Either<ConsentRequest, YeaError> =>
  Either.gen(function* () {
    const c = yield* Either.mapLeft(Schema.decodeUnknownEither(ConsentRequest)(request), () =>
      yeaError("bad_frame", "malformed consent request")
    )
    const h = proposalHash(shown)
    if (Either.isLeft(h) || h.right !== shown.hash) return yield* Either.left(yeaError("conflict", "the shown proposal's hash does not verify"))
    if (c.proposal !== shown.id || c.hash !== shown.hash || c.service !== service || c.capability !== shown.capability) {
      return yield* Either.left(yeaError("conflict", "the consent request does not match the proposal this service sent"))
    }
    return c
  })

/**
 * The principal (the `Signer`) signs a consent grant for `agent`: a root grant with exactly the five
 * scoping caveats. Built from a request already checked against the shown proposal.
 */
export const issueConsentGrant = (
  request: ConsentRequest,
  agent: string
): Effect.Effect<string, YeaError, Signer | RandomBytes> => issueRootGrant({ sub: agent, caveats: consentCaveats(request) })

// ---------------------------------------------------------------------------------------------
// Consent codes (`pc1.`): the approval request handed to `approve` when a client can't ask.

export const CONSENT_CODE_PREFIX = "pc1."

export interface ConsentCode {
  readonly consent: ConsentRequest
  /** The proposal shown, without `data` (it keeps its `hash`). */
  readonly detail: Readonly<Record<string, unknown>>
  /** The agent key the consent grant will be issued to. */
  readonly agent: string
}

/** `pc1.` + b64url(canonical({agent, capability, detail, expires, hash, principal, proposal, service, summary})). */
export const encodeConsentCode = (code: ConsentCode): Either.Either<string, YeaError> => {
  const detail: Record<string, unknown> = { ...hashedPart(code.detail) }
  if (typeof code.detail.hash === "string") detail.hash = code.detail.hash
  return Either.map(
    Either.mapLeft(canonicalBytes({ ...code.consent, agent: code.agent, detail }), (e) => yeaError("invalid_params", e.message)),
    (b) => CONSENT_CODE_PREFIX + encodeBase64url(b)
  )
}

/** Reads a `pc1.` code strictly (canonical base64url of canonical JSON). */
export const decodeConsentCode = (s: string): Either.Either<ConsentCode, YeaError> =>
  Either.gen(function* () {
    const bad = (m: string) => yeaError("invalid_params", `consent code: ${m}`)
    if (!s.startsWith(CONSENT_CODE_PREFIX)) return yield* Either.left(bad("it starts with pc1."))
    const bytes = decodeBase64url(s.slice(CONSENT_CODE_PREFIX.length))
    if (Option.isNone(bytes)) return yield* Either.left(bad("not canonical base64url"))
    const v = yield* Either.mapLeft(readCanonical(bytes.value), (e) => bad(e.message))
    if (typeof v !== "object" || v === null || Array.isArray(v)) return yield* Either.left(bad("not an object"))
    const o = v as Record<string, unknown>
    const consent = yield* Either.mapLeft(Schema.decodeUnknownEither(ConsentRequest)(o), () => bad("malformed consent"))
    if (typeof o.agent !== "string") return yield* Either.left(bad("agent missing"))
    const detail = o.detail
    if (typeof detail !== "object" || detail === null || Array.isArray(detail)) return yield* Either.left(bad("detail missing"))
    return { consent, agent: o.agent, detail: detail as Record<string, unknown> }
  })
