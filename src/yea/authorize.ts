// Authorizing a request with grants (SPEC §6.4–§6.6) and reserving `total` limits (§6.3).
//
// A request may carry several grants; it is authorized if ANY single grant authorizes it on its own
// (§6.6). When none does, the reply is the most actionable refusal: `consent_required` if some grant
// failed only on `risk`, `each` or `total` (a human can approve that), else `forbidden` if some grant
// was valid but did not cover the request, else `unauthorized`.
//
// `total` limits are checked against, and then reserved in, the accounting core's `Reservations`,
// keyed `yea/total/<block id>/<of>` at one common scale (18, the largest §5.1 allows), so values of
// any scale add exactly. The reservation is all-or-nothing and race-free, and is released if the
// commit's execution fails (§6.3).
import { Effect, Either, Exit, Option } from "effect"
import { Reservations, type Reserved } from "../accounting/reservations.js"
import { caveatBlocks, holdVerifiedGrant, readGrant, verifyChain, type Grant } from "./grant.js"
import { evaluateCaveats, evaluateCaveatsWith, totalsRead } from "./caveat-evaluation.js"
import {
  bindingTotals,
  verdictOf,
  type CaveatContext,
  type CaveatFailure,
  type Evaluation,
  type TotalDraw,
  type TotalsLookup
} from "./caveat.js"
import { grantReason } from "./grant-reason.js"
import { MAX_SCALE, decimal, unitsAt, type Decimal } from "./measure.js"
import { yeaError, type ConsentRequest, type YeaError } from "./reason.js"
import { unixSeconds } from "../kernel/clock.js"
import { type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"

/** The request as the grants see it; `now` comes from the Clock. */
export type AuthorizeRequest = Omit<CaveatContext, "now">

export interface AuthorizeInput {
  /** The request's `grants` (tokens, untrusted). */
  readonly grants: ReadonlyArray<unknown>
  /** The key of the request's verified proof (proof.ts `verifyProof`). */
  readonly proofKey: string
  /** Principals this service trusts (§6.4 step 4). */
  readonly trusted: ReadonlyArray<string>
  readonly request: AuthorizeRequest
  /**
   * When set, only a grant rooted in this principal may authorize: a COMMIT of a proposal whose
   * INTENT was authorized by a grant (§4.4), an UNDO (§4.5, same principal as the original commit).
   */
  readonly principal?: string
  /** For `consent_required`: what to ask the principal (§6.6). Built from the proposal shown. */
  readonly consentFor?: (principal: string) => ConsentRequest
}

export interface Authorized {
  readonly grant: Grant
  /** Index of the authorizing grant in the request's `grants`. */
  readonly index: number
  /** The `total` caveats this COMMIT draws on, to reserve (empty for other verbs and replays). */
  readonly draws: ReadonlyArray<TotalDraw>
}

interface Refusal {
  readonly rank: number // 3 consent_required, 2 forbidden, 1 unauthorized
  readonly error: YeaError
}

const needOf = (fs: ReadonlyArray<CaveatFailure>) => fs.map((f) => f.caveat)

/**
 * §6.4 on one grant, up to its caveats: read (step 1, through the cache: grant.ts `readGrant`), the
 * chain (steps 2–5), then the principal the request is bound to. Either the grant, or why not.
 */
const grantFor = (token: unknown, input: AuthorizeInput, cache: VerificationCacheSync | undefined): Grant | Refusal => {
  const reading = readGrant(token, cache)
  if (Either.isLeft(reading)) return { rank: 1, error: reading.left }
  const chain = verifyChain(reading.right.grant, { trusted: input.trusted, proofKey: input.proofKey, cache })
  if (Either.isLeft(chain)) return { rank: 1, error: chain.left }
  holdVerifiedGrant(reading.right, cache)
  const grant = chain.right
  // §4.4/§4.5: the grant must come from the principal the request is bound to.
  if (input.principal !== undefined && grant.principal !== input.principal) {
    return { rank: 2, error: yeaError("forbidden", "the grant is from another principal") }
  }
  return grant
}

/** §6.4 step 6's verdict (caveat.ts `verdictOf`) as what authorize answers: authorized, or the refusal. */
const outcomeOf = (input: AuthorizeInput, grant: Grant, index: number, evaluation: Evaluation): Authorized | Refusal => {
  const v = verdictOf(evaluation)
  switch (v._tag) {
    case "Authorized": return { grant, index, draws: v.draws }
    case "CaveatsForbidden": return { rank: 2, error: yeaError("forbidden", v.message, { need: needOf(v.failures) }) }
    case "CaveatsNeedConsent": {
      // §6.6: authorized except for risk / each / total: ask the principal.
      const consent = input.consentFor?.(grant.principal)
      return { rank: 3, error: yeaError("consent_required", v.message, { need: needOf(v.failures), ...(consent ? { consent } : {}) }) }
    }
  }
}

/**
 * Runs §6.4 for every grant until one authorizes the request (§6.6), at `now`, with keys judged
 * through `cache`. Plain functions throughout: the only Effects are the `total` lookups of a grant
 * whose caveats bind one (caveat.ts `totalsRead`), read before its caveats are evaluated.
 */
export const authorizeAt = <E, R>(
  input: AuthorizeInput,
  usedOf: TotalsLookup<E, R>,
  now: number,
  cache: VerificationCacheSync | undefined
): Effect.Effect<Authorized, YeaError | E, R> => {
  if (input.grants.length === 0) return Effect.fail(yeaError("unauthorized", "the request carries no grant"))
  const ctx: CaveatContext = { ...input.request, now }
  let best: Refusal | undefined
  const refuse = (r: Refusal) => {
    if (best === undefined || r.rank > best.rank) best = r
  }
  const from = (i: number): Effect.Effect<Authorized, YeaError | E, R> => {
    for (; i < input.grants.length; i++) {
      const grant = grantFor(input.grants[i], input, cache)
      if ("rank" in grant) {
        refuse(grant)
        continue
      }
      // §6.4 step 6: every caveat in every block, through the one caveat check.
      const blocks = caveatBlocks(grant)
      const reads = totalsRead(blocks, ctx)
      if (reads.length > 0) {
        const index = i
        return Effect.flatMap(evaluateCaveats(blocks, ctx, usedOf), (evaluation) => {
          const outcome = outcomeOf(input, grant, index, evaluation)
          if ("grant" in outcome) return Effect.succeed(outcome)
          refuse(outcome)
          return from(index + 1)
        })
      }
      const outcome = outcomeOf(input, grant, i, evaluateCaveatsWith(blocks, ctx, noTotals))
      if ("grant" in outcome) return Effect.succeed(outcome)
      refuse(outcome)
    }
    return Effect.fail(best!.error)
  }
  return Effect.suspend(() => from(0))
}

/** The lookup of an evaluation for which `totalsRead` listed none: never called, and a defect
 * (never a zero) if it were. */
const noTotals = (blockId: string, of: string): Decimal => {
  throw new Error(`total ${of} of block ${blockId} was read without a lookup`)
}

/** Runs §6.4 for every grant until one authorizes the request (§6.6): {@link authorizeAt} at the
 * Clock's second, through the VerificationCache in context when there is one. */
export const authorize: <E, R>(input: AuthorizeInput, usedOf: TotalsLookup<E, R>) => Effect.Effect<Authorized, YeaError | E, R> = Effect.fn(
  "yea.authorize"
)(
  function* <E, R>(input: AuthorizeInput, usedOf: TotalsLookup<E, R>) {
    return yield* authorizeAt(input, usedOf, yield* unixSeconds, yield* verificationCacheSync)
  }
)

// ---------------------------------------------------------------------------------------------
// Totals in the accounting core

/** All `total` amounts share this scale in the Reservations store (§5.1's largest). */
export const TOTAL_SCALE = MAX_SCALE

/** The Reservations key of a `total` caveat: block id and measure (§6.3). */
export const totalKey = (blockId: string, of: string): string => `yea/total/${blockId}/${of}`

/** Reads what is committed or reserved under a `total` from `Reservations`. */
export const reservationTotals: TotalsLookup<YeaError, Reservations> = (blockId, of) =>
  Effect.flatMap(Reservations, (r) => r.used(totalKey(blockId, of))).pipe(
    Effect.map((units): Decimal => decimal(units, TOTAL_SCALE)),
    Effect.mapError((e) => yeaError("unavailable", `totals store: ${e.message}`))
  )

/** `authorize` with totals read from `Reservations`. */
export const authorizeWithReservations = (input: AuthorizeInput) => authorize(input, reservationTotals)

/** {@link authorizeAt} with totals read from `Reservations`: for a caller that read the Clock and
 * the VerificationCache once at its own entry point (the service runtime). */
export const authorizeWithReservationsAt = (input: AuthorizeInput, now: number, cache: VerificationCacheSync | undefined) =>
  authorizeAt(input, reservationTotals, now, cache)

/**
 * Reserves every `total` the authorized COMMIT draws on, atomically (§6.3), under the idempotency
 * id `reservationId` (e.g. the proposal's service-side id). None when there is nothing to reserve.
 * A limit that no longer fits (a concurrent commit won the race) is `consent_required`.
 */
export const reserveTotals = (
  reservationId: string,
  draws: ReadonlyArray<TotalDraw>
): Effect.Effect<Option.Option<Reserved>, YeaError, Reservations> =>
  Effect.gen(function* () {
    if (draws.length === 0) return Option.none()
    // Two `total`s on the same measure in one block share a key: the smaller limit binds.
    const byKey = new Map(bindingTotals(draws).map((d) => [totalKey(d.blockId, d.of), d] as const))
    const limits = [...byKey].map(([key, d]) => ({ key, limit: unitsAt(d.limit, TOTAL_SCALE), amount: unitsAt(d.amount, TOTAL_SCALE) }))
    const reservations = yield* Reservations
    const reserved = yield* reservations.reserve({ id: reservationId, limits, onFailure: "release" }).pipe(
      Effect.catchTags({
        // A concurrent commit took the room between check and reserve: the same text as the check's.
        LimitExhausted: (e) => {
          const d = byKey.get(e.key)
          return Effect.fail(
            d === undefined
              ? yeaError("internal", `the totals store refused an unknown key ${e.key}`)
              : yeaError("consent_required", grantReason.total(d.caveat.total), { need: [d.caveat] })
          )
        },
        ReservationConflict: () => Effect.fail(yeaError("conflict", "this commit was already reserved with other amounts")),
        ReservationInvalid: (e) => Effect.fail(yeaError("internal", `invalid reservation: ${e.reason}`)),
        StoreError: (e) => Effect.fail(yeaError("unavailable", `totals store: ${e.message}`))
      })
    )
    return Option.some(reserved)
  })

/**
 * Runs `execute` under the reservation of `draws`: reserved before it runs, committed when it
 * succeeds, released when it fails or is interrupted (§6.3 "A reservation is released if execution
 * fails").
 */
export const executeWithTotals = <A, E, R>(
  reservationId: string,
  draws: ReadonlyArray<TotalDraw>,
  execute: Effect.Effect<A, E, R>
): Effect.Effect<A, E | YeaError, R | Reservations> =>
  Effect.flatMap(Reservations, (reservations) =>
    Effect.acquireUseRelease(
      reserveTotals(reservationId, draws),
      (reserved) =>
        Option.isNone(reserved)
          ? execute
          : // A failed commit write leaves the reservation held, which still counts as used:
            // conservative, never over the limit.
            Effect.tap(execute, () => Effect.ignore(reservations.commit(reservationId))),
      (reserved, exit) =>
        Option.isSome(reserved) && Exit.isFailure(exit)
          ? // Released on failure or interruption. If the store refuses, the hold stays: conservative.
            Effect.ignore(reservations.settleFailure(reservationId))
          : Effect.void
    )
  )
