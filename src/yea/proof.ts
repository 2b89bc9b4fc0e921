// Proof of possession (SPEC §6.5): a request that carries grants also carries
// `proof: {key, ts, sig}`, where `sig` signs utf8(canonical({aud, verb, target, ts})) with the holder
// key. A leaked grant is useless without it; `ts` bounds replay to ±300 s of the service's clock.
import { Effect, Either, Option, Schema } from "effect"
import { verifyWithKeyObject } from "../kernel/ed25519.js"
import { Signer } from "../kernel/services.js"
import { type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"
import { canonicalBytes } from "./canonical.js"
import { decodeSignature, encodeKey, encodeSignature, verifyingKeyOf } from "./keys.js"
import { yeaError, type YeaError } from "./reason.js"
import type { Verb } from "./verb.js"
import { unixSeconds } from "../kernel/clock.js"

/** §6.5: services MUST reject proofs with |now − ts| > 300. */
export const PROOF_WINDOW_SECONDS = 300

/** The `proof` member of a request (§3, §6.5). Unknown members are ignored (§2.1). */
export const Proof = Schema.Struct({
  key: Schema.String,
  ts: Schema.Int,
  sig: Schema.String
}).annotations({ identifier: "Proof" })
export type Proof = typeof Proof.Type

/** What the proof is bound to, per verb (§6.5 table). */
export type ProofSubject =
  | { readonly verb: "COMMIT"; readonly hash: string }
  | { readonly verb: "UNDO"; readonly receipt: string }
  | { readonly verb: "ASK"; readonly capability: string }
  | { readonly verb: "INTENT"; readonly capability: string; readonly auto?: false }
  | { readonly verb: "INTENT"; readonly capability: string; readonly auto: true; readonly frameId: string }
  | { readonly verb: "EXPAND"; readonly handle: string }

/** The §6.5 target string for a subject. */
export const proofTarget = (s: ProofSubject): string => {
  switch (s.verb) {
    case "COMMIT": return s.hash // the proposal hash
    case "UNDO": return s.receipt // the receipt id
    case "ASK": return s.capability
    case "INTENT": return s.auto === true ? `auto:${s.capability}:${s.frameId}` : s.capability
    case "EXPAND": return s.handle
  }
}

/**
 * The subject of a request frame, or None for a frame with no proof target (HELLO, or a frame
 * missing the member its verb binds). Reads only the members §6.5 names.
 */
export const subjectOfFrame = (frame: Readonly<Record<string, unknown>>): Option.Option<ProofSubject> => {
  const str = (k: string): string | undefined => (typeof frame[k] === "string" ? (frame[k] as string) : undefined)
  const verb = frame.verb
  if (verb === "COMMIT") return Option.fromNullable(str("hash")).pipe(Option.map((hash) => ({ verb, hash })))
  if (verb === "UNDO") return Option.fromNullable(str("receipt")).pipe(Option.map((receipt) => ({ verb, receipt })))
  if (verb === "EXPAND") return Option.fromNullable(str("handle")).pipe(Option.map((handle) => ({ verb, handle })))
  if (verb === "ASK") return Option.fromNullable(str("capability")).pipe(Option.map((capability) => ({ verb, capability })))
  if (verb === "INTENT") {
    const capability = str("capability")
    if (capability === undefined) return Option.none()
    if (frame.auto === true) {
      const frameId = str("id")
      return frameId === undefined ? Option.none() : Option.some({ verb, capability, auto: true, frameId })
    }
    return Option.some({ verb, capability })
  }
  return Option.none()
}

/** utf8(canonical({aud, verb, target, ts})): the signed bytes. Fails when a string has no UTF-8 form. */
export const proofMessage = (aud: string, verb: Verb, target: string, ts: number) =>
  canonicalBytes({ aud, verb, target, ts })

/** Signs a proof for `aud` and `subject` at the current Clock second with the `Signer` key. */
export const signProof = (aud: string, subject: ProofSubject): Effect.Effect<Proof, YeaError, Signer> =>
  Effect.gen(function* () {
    const signer = yield* Signer
    const ts = yield* unixSeconds
    const msg = proofMessage(aud, subject.verb, proofTarget(subject), ts)
    if (Either.isLeft(msg)) return yield* Effect.fail(yeaError("invalid_params", `proof message: ${msg.left.message}`))
    const sig = yield* signer.sign(msg.right)
    return { key: encodeKey(signer.publicKey), ts, sig: encodeSignature(sig) }
  })

/** A verified proof: the holder key (canonical `ed25519:` string) and its bytes. */
export interface VerifiedProof {
  readonly key: string
  readonly publicKey: Uint8Array
  readonly ts: number
}

const unauthorized = (message: string, path = "proof") => yeaError("unauthorized", message, { path })

/**
 * Verifies `proof` for a request to service `aud` (its `service.id`, §4.1) about `subject`.
 * Every failure is `unauthorized` (§7: "missing or invalid grant or proof").
 */
export const verifyProof = (
  proof: unknown,
  aud: string,
  subject: ProofSubject
): Effect.Effect<VerifiedProof, YeaError> =>
  Effect.flatMap(unixSeconds, (now) => Effect.flatMap(verificationCacheSync, (cache) => verifyProofAt(proof, aud, subject, now, cache)))

/**
 * {@link verifyProof} as a plain function, at `now` (unix seconds, the service's clock) and with
 * keys judged through `cache` (or afresh): for a caller that read both once at its entry point.
 */
export const verifyProofAt = (
  proof: unknown,
  aud: string,
  subject: ProofSubject,
  now: number,
  cache: VerificationCacheSync | undefined
): Either.Either<VerifiedProof, YeaError> => {
  // Shape: {key: string, ts: int, sig: string}.
  const p = decodeProof(proof)
  if (Option.isNone(p)) return Either.left(unauthorized("proof must be {key, ts, sig} with an integer ts"))
  const { key, ts, sig } = p.value
  // §6.1: the key is `ed25519:` + canonical base64url of 32 bytes, a usable key (judged once per
  // key when a VerificationCache is in context: an agent's proof key recurs on every request).
  const publicKey = verifyingKeyOf(key, cache)
  if (Option.isNone(publicKey)) return Either.left(unauthorized("proof.key is not a canonical ed25519 key", "proof.key"))
  // §6.1: the signature is canonical base64url of 64 bytes (GHSA-8mvj-4xpr-rmqw).
  const sigBytes = decodeSignature(sig)
  if (Option.isNone(sigBytes)) return Either.left(unauthorized("proof.sig is not a canonical 64-byte base64url signature", "proof.sig"))
  // §6.5: |now − ts| ≤ 300, against the service's clock. Checked before the signature (cheap first).
  if (Math.abs(now - ts) > PROOF_WINDOW_SECONDS) {
    return Either.left(unauthorized(`proof.ts is ${now - ts} s from now (allowed ±${PROOF_WINDOW_SECONDS})`, "proof.ts"))
  }
  // §6.5: sig over utf8(canonical({aud, verb, target, ts})).
  const msg = proofMessage(aud, subject.verb, proofTarget(subject), ts)
  if (Either.isLeft(msg)) return Either.left(unauthorized(`proof target has no canonical form: ${msg.left.message}`))
  if (!verifyWithKeyObject(publicKey.value.object, msg.right, sigBytes.value)) return Either.left(unauthorized("proof signature does not verify", "proof.sig"))
  return Either.right({ key, publicKey: publicKey.value.publicKey, ts })
}

const decodeProof = Schema.decodeUnknownOption(Proof)
