// Section 12 (denial of service) and 9.3: anyone can send a call or a revoke, so what a sender
// can make the executor write is bounded by rate per sender. Token buckets by key on Effect's
// Clock (tests set the clock; no wall clock here), bounded in the number of keys they keep.
import { type Clock, Effect } from "effect"

export interface BucketOptions {
  /** Requests a key may make at once. */
  readonly burst: number
  /** Requests per second a key regains, up to `burst`. */
  readonly perSecond: number
  /** Buckets kept before idle (full) ones are dropped. Default 10000. */
  readonly maxKeys?: number
}

export type Take = { readonly ok: true } | { readonly ok: false; readonly retryAfter: number }

export interface Buckets {
  /** Takes one token from `key`'s bucket: `ok`, or how many seconds until one is available. */
  readonly take: (key: string) => Effect.Effect<Take>
  /**
   * Whether `take(key)` would succeed now, taking nothing: a plain function for a hot path that
   * hands the request to the Effect path (which takes the token) when it would.
   */
  readonly wouldTake: (key: string) => boolean
}

interface Bucket {
  tokens: number
  at: number
}

/** Token buckets on `clock`. */
export const tokenBuckets = (options: BucketOptions, clock: Clock.Clock): Buckets => {
  const buckets = new Map<string, Bucket>()
  const maxKeys = options.maxKeys ?? 10_000
  const refill = (b: Bucket, now: number) => {
    const gained = ((now - b.at) / 1000) * options.perSecond
    b.tokens = Math.min(options.burst, b.tokens + Math.max(0, gained))
    b.at = now
  }
  return {
    wouldTake: (key) => {
      const b = buckets.get(key)
      if (b === undefined) return true
      refill(b, clock.unsafeCurrentTimeMillis())
      return b.tokens >= 1
    },
    take: (key) =>
      Effect.map(clock.currentTimeMillis, (now) => {
        let b = buckets.get(key)
        if (b === undefined) {
          if (buckets.size >= maxKeys) {
            // Forget keys whose bucket has refilled: they would start full anyway.
            for (const [k, v] of buckets) {
              refill(v, now)
              if (v.tokens >= options.burst) buckets.delete(k)
            }
          }
          // Still full of busy keys: the newcomer shares one bucket with every other newcomer.
          const k = buckets.size >= maxKeys ? "(overflow)" : key.slice(0)
          b = buckets.get(k) ?? { tokens: options.burst, at: now }
          buckets.set(k, b)
        } else refill(b, now)
        if (b.tokens >= 1) {
          b.tokens -= 1
          return { ok: true } as const
        }
        const wait = options.perSecond > 0 ? Math.ceil((1 - b.tokens) / options.perSecond) : 3600
        return { ok: false, retryAfter: Math.max(1, wait) } as const
      })
  }
}
