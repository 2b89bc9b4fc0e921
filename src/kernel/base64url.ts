/**
 * Canonical base64url (RFC 4648 section 5, no padding). Writ v0.1 section 1.1 rule 5 and YEA's
 * security review (GHSA: several strings decoding to one key) both require that every byte string
 * has exactly one accepted encoding, so decoding refuses anything that does not re-encode to itself.
 */
import { Option } from "effect"

const ALPHABET = /^[A-Za-z0-9_-]+$/

export const encodeBase64url = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url")

/**
 * The bytes of `s`, or None when `s` is empty, has padding or a character outside the alphabet, has
 * a length congruent to 1 modulo 4, or has non-zero trailing bits.
 */
export const decodeBase64url = (s: string): Option.Option<Uint8Array> => {
  if (s.length === 0 || s.length % 4 === 1 || !ALPHABET.test(s)) return Option.none()
  const buf = Buffer.from(s, "base64url")
  // Re-encoding catches non-zero trailing bits, the only remaining non-canonical form.
  if (buf.toString("base64url") !== s) return Option.none()
  return Option.some(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength))
}

export const isCanonicalBase64url = (s: string): boolean => Option.isSome(decodeBase64url(s))
