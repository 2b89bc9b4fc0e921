/**
 * base58btc (the Bitcoin alphabet), as did:key's multibase `z` prefix uses it.
 *
 * Base conversion costs time quadratic in the length of its input, so the decoder takes the longest
 * input its caller's type allows and refuses anything longer before reading a character (a
 * did:key of 50,000 characters once cost most of a second). Within that bound the work is a
 * fixed number of byte operations per character: O(maxChars^2) at worst, a constant per call.
 */
const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
const INDEX: ReadonlyArray<number> = (() => {
  const t = new Array<number>(128).fill(-1)
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i
  return t
})()

export const encodeBase58 = (bytes: Uint8Array): string => {
  let zeros = 0
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++
  // Big-endian base-58 digits, least significant last; at most 138/100 digits per byte.
  const digits = new Uint8Array(Math.ceil(((bytes.length - zeros) * 138) / 100) + 1)
  let len = 0
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]
    for (let j = 0; j < len; j++) {
      carry += digits[j] << 8
      digits[j] = carry % 58
      carry = (carry / 58) | 0
    }
    while (carry > 0) {
      digits[len++] = carry % 58
      carry = (carry / 58) | 0
    }
  }
  let out = "1".repeat(zeros)
  for (let j = len - 1; j >= 0; j--) out += ALPHABET[digits[j]]
  return out
}

/**
 * The bytes of `s`, or undefined when `s` is longer than `maxChars` (refused before it is read) or
 * has a character outside the alphabet.
 */
export const decodeBase58 = (s: string, maxChars: number): Uint8Array | undefined => {
  if (s.length > maxChars) return undefined
  let zeros = 0
  while (zeros < s.length && s.charCodeAt(zeros) === 0x31) zeros++
  // Little-endian bytes of the value; base 58 needs at most 733/1000 bytes per character.
  const bytes = new Uint8Array(Math.ceil(((s.length - zeros) * 733) / 1000) + 1)
  let len = 0
  for (let i = zeros; i < s.length; i++) {
    const c = s.charCodeAt(i)
    const v = c < 128 ? INDEX[c] : -1
    if (v < 0) return undefined
    let carry = v
    for (let j = 0; j < len; j++) {
      carry += bytes[j] * 58
      bytes[j] = carry & 0xff
      carry >>= 8
    }
    while (carry > 0) {
      bytes[len++] = carry & 0xff
      carry >>= 8
    }
  }
  const out = new Uint8Array(zeros + len)
  for (let j = 0; j < len; j++) out[zeros + j] = bytes[len - 1 - j]
  return out
}
