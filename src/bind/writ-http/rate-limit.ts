// Section 12 (Denial of service) and 9.3: an executor records every valid revoke, so anyone can
// make it write; it bounds the rate at which it takes revokes from each transport-authenticated
// peer (or, without one, each remote address). The allowance is charged by the executor after the
// revoke has verified (section 9.1 steps 1 to 4), never before: a revoke that does not verify
// costs no allowance, so junk cannot starve a genuine revoke. A revoke whose signer is a known
// principal (a root the executor accepts, or an issuer of a chain rooted at one) draws on a
// separate allowance, per peer and signer, which revokes signed by fresh keys cannot drain.
import { Context, Effect, Layer } from "effect"
import { type BucketOptions, type Take, tokenBuckets } from "../../writ/executor/intake.js"
import type { RevokeSigner } from "../../writ/executor/services.js"

export interface RateLimitOptions {
  /** Revokes a peer may send at once. */
  readonly burst: number
  /** Revokes per second a peer regains, up to `burst`. */
  readonly perSecond: number
  /** Buckets kept before idle (full) ones are dropped. Default 10000. */
  readonly maxPeers?: number
  /** The separate allowance of each known principal at each peer. Default: `burst` and `perSecond`. */
  readonly known?: BucketOptions
}

export interface RevokeRateLimitService {
  /** Takes one revoke of `signer` from `peer`'s allowance: `ok`, or seconds until one is available. */
  readonly take: (peer: string, signer: RevokeSigner) => Effect.Effect<Take>
}

export class RevokeRateLimit extends Context.Tag("mandate/bind/RevokeRateLimit")<RevokeRateLimit, RevokeRateLimitService>() {
  /** A limiter on the Clock in context when it is made (so a test's clock drives it). */
  static make(options: RateLimitOptions): Effect.Effect<RevokeRateLimitService> {
    return Effect.map(Effect.clock, (clock) => {
      const general = tokenBuckets({ burst: options.burst, perSecond: options.perSecond, maxKeys: options.maxPeers }, clock)
      const known = tokenBuckets(
        options.known ?? { burst: options.burst, perSecond: options.perSecond, maxKeys: options.maxPeers },
        clock
      )
      return {
        take: (peer, signer) => signer.known ? known.take(`${peer} ${signer.iss}`) : general.take(peer)
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
