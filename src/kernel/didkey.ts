/**
 * did:key identifiers for Ed25519 (Writ v0.1 section 1.3): `did:key:z` + base58btc of the
 * multicodec prefix 0xed 0x01 and the 32-byte public key. The identifier is the key; a string that
 * is not exactly such an identifier of an acceptable key (canonical point, not small order) is not
 * a key at all.
 */
import { Option } from "effect"
import { decodeBase58, encodeBase58 } from "./base58.js"
import { isAcceptablePublicKey } from "./ed25519.js"

const PREFIX = "did:key:z"

export const didKeyFromPublicKey = (pub: Uint8Array): string => {
  const body = new Uint8Array(34)
  body[0] = 0xed
  body[1] = 0x01
  body.set(pub, 2)
  return PREFIX + encodeBase58(body)
}

// Decoding the same identifier recurs for every object a key signs; results are cached (bounded).
const cache = new Map<string, Option.Option<Uint8Array>>()
const CACHE_MAX = 10_000

const decodeUncached = (s: string): Option.Option<Uint8Array> => {
  if (!s.startsWith(PREFIX)) return Option.none()
  const body = decodeBase58(s.slice(PREFIX.length))
  if (body === undefined || body.length !== 34 || body[0] !== 0xed || body[1] !== 0x01) return Option.none()
  const pub = body.slice(2)
  // Only one spelling per key: the re-encoding must be the input (no extra leading '1's).
  if (didKeyFromPublicKey(pub) !== s) return Option.none()
  if (!isAcceptablePublicKey(pub)) return Option.none()
  return Option.some(pub)
}

/** The public key named by `s`, or None when `s` is not a valid Ed25519 did:key. */
export const publicKeyFromDidKey = (s: string): Option.Option<Uint8Array> => {
  const hit = cache.get(s)
  if (hit !== undefined) return hit
  const r = decodeUncached(s)
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!)
  cache.set(s, r)
  return r
}

export const isDidKey = (s: unknown): s is string => typeof s === "string" && Option.isSome(publicKeyFromDidKey(s))
