// What every implementation in `npm run bench -- peers` shares: the chain it is asked to build (the
// same keys, the same expiry ladder, one amount narrowed at each link, a nonce per link), the
// clock reading every verifier is given, the shape of a peer, and the rate loops.
import { performance } from "node:perf_hooks"
import { key, type Key } from "../../test/support/writ-builders.js"

/** The depths measured: a chain of n links carries n signatures in every implementation. */
export const DEPTHS = [1, 2, 4, 8] as const

/** Keys 0..8 from fixed seeds (the test builders' deterministic stream): link i is issued by key
 * i to key i + 1. Every implementation derives its keys from these same 32-byte seeds. */
export const KEYS: ReadonlyArray<Key> = Array.from({ length: 9 }, (_, i) => key(`bench-peers-link${i}`))

/** The root's expiry (unix seconds); each link below it expires 600 s earlier (narrowed). */
export const ROOT_EXP = 1_900_000_000
export const EXP_STEP = 600
/** The "now" handed to every verifier that takes one: 12 hours before the root expires, so
 * section 12's 24-hour root lifetime holds for Writ and every link is still in force. */
export const NOW = ROOT_EXP - 43_200
/** The root grants up to this amount; link i narrows it to AMOUNT - i. */
export const AMOUNT = 60_000

export const expOf = (i: number): number => ROOT_EXP - i * EXP_STEP

/** The amount link i of n grants: AMOUNT - i, or `leafAmount` for the leaf when a test asks for
 * a leaf that widens its parent (or grants less than a request needs). The bench never sets it. */
export const amountOf = (i: number, n: number, leafAmount?: number): number => (i === n - 1 && leafAmount !== undefined ? leafAmount : AMOUNT - i)

/** A link's nonce: unique per (implementation, depth, chain, link), so no two tokens share a
 * signed payload and nothing verified once can be answered from a cache later. Fixed width, so
 * every token of one implementation and depth has the same length. */
export const nonceOf = (peer: string, n: number, c: number, i: number): string => `${peer}-${n}-${String(c).padStart(8, "0")}-${i}-nonce`

/** A built token: its wire bytes, and where in them one byte of the leaf's signature and one byte
 * of the leaf's signed payload (its nonce) lie, for the tamper check. */
export interface Token {
  readonly bytes: Uint8Array
  readonly sigAt: number
  readonly payloadAt: number
}

/** One implementation: builds chain number `c` of depth `n` from the fixed seeds, and verifies a
 * token from its bytes, returning when it is accepted and throwing (or rejecting) when it is
 * refused. Synchronous verifiers are timed by `rateSync`, asynchronous ones by `rateAsync`. */
export type Peer = {
  readonly name: string
  readonly build: (n: number, c: number, leafAmount?: number) => Promise<Token>
} & ({ readonly sync: true; readonly verify: (bytes: Uint8Array) => void } | { readonly sync: false; readonly verify: (bytes: Uint8Array) => Promise<void> })

/** Where `needle` (ASCII) occurs in `hay`, from the end; -1 when absent. */
export const lastIndexOf = (hay: Uint8Array, needle: Uint8Array): number => {
  outer: for (let i = hay.length - needle.length; i >= 0; i--) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer
    return i
  }
  return -1
}

/** The offset `plus` bytes into the last occurrence of `needle` in `hay`; throws when absent, so a
 * tamper check can never flip a byte it did not mean to. */
export const offsetIn = (hay: Uint8Array, needle: Uint8Array, plus: number): number => {
  const i = lastIndexOf(hay, needle)
  if (i < 0 || plus >= needle.length) throw new Error("tamper target not found in the token")
  return i + plus
}

export const ascii = (s: string): Uint8Array => new TextEncoder().encode(s)

/** A copy of `bytes` with the byte at `at` changed: a letter or digit becomes another letter (so
 * text encodings such as base64url stay well-formed and only the meaning changes), any other byte
 * has its lowest bit flipped. */
export const flip = (bytes: Uint8Array, at: number): Uint8Array => {
  if (at < 0 || at >= bytes.length) throw new Error(`tamper offset ${at} outside a token of ${bytes.length} bytes`)
  const out = new Uint8Array(bytes)
  const b = out[at]
  const alnum = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
  out[at] = alnum ? (b === 0x41 ? 0x42 : 0x41) : b ^ 1
  return out
}

/** Operations per second of a synchronous `op`, run until `ms` pass or `limit` ops are done. */
export const rateSync = (ms: number, op: (i: number) => void, limit = Number.POSITIVE_INFINITY): { perSecond: number; count: number } => {
  const start = performance.now()
  let count = 0
  while (count < limit) {
    op(count)
    count++
    if ((count & 3) === 0 && performance.now() - start >= ms) break
  }
  return { perSecond: (count * 1000) / (performance.now() - start), count }
}

/** The same for an asynchronous `op`, awaited one at a time (one verification in flight, as the
 * synchronous ones run). */
export const rateAsync = async (
  ms: number,
  op: (i: number) => Promise<void>,
  limit = Number.POSITIVE_INFINITY
): Promise<{ perSecond: number; count: number }> => {
  const start = performance.now()
  let count = 0
  while (count < limit) {
    await op(count)
    count++
    if ((count & 3) === 0 && performance.now() - start >= ms) break
  }
  return { perSecond: (count * 1000) / (performance.now() - start), count }
}
