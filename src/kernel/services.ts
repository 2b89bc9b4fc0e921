/**
 * The services through which protocol code reaches keys and randomness. Nothing reads a key file,
 * `Math.random` or the wall clock directly: time is Effect's `Clock` (tests use `TestClock`),
 * randomness is `RandomBytes`, and signing is `Signer`, each provided by a Layer.
 */
import { Context, Effect, Layer } from "effect"
import { randomFillSync } from "node:crypto"
import { signerFromSeed } from "./ed25519.js"
import { sha256 } from "./hash.js"

export interface SignerShape {
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array
  readonly sign: (message: Uint8Array) => Effect.Effect<Uint8Array>
}

/** The key this process signs with (the executor's key, an agent's key). */
export class Signer extends Context.Tag("mandate/Signer")<Signer, SignerShape>() {
  /** A signer for a 32-byte seed (deterministic: used by tests and by key files). */
  static make(seed: Uint8Array): SignerShape {
    const s = signerFromSeed(seed)
    return { publicKey: s.publicKey, sign: (m) => Effect.sync(() => s.sign(m)) }
  }
  static fromSeed(seed: Uint8Array): Layer.Layer<Signer> {
    return Layer.sync(Signer, () => Signer.make(seed))
  }
}

/** How many bytes {@link RandomBytes.live} draws from the system at a time. */
export const RANDOM_POOL_BYTES = 4096

export interface RandomBytesShape {
  readonly bytes: (n: number) => Effect.Effect<Uint8Array>
}

/** Randomness for nonces and ids. */
export class RandomBytes extends Context.Tag("mandate/RandomBytes")<RandomBytes, RandomBytesShape>() {
  /** Cryptographic randomness from the operating system, drawn {@link RANDOM_POOL_BYTES} at a
   * time into a pool this service owns (each Layer build its own): the ids of every YEA reply and
   * receipt each took a call into the system's generator (issue 30: 2 to 3% of a COMMIT). */
  static readonly live: Layer.Layer<RandomBytes> = Layer.sync(RandomBytes, () => RandomBytes.pooled(RANDOM_POOL_BYTES))
  /** Randomness from the operating system through a pool of `size` bytes; every byte is handed out
   * once, as a copy, and the pool is refilled when it runs out. */
  static pooled(size: number): RandomBytesShape {
    const pool = new Uint8Array(size)
    let at = size
    const take = (n: number): Uint8Array => {
      if (n > size) return randomFillSync(new Uint8Array(n))
      if (at + n > size) {
        randomFillSync(pool)
        at = 0
      }
      const out = pool.slice(at, at + n)
      at += n
      return out
    }
    return { bytes: (n) => Effect.sync(() => take(n)) }
  }
  /**
   * A deterministic stream for tests and fixed-seed corpora: SHA-256 in counter mode over the seed.
   * Not for production nonces.
   */
  static seeded(seed: Uint8Array): Layer.Layer<RandomBytes> {
    return Layer.sync(RandomBytes, () => RandomBytes.deterministic(seed))
  }
  static deterministic(seed: Uint8Array): RandomBytesShape {
    let counter = 0
    return {
      bytes: (n) =>
        Effect.sync(() => {
          const out = new Uint8Array(n)
          let off = 0
          while (off < n) {
            const block = new Uint8Array(seed.length + 8)
            block.set(seed)
            new DataView(block.buffer).setBigUint64(seed.length, BigInt(counter++))
            const h = sha256(block)
            const take = Math.min(h.length, n - off)
            out.set(h.subarray(0, take), off)
            off += take
          }
          return out
        })
    }
  }
}
