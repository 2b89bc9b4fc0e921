/**
 * Canonical base64url (RFC 4648 section 5, no padding). Writ v0.1 section 1.1 rule 5 and YEA's
 * security review (GHSA: several strings decoding to one key) both require that every byte string
 * has exactly one accepted encoding, so decoding refuses anything that does not re-encode to itself.
 *
 * Whether a string is canonical, and how many bytes it holds, is read from its characters without
 * decoding it (one pass, no allocation), so a verifier can judge a member's length before it
 * decodes anything.
 */
import { Option } from "effect"

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const VALUE: ReadonlyArray<number> = (() => {
  const t = new Array<number>(128).fill(-1)
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i
  return t
})()

export const encodeBase64url = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url")

/**
 * The number of bytes `s` encodes, or None when `s` is empty, has padding or a character outside
 * the alphabet, has a length congruent to 1 modulo 4, or has non-zero trailing bits.
 */
export const base64urlLength = (s: string): Option.Option<number> => {
  const rem = s.length % 4
  if (s.length === 0 || rem === 1) return Option.none()
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 128 || VALUE[c] < 0) return Option.none()
  }
  // The last character of a 2- or 3-character group carries 4 or 2 bits that must be zero.
  const last = VALUE[s.charCodeAt(s.length - 1)]
  if ((rem === 2 && (last & 0x0f) !== 0) || (rem === 3 && (last & 0x03) !== 0)) return Option.none()
  return Option.some(Math.floor((s.length * 3) / 4))
}

/** The bytes of `s`, or None when `s` is not canonical base64url (see {@link base64urlLength}). */
export const decodeBase64url = (s: string): Option.Option<Uint8Array> =>
  Option.map(base64urlLength(s), () => {
    const buf = Buffer.from(s, "base64url")
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
  })

export const isCanonicalBase64url = (s: string): boolean => Option.isSome(base64urlLength(s))
