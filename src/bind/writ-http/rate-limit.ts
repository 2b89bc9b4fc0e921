// Section 12 (Denial of service) and 9.3: an executor records every valid revoke, so anyone can
// make it write; it bounds the rate at which it takes revokes from each transport-authenticated
// peer. A token bucket per peer, on Effect's Clock (tests move a TestClock; no wall clock here).
import { Context, Effect, Layer } from "effect"

export interface RateLimitOptions {
  /** Revokes a peer may send at once. */
  readonly burst: number
  /** Revokes per second a peer regains, up to `burst`. */
  readonly perSecond: number
  /** Buckets kept before idle (full) ones are dropped. Default 10000. */
  readonly maxPeers?: number
}

export interface RevokeRateLimitService {
  /** Takes one revoke from `peer`'s allowance: `ok`, or how many seconds until one is available. */
  readonly take: (peer: string) => Effect.Effect<{ readonly ok: true } | { readonly ok: false; readonly retryAfter: number }>
}

export class RevokeRateLimit extends Context.Tag("mandate/bind/RevokeRateLimit")<RevokeRateLimit, RevokeRateLimitService>() {
  /** A limiter on the Clock in context when it is made (so a test's clock drives it). */
  static make(options: RateLimitOptions): Effect.Effect<RevokeRateLimitService> {
    return Effect.map(Effect.clock, (clock) => {
      const buckets = new Map<string, { tokens: number; at: number }>()
      const maxPeers = options.maxPeers ?? 10_000
      const refill = (b: { tokens: number; at: number }, now: number) => {
        const gained = ((now - b.at) / 1000) * options.perSecond
        b.tokens = Math.min(options.burst, b.tokens + Math.max(0, gained))
        b.at = now
      }
      return {
        take: (peer) =>
          Effect.map(clock.currentTimeMillis, (now) => {
            let b = buckets.get(peer)
            if (b === undefined) {
              if (buckets.size >= maxPeers) {
                // Forget peers whose bucket has refilled: they would start full anyway.
                for (const [k, v] of buckets) {
                  refill(v, now)
                  if (v.tokens >= options.burst) buckets.delete(k)
                }
              }
              b = { tokens: options.burst, at: now }
              buckets.set(peer, b)
            } else refill(b, now)
            if (b.tokens >= 1) {
              b.tokens -= 1
              return { ok: true } as const
            }
            const wait = options.perSecond > 0 ? Math.ceil((1 - b.tokens) / options.perSecond) : 3600
            return { ok: false, retryAfter: Math.max(1, wait) } as const
          })
      }
    })
  }
  static layer(options: RateLimitOptions): Layer.Layer<RevokeRateLimit> {
    return Layer.effect(RevokeRateLimit, RevokeRateLimit.make(options))
  }
  /** No limit (tests of other paths, and the benchmark's own revokes). */
  static readonly unlimited: Layer.Layer<RevokeRateLimit> = Layer.succeed(RevokeRateLimit, {
    take: () => Effect.succeed({ ok: true } as const)
  })
}
