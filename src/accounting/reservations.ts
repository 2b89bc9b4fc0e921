// The accounting core: the one place where "may this spend?" is decided, for every protocol.
//
// A limit key is an opaque string namespaced by its caller, e.g. `writ/count/<writ hash>`,
// `writ/total/<writ hash>/<bound name>` (Writ §7 step 10, §9 count and total stores),
// `yea/total/<block id>/<of>` (YEA §6.3 `total`), `ledger/budget/<name>` (ledger budgets).
// Amounts and limits are exact integers (bigint). Callers that hold decimals convert them to one
// common scale per key first (YEA §5.1: amount × 10^−scale, compared in bigint), see decimal.ts.
//
// Life of a reservation (idempotency id chosen by the caller):
//   reserve  --> held --commit-->        committed  (consumption stays; settles for the actual,
//                                                    less or more: more is charged in full)
//                     --release-->       released   (everything given back)
//                     --settleFailure--> failed     (stays consumed or is given back, as the
//                                                    reservation's `onFailure` says, or a
//                                                    measured smaller amount stays)
// Writ §7.3: count and total consumed at acceptance are NOT given back when the operation fails
//   -> the executor reserves with onFailure "consume".
// YEA §6.3: "A reservation is released if execution fails" -> YEA reserves with onFailure "release".
// Ledger seed: commit replaces the reservation with actual usage (commit with `actual`), abort
//   releases (release), failure settlement records measured spend (settleFailure with `actual`).
//
// The limit is passed with every reserve, not stored with the key: the check is
// `used(key) + amount <= limit` against the caller's limit of the moment. Writ limits are fixed by
// the signed writ, so this is the same number every time; the ledger's verification reserve uses it
// on purpose (generation actions reserve against `budget - verificationReserve`, verification
// actions against `budget`, on the same key).
import { Context, Effect, Option, Schema } from "effect"
import { Stackless } from "../kernel/stackless.js"
import type { StoreError } from "./store-error.js"

export { StoreError } from "./store-error.js"

/** One limit to draw on: `used(key) + amount <= limit` must hold. */
export interface LimitSpec {
  readonly key: string
  readonly limit: bigint
  readonly amount: bigint
}

/** What `settleFailure` without a measured amount does with what was reserved. */
export type OnFailure = "consume" | "release"

export interface ReserveRequest {
  /** Idempotency id. Re-reserving the same id with the same limits returns the existing reservation. */
  readonly id: string
  /** Checked in this order; the first that does not fit is reported. Keys must be distinct. */
  readonly limits: ReadonlyArray<LimitSpec>
  readonly onFailure: OnFailure
}

export type ReservationState = "held" | "committed" | "released" | "failed"

export interface Reservation {
  readonly id: string
  readonly limits: ReadonlyArray<LimitSpec>
  readonly onFailure: OnFailure
  readonly state: ReservationState
  /**
   * What this reservation consumes now, per limit, in the order of `limits`: the reserved amount
   * while held; after settlement what stayed consumed (0 when released).
   */
  readonly consumed: ReadonlyArray<bigint>
}

/** The answer to a settlement: the reservation as settled, and what it took beyond its limits. */
export interface Settled extends Reservation {
  /**
   * Per limit, in the order of `limits`: how much this settlement grew the key's consumption beyond
   * the limit (an actual above the reservation that the remaining budget did not cover). 0 when it
   * fitted, and on a repeated settlement (the first one reported it).
   */
  readonly overrun: ReadonlyArray<bigint>
}

/** The answer to `reserve`: the reservation, and whether it already existed under this id. */
export interface Reserved extends Reservation {
  /** true when the id was already reserved: nothing new was consumed. */
  readonly replayed: boolean
}

/**
 * Actual amounts for a settlement, by key. Keys left out keep their full reserved amount. An amount
 * must not be negative; one above the reserved amount is charged in full (see Settled.overrun).
 */
export type Actual = Readonly<Record<string, bigint>>

// ---------------------------------------------------------------------------------------------
// Errors

/** The first limit, in request order, that the request does not fit. Nothing was consumed. */
export class LimitExhausted extends Stackless(Schema.TaggedError<LimitExhausted>()("LimitExhausted", {
  key: Schema.String,
  limit: Schema.BigIntFromSelf,
  /** Consumption of `key` at the time of the check (held + committed). */
  used: Schema.BigIntFromSelf,
  amount: Schema.BigIntFromSelf
})) {}

/**
 * The id is already reserved with different limits (keys, limits, amounts or their order) or a
 * different onFailure. Nothing was consumed and the existing reservation is unchanged.
 */
export class ReservationConflict extends Stackless(Schema.TaggedError<ReservationConflict>()("ReservationConflict", {
  id: Schema.String
})) {}

export const ReservationInvalidReason = Schema.Literal(
  "empty_id",
  "empty_key",
  "duplicate_key",
  "negative_amount",
  "negative_limit"
)
export type ReservationInvalidReason = typeof ReservationInvalidReason.Type

/** A malformed request: a caller bug, reported before any store is touched. */
export class ReservationInvalid extends Stackless(Schema.TaggedError<ReservationInvalid>()("ReservationInvalid", {
  reason: ReservationInvalidReason,
  key: Schema.optional(Schema.String)
})) {}

export class ReservationNotFound extends Stackless(Schema.TaggedError<ReservationNotFound>()("ReservationNotFound", {
  id: Schema.String
})) {}

/**
 * The reservation was already settled in a different way (e.g. release after commit). Settling
 * again the SAME way is not an error: it returns the existing settlement (first settlement wins).
 */
export class ReservationSettled extends Stackless(Schema.TaggedError<ReservationSettled>()("ReservationSettled", {
  id: Schema.String,
  state: Schema.Literal("committed", "released", "failed")
})) {}

export const SettlementInvalidReason = Schema.Literal("unknown_key", "negative_amount")
export type SettlementInvalidReason = typeof SettlementInvalidReason.Type

/** An `actual` amount that names a key not in the reservation, or is negative. */
export class SettlementInvalid extends Stackless(Schema.TaggedError<SettlementInvalid>()("SettlementInvalid", {
  id: Schema.String,
  key: Schema.String,
  reason: SettlementInvalidReason
})) {}

export type ReserveError = LimitExhausted | ReservationConflict | ReservationInvalid | StoreError
export type SettleError = ReservationNotFound | ReservationSettled | SettlementInvalid | StoreError

// ---------------------------------------------------------------------------------------------
// The service

export interface ReservationsService {
  /**
   * Reserve every limit at once, all or nothing: either each `used(key) + amount <= limit` holds and
   * every amount is added, or nothing is consumed and the FIRST failing limit in request order is
   * reported (LimitExhausted). Same id again: idempotent (see ReservationConflict).
   * Race-free against every other reserve on the same store, across processes for SQL stores.
   */
  readonly reserve: (request: ReserveRequest) => Effect.Effect<Reserved, ReserveError>
  /**
   * Consumption stays. With `actual`, settles for the actual amounts: a smaller one gives the
   * difference back, a larger one is charged in full even past the limit (reported as `overrun`;
   * every later reserve on that key is then refused until consumption falls under the limit).
   */
  readonly commit: (id: string, actual?: Actual) => Effect.Effect<Settled, SettleError>
  /** Everything reserved is given back. */
  readonly release: (id: string) => Effect.Effect<Settled, SettleError>
  /**
   * The operation failed. With `actual` (measured or conservatively estimated spend), those amounts
   * stay consumed; without, the reservation's `onFailure` decides: "consume" keeps all of it,
   * "release" gives all of it back.
   */
  readonly settleFailure: (id: string, actual?: Actual) => Effect.Effect<Settled, SettleError>
  /** The reservation under `id`, if any. */
  readonly get: (id: string) => Effect.Effect<Option.Option<Reservation>, StoreError>
  /** Current consumption of `key`: held + committed + failed-and-kept (0 for an unknown key). */
  readonly used: (key: string) => Effect.Effect<bigint, StoreError>
}

export class Reservations extends Context.Tag("mandate/Reservations")<Reservations, ReservationsService>() {}

// ---------------------------------------------------------------------------------------------
// The transaction boundary

export interface AtomicService {
  /**
   * Runs `self` as one atomic step on the store: every store write made inside it — Reservations
   * and any other store built on the same Layer (the same SQL connection, or the same memory
   * journal) — is committed together when `self` succeeds, and none of them is visible or kept when
   * it fails, dies or is interrupted. Nested calls join the outer step (a savepoint: an inner
   * failure that the caller catches undoes only the inner writes). A failure to begin or commit is
   * a StoreError.
   */
  readonly transaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
}

export class Atomic extends Context.Tag("mandate/Atomic")<Atomic, AtomicService>() {}
