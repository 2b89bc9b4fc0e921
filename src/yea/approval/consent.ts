// Consents when the client can't ask (SPEC-approval §6, approval.json `consents`, `consentCode`).
//
// A job outside the policy, on a client without forms, returns a one-time approval code per plan:
//
//   pc1. b64url(canonical({capability, detail: {job, phrase}, expires, hash, principal, proposal,
//                          service, summary}))
//
// where `job` is exactly the plan hash's preimage (plan.ts), so `yea approve` can re-hash what it
// shows. Approving signs a consent grant, a single root block from the pinned principal to this
// server with exactly the five scoping caveats of SPEC §6.6 (`only` the plan hash), and writes it to
// the store under the plan hash. On the next identical call the server checks it, consumes its id
// once, and runs that plan and only it. Nothing else counts as a consent: a delegation by the server
// key, a copy of the policy grant, or a consent for another plan.
import { Effect, Either, Option, Predicate } from "effect"
import { decodeBase64url, encodeBase64url } from "../../kernel/base64url.js"
import { hashB64 } from "../../kernel/hash.js"
import { unixSeconds } from "../../kernel/clock.js"
import { RandomBytes, Signer } from "../../kernel/services.js"
import { canonical, canonicalBytes, readCanonical } from "../canonical.js"
import { consentCaveats } from "../consent.js"
import { decodeGrant, issueRootGrant, verifyChain, type Grant } from "../grant.js"
import { encodeKey } from "../keys.js"
import { grantReason } from "../grant-reason.js"
import { planPreimage, type HashedPlan } from "./plan.js"
import { phraseMatches } from "./phrase.js"
import { ApprovalStore } from "./store.js"
import { consentInvalid, invalidInput, type ConsentInvalid, type InvalidInput } from "./reason.js"

export const JOB_CODE_PREFIX = "pc1."
/** How long an approval code (and the consent it leads to) stays good. */
export const CONSENT_TTL_SECONDS = 600

export interface JobConsentCodeInput {
  readonly server: string
  readonly principal: string
  readonly input: unknown
  readonly plan: HashedPlan
  readonly phrase: string
  readonly now: number
}

/** The approval code of one plan (§6). */
export const jobConsentCode = (c: JobConsentCodeInput): Effect.Effect<string, InvalidInput> => {
  const p = c.plan
  const body = {
    capability: p.tool,
    detail: { job: planPreimage(p.tool, c.input, p.plan, p.risk), phrase: c.phrase },
    expires: c.now + CONSENT_TTL_SECONDS,
    hash: p.planHash,
    principal: c.principal,
    proposal: p.planHash,
    service: c.server,
    summary: p.plan.summary
  }
  return Either.match(canonicalBytes(body), {
    onLeft: (e) => Effect.fail(invalidInput(`approval code: ${e.message}`)),
    onRight: (b) => Effect.succeed(JOB_CODE_PREFIX + encodeBase64url(b))
  })
}

/** A decoded approval code whose job re-hashes to its hash: what `yea approve` shows. */
export interface JobConsentRequest {
  readonly capability: string
  readonly job: Readonly<Record<string, unknown>>
  readonly phrase: string
  readonly expires: number
  readonly hash: string
  readonly principal: string
  readonly service: string
  readonly summary: string
}

/** Reads an approval code strictly and re-hashes its job: a code whose job isn't its hash is refused. */
export const decodeJobConsentCode = (code: string): Effect.Effect<JobConsentRequest, ConsentInvalid> =>
  Effect.gen(function* () {
    const bad = (m: string) => Effect.fail(consentInvalid(`approval code: ${m}`))
    if (!code.startsWith(JOB_CODE_PREFIX)) return yield* bad("it starts with pc1.")
    const bytes = decodeBase64url(code.slice(JOB_CODE_PREFIX.length))
    if (Option.isNone(bytes)) return yield* bad("not canonical base64url")
    const v = readCanonical(bytes.value)
    if (Either.isLeft(v) || !Predicate.isRecord(v.right)) return yield* bad("not canonical JSON")
    const o = v.right as Record<string, unknown>
    const d = o.detail
    const strings = ["capability", "hash", "principal", "proposal", "service", "summary"] as const
    if (!strings.every((k) => typeof o[k] === "string") || typeof o.expires !== "number" || !Predicate.isRecord(d) || !Predicate.isRecord(d.job) || typeof d.phrase !== "string") {
      return yield* bad("a member is missing")
    }
    const job = d.job as Record<string, unknown>
    const h = canonicalBytes(job)
    if (Either.isLeft(h) || hashB64(h.right) !== o.hash || o.proposal !== o.hash || job.tool !== o.capability || job.summary !== o.summary) {
      return yield* bad("the plan shown does not hash to the code's plan hash")
    }
    return {
      capability: o.capability as string,
      job,
      phrase: d.phrase,
      expires: o.expires,
      hash: o.hash as string,
      principal: o.principal as string,
      service: o.service as string,
      summary: o.summary as string
    }
  })

const NOT_FOR_PLAN = "not a consent for this plan"

const isExactly = (caveats: ReadonlyArray<unknown>, want: ReadonlyArray<unknown>): boolean =>
  caveats.length === want.length && caveats.every((c, i) => Either.getOrUndefined(canonical(c)) === Either.getOrUndefined(canonical(want[i])))

export interface ConsentCheck {
  readonly plan: HashedPlan
  readonly principal: string | undefined
  readonly server: string
  readonly now: number
}

/**
 * §6: `grant` approves exactly this plan at this server: one root block from the pinned
 * principal to the server key, with the five scoping caveats and `only` this plan hash, unexpired.
 * Succeeds with the grant id, the key `consumeOnce` spends it under.
 */
export const checkJobConsent = (token: string, c: ConsentCheck): Effect.Effect<{ readonly id: string; readonly exp: number }, ConsentInvalid> =>
  Effect.gen(function* () {
    const decoded = decodeGrant(token)
    if (Either.isLeft(decoded)) return yield* Effect.fail(consentInvalid(NOT_FOR_PLAN))
    const g: Grant = decoded.right
    const exp = g.root.caveats.length === 5 ? (g.root.caveats[4] as { exp?: unknown }).exp : undefined
    if (g.blocks.length !== 1 || typeof exp !== "number" || g.holder !== c.server) return yield* Effect.fail(consentInvalid(NOT_FOR_PLAN))
    const want = consentCaveats({ service: c.server, capability: c.plan.tool, hash: c.plan.planHash, expires: exp, proposal: c.plan.planHash, principal: "", summary: "" })
    if (!isExactly(g.root.caveats, want)) return yield* Effect.fail(consentInvalid(NOT_FOR_PLAN))
    if (Either.isLeft(verifyChain(g, { trusted: [g.principal], proofKey: g.holder }))) {
      return yield* Effect.fail(consentInvalid(grantReason.badSignature))
    }
    if (c.principal === undefined || g.principal !== c.principal) {
      return yield* Effect.fail(consentInvalid(grantReason.untrusted))
    }
    if (!(c.now < exp)) return yield* Effect.fail(consentInvalid(grantReason.expired))
    return { id: g.id, exp }
  })

/**
 * `yea approve <code>` as a library function: the principal (the `Signer`) signs the consent grant
 * for the code's plan, to the code's server. The CLI shows `request` to the person and asks for the
 * phrase before calling this; the caller writes the result with `ApprovalStore.putConsent(hash, grant)`.
 * Refuses a code for another principal (the signer's key must be the code's) or already expired.
 */
export const signJobConsent = (request: JobConsentRequest): Effect.Effect<string, ConsentInvalid, Signer | RandomBytes> =>
  Effect.gen(function* () {
    const signer = yield* Signer
    if (encodeKey(signer.publicKey) !== request.principal) return yield* Effect.fail(consentInvalid("this code asks another principal to approve"))
    if (!((yield* unixSeconds) < request.expires)) return yield* Effect.fail(consentInvalid("this approval code has expired; call the tool again"))
    const caveats = consentCaveats({ service: request.service, capability: request.capability, hash: request.hash, expires: request.expires, proposal: request.hash, principal: request.principal, summary: request.summary })
    return yield* Effect.mapError(
      issueRootGrant({ sub: request.service, caveats, nonce: `c-${request.hash.slice(0, 6)}-${request.expires}` }),
      (e) => consentInvalid(e.message)
    )
  })

/**
 * What `mandate yea approve <pc1.code>` must call for a job's approval code (the CLI reads the
 * person's typed phrase after showing `decodeJobConsentCode(code)`): the phrase must match, then
 * the principal signs the consent and it is written to the store the server reads.
 */
export const approveJobCode = (code: string, typed: string) =>
  Effect.gen(function* () {
    const request = yield* decodeJobConsentCode(code)
    if (!phraseMatches(typed, request.phrase)) return yield* Effect.fail(consentInvalid(`not approved: type "${request.phrase}" exactly to approve`))
    const grant = yield* signJobConsent(request)
    yield* (yield* ApprovalStore).putConsent(request.hash, grant)
    return { request, grant }
  })
