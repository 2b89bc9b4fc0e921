// YEA keys (SPEC §6.1): `"ed25519:" + b64url(raw 32-byte key)`, signatures `b64url(64 bytes)`.
//
// Only canonical base64url is accepted, for keys, seeds and signatures alike (security review,
// GHSA-8mvj-4xpr-rmqw): if two spellings decoded to the same signature, a grant block could be
// re-encoded into a new block id and its `total` counted from zero again.
import { Option } from "effect"
import { decodeBase64url, encodeBase64url } from "../kernel/base64url.js"
import { isAcceptablePublicKey, publicKeyFromSeed } from "../kernel/ed25519.js"
import { judgeKeyBytes, type VerificationCacheSync, type VerifyingKey } from "../kernel/verification-cache.js"

export const KEY_PREFIX = "ed25519:"

/** `ed25519:<b64url>` for a 32-byte public key. */
export const encodeKey = (publicKey: Uint8Array): string => KEY_PREFIX + encodeBase64url(publicKey)

/**
 * The 32 key bytes of an `ed25519:` string, or None: wrong prefix, non-canonical base64url, not 32
 * bytes, or not a usable key (not a canonical curve point, or of small order: such a key makes a
 * forged signature verify).
 */
export const decodeKey = (s: unknown): Option.Option<Uint8Array> => Option.filter(decodeKeyText(s), isAcceptablePublicKey)

export const isKey = (s: unknown): s is string => Option.isSome(decodeKey(s))

/**
 * The 32 bytes an `ed25519:` string spells, its form only (prefix, canonical base64url, 32 bytes):
 * whether they are a usable key is judged by {@link decodeKey} or {@link verifyingKeyOf}.
 */
export const decodeKeyText = (s: unknown): Option.Option<Uint8Array> => {
  if (typeof s !== "string" || s.length !== KEY_TEXT_LENGTH || !s.startsWith(KEY_PREFIX)) return Option.none()
  return Option.filter(decodeBase64url(s.slice(KEY_PREFIX.length)), (b) => b.length === 32)
}

/** `ed25519:` and 43 base64url characters. */
export const KEY_TEXT_LENGTH = KEY_PREFIX.length + 43

/**
 * The usable key `s` names, with node's key object to verify under, or None (the rules of
 * {@link decodeKey}). Through `cache` when there is one, so a key that recurs (a principal, an
 * agent's proof key) is decoded and point-checked once: that costs more than the signature check.
 */
export const verifyingKeyOf = (s: unknown, cache: VerificationCacheSync | undefined): Option.Option<VerifyingKey> => {
  if (typeof s !== "string") return Option.none()
  return cache === undefined ? Option.flatMap(decodeKeyText(s), judgeKeyBytes) : cache.named(s, decodeKeyText)
}

/** A 32-byte seed from its canonical base64url, or None. */
export const decodeSeed = (s: unknown): Option.Option<Uint8Array> =>
  typeof s === "string" ? Option.filter(decodeBase64url(s), (b) => b.length === 32) : Option.none()

/** A 64-byte signature from its canonical base64url, or None. */
export const decodeSignature = (s: unknown): Option.Option<Uint8Array> =>
  typeof s === "string" ? Option.filter(decodeBase64url(s), (b) => b.length === 64) : Option.none()

export const encodeSignature = (sig: Uint8Array): string => encodeBase64url(sig)

/** The `ed25519:` public key of a 32-byte seed. */
export const keyFromSeed = (seed: Uint8Array): string => encodeKey(publicKeyFromSeed(seed))

/** The `ed25519:` public key of a base64url seed, or None when the seed is not canonical 32 bytes. */
export const keyFromSeedText = (seed: string): Option.Option<string> => Option.map(decodeSeed(seed), keyFromSeed)
