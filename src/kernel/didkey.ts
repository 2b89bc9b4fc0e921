/**
 * did:key identifiers for Ed25519 (Writ v0.1 section 1.3): `did:key:z` + base58btc of the
 * multicodec prefix 0xed 0x01 and the 32-byte public key. The identifier is the key; a string that
 * is not exactly such an identifier of an acceptable key (canonical point, not small order) is not
 * a key at all.
 *
 * Every such identifier is `did:key:z6Mk` and 44 more characters, 56 in all: the 34 bytes always
 * encode to 47 base58 digits because they lie between 0xed01 00..00 and 0xed01 ff..ff. So the length and the prefix are
 * checked before anything is decoded (every encoded field is bounded by what its type allows
 * before it is decoded), and the decoder never sees a longer string.
 */
import { Option } from "effect"
import { decodeBase58, encodeBase58 } from "./base58.js"
import { isAcceptablePublicKey } from "./ed25519.js"

const PREFIX = "did:key:z"
/** Section 1.3: every Ed25519 did:key begins with this. */
export const DID_KEY_PREFIX = "did:key:z6Mk"
/** The length of every Ed25519 did:key, in characters. */
export const DID_KEY_LENGTH = 56

export const didKeyFromPublicKey = (pub: Uint8Array): string => {
  const body = new Uint8Array(34)
  body[0] = 0xed
  body[1] = 0x01
  body.set(pub, 2)
  return PREFIX + encodeBase58(body)
}

/** Whether `s` has the length and prefix of an Ed25519 did:key: O(1), nothing decoded. */
export const hasDidKeyShape = (s: string): boolean => s.length === DID_KEY_LENGTH && s.startsWith(DID_KEY_PREFIX)

/** The 32 public-key bytes `s` names, without judging the point, or None. */
export const didKeyBytes = (s: string): Option.Option<Uint8Array> => {
  if (!hasDidKeyShape(s)) return Option.none()
  const body = decodeBase58(s.slice(PREFIX.length), DID_KEY_LENGTH - PREFIX.length)
  if (body === undefined || body.length !== 34 || body[0] !== 0xed || body[1] !== 0x01) return Option.none()
  const pub = body.slice(2)
  // Only one spelling per key: the re-encoding must be the input (no extra leading '1's).
  return didKeyFromPublicKey(pub) === s ? Option.some(pub) : Option.none()
}

/**
 * The public key named by `s`, or None when `s` is not a valid Ed25519 did:key. Uncached: a
 * verifier that sees keys again asks the VerificationCache service instead.
 */
export const publicKeyFromDidKey = (s: string): Option.Option<Uint8Array> => Option.filter(didKeyBytes(s), isAcceptablePublicKey)

export const isDidKey = (s: unknown): s is string => typeof s === "string" && Option.isSome(publicKeyFromDidKey(s))
