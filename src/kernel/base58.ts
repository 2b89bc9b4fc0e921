/** base58btc (the Bitcoin alphabet), as did:key's multibase `z` prefix uses it. */
const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
const INDEX = new Map([...ALPHABET].map((c, i) => [c, i] as const))

export const encodeBase58 = (bytes: Uint8Array): string => {
  let zeros = 0
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  let out = ""
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out
    n /= 58n
  }
  return "1".repeat(zeros) + out
}

/** The bytes of `s`, or undefined when it has a character outside the alphabet. */
export const decodeBase58 = (s: string): Uint8Array | undefined => {
  let zeros = 0
  while (zeros < s.length && s[zeros] === "1") zeros++
  let n = 0n
  for (const c of s) {
    const v = INDEX.get(c)
    if (v === undefined) return undefined
    n = n * 58n + BigInt(v)
  }
  const body: Array<number> = []
  while (n > 0n) {
    body.unshift(Number(n & 0xffn))
    n >>= 8n
  }
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body])
}
