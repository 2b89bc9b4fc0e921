// Shared fixtures for the YEA tests: fixed seeds, keys, raw block signing (to build grants the
// issuing API refuses, e.g. malformed caveats), and a one-call `authorize` at a fixed time.
import { Effect, Either, Layer } from "effect"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { sign } from "../../src/kernel/ed25519.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { authorize, type AuthorizeRequest } from "../../src/yea/authorize.js"
import type { TotalsLookup } from "../../src/yea/caveat.js"
import { canonicalBytes } from "../../src/yea/canonical.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { blockId, delegateGrant, issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { decimal } from "../../src/yea/measure.js"
import type { YeaError } from "../../src/yea/reason.js"

export const seed = (b: number): Uint8Array => new Uint8Array(32).fill(b)
export const PRINCIPAL = seed(1)
export const AGENT = seed(2)
export const SUBAGENT = seed(3)
export const MALLORY = seed(4)
export const principalKey = keyFromSeed(PRINCIPAL)
export const agentKey = keyFromSeed(AGENT)
export const subagentKey = keyFromSeed(SUBAGENT)
export const malloryKey = keyFromSeed(MALLORY)

export const NOW = 1_790_000_000

/** Signs `p` with `signerSeed` as a block: {p, s}. No validation: tests build bad blocks with it. */
export const rawBlock = (p: unknown, signerSeed: Uint8Array) => {
  const msg = Either.getOrThrow(canonicalBytes(p))
  return { p, s: encodeBase64url(sign(signerSeed, msg)) }
}

export const rawToken = (blocks: ReadonlyArray<unknown>): string =>
  "pg1." + encodeBase64url(Either.getOrThrow(canonicalBytes(blocks)))

/** A root block payload from the principal to the agent with `caveats`. */
export const rootPayload = (caveats: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  caveats,
  iat: NOW - 100,
  iss: principalKey,
  nonce: "n",
  sub: agentKey,
  ...extra
})

/** A root grant principal → agent with arbitrary (possibly malformed) caveats. */
export const rawRoot = (caveats: ReadonlyArray<unknown>): string => rawToken([rawBlock(rootPayload(caveats), PRINCIPAL)])

/** Runs an Effect needing Signer/RandomBytes/Clock at NOW with `signerSeed`, synchronously. */
export const withSigner = <A, E>(signerSeed: Uint8Array, eff: Effect.Effect<A, E, Signer | RandomBytes>, now = NOW): A =>
  Effect.runSync(
    eff.pipe(
      Effect.provide(Layer.merge(Signer.fromSeed(signerSeed), RandomBytes.seeded(new Uint8Array([7])))),
      Effect.withClock(fixedClock(now))
    )
  )

export const issue = (caveats: ReadonlyArray<unknown>, sub = agentKey): string =>
  withSigner(PRINCIPAL, issueRootGrant({ sub, caveats, nonce: "t" }))

export const delegate = (token: string, holderSeed: Uint8Array, caveats: ReadonlyArray<unknown>, sub = subagentKey): string =>
  withSigner(holderSeed, delegateGrant(token, { sub, caveats }))

export const noTotals: TotalsLookup = () => Effect.succeed(decimal(0))

export interface Check {
  readonly grants: ReadonlyArray<unknown>
  readonly request: AuthorizeRequest
  readonly proofKey?: string
  readonly trusted?: ReadonlyArray<string>
  readonly principal?: string
  readonly now?: number
  readonly usedOf?: TotalsLookup
}

/** "ok" or the refusal's reason, with the error for closer looks. */
export const check = (c: Check): { readonly code: "ok" | YeaError["reason"]; readonly error?: YeaError; readonly index?: number } => {
  const r = Effect.runSync(
    Effect.either(
      authorize(
        {
          grants: c.grants,
          proofKey: c.proofKey ?? agentKey,
          trusted: c.trusted ?? [principalKey],
          request: c.request,
          ...(c.principal !== undefined ? { principal: c.principal } : {})
        },
        c.usedOf ?? noTotals
      ).pipe(Effect.withClock(fixedClock(c.now ?? NOW)))
    )
  )
  return Either.isRight(r) ? { code: "ok", index: r.right.index } : { code: r.left.reason, error: r.left }
}

export const ask = (capability = "shop.search", service = "shop.example"): AuthorizeRequest => ({ service, verb: "ASK", capability })

export const commit = (
  proposal: { hash?: string; risk?: unknown; uses?: unknown } = {},
  capability = "shop.order",
  service = "shop.example"
): AuthorizeRequest => ({
  service,
  verb: "COMMIT",
  capability,
  proposal: { hash: "H", risk: "low", ...proposal }
})

export { blockId }
