// The accounting decision, written once over ReservationBackend: validation, idempotency, the
// all-or-nothing limit check in request order, and settlement. Stores differ only in isolation.
import { Effect, Layer, Option, String as Str } from "effect"
import { type ReservationBackend, ReservationStore, type ReserveStep } from "./backend.js"
import {
  type Actual,
  LimitExhausted,
  type LimitSpec,
  type Reservation,
  ReservationConflict,
  ReservationInvalid,
  ReservationNotFound,
  Reservations,
  ReservationSettled,
  type ReservationsService,
  type ReservationState,
  type Reserved,
  type ReserveError,
  type ReserveRequest,
  type SettleError,
  type Settled,
  SettlementInvalid
} from "./reservations.js"
import { StoreError } from "./store-error.js"

/** Request validation; a caller bug is reported before any store is touched. */
const validate = (request: ReserveRequest): Effect.Effect<void, ReservationInvalid> =>
  Effect.suspend(() => {
    if (request.id.length === 0) return Effect.fail(new ReservationInvalid({ reason: "empty_id" }))
    const seen = new Set<string>()
    for (const l of request.limits) {
      if (l.key.length === 0) return Effect.fail(new ReservationInvalid({ reason: "empty_key" }))
      // One key twice in one request has no single meaning (sum? both limits?); the caller merges.
      if (seen.has(l.key)) return Effect.fail(new ReservationInvalid({ reason: "duplicate_key", key: l.key }))
      seen.add(l.key)
      if (l.limit < 0n) return Effect.fail(new ReservationInvalid({ reason: "negative_limit", key: l.key }))
      if (l.amount < 0n) return Effect.fail(new ReservationInvalid({ reason: "negative_amount", key: l.key }))
    }
    return Effect.void
  })

/** Same request under one id: same limits in the same order and the same onFailure. */
const sameRequest = (r: Reservation, q: ReserveRequest): boolean =>
  r.onFailure === q.onFailure &&
  r.limits.length === q.limits.length &&
  r.limits.every((l, i) => {
    const m = q.limits[i]
    return l.key === m.key && l.limit === m.limit && l.amount === m.amount
  })

const sortedDistinct = (keys: Iterable<string>): Array<string> =>
  Array.from(new Set(keys)).sort(Str.Order)

/**
 * The accounting rule, written once: the index of the first limit, in request order, that its
 * consumption `used[i]` does not fit (`used + amount > limit`), or -1 when every limit fits. A
 * store that takes the reserve as one step of its own applies the same predicate (see
 * ReservationBackend.reserveStep) and its verdict is checked against this one.
 */
export const firstShort = (limits: ReadonlyArray<LimitSpec>, used: ReadonlyArray<bigint>): number =>
  limits.findIndex((l, i) => used[i] + l.amount > l.limit)

/**
 * What a settlement that adds `delta` to a key used `before` takes beyond `limit`: how much it grew
 * the excess over the limit (an excess that was there before is another settlement's overrun).
 */
export const overrunOf = (before: bigint, delta: bigint, limit: bigint): bigint => {
  const over = (u: bigint) => (u > limit ? u - limit : 0n)
  const grown = over(before + delta) - over(before)
  return grown > 0n ? grown : 0n
}

/** The reserve step composed from a backend's primitives, inside its `atomic`. */
const composedStep = (backend: ReservationBackend) => (reservation: Reservation): Effect.Effect<ReserveStep, StoreError> =>
  (backend.join ?? backend.atomic)(Effect.gen(function*() {
    yield* backend.lockId(reservation.id)
    const existing = yield* backend.load(reservation.id)
    if (Option.isSome(existing)) return { _tag: "Existing", reservation: existing.value } as const
    const usage = yield* backend.lockUsage(sortedDistinct(reservation.limits.map((l) => l.key)))
    const used = reservation.limits.map((l) => usage.get(l.key) ?? 0n)
    // All or nothing: every limit is checked before anything is written.
    if (firstShort(reservation.limits, used) >= 0) return { _tag: "Short", used } as const
    yield* backend.addUsage(reservation.limits.filter((l) => l.amount !== 0n).map((l) => [l.key, l.amount] as const), usage)
    yield* backend.insert(reservation)
    return { _tag: "Drawn", used } as const
  }))

/** A store step whose verdict disagrees with the rule (a bug in the store, never a caller's). */
const inconsistent = (id: string, message: string) =>
  new StoreError({ operation: "reservations.reserve", message: `reservation ${id}: ${message}` })

/** Request validation; a caller bug is reported before any store is touched. */
export const validateReserve = validate

/** The held reservation a valid `request` asks for. */
export const heldReservation = (request: ReserveRequest): Reservation => ({
  id: request.id,
  limits: request.limits.map((l) => ({ key: l.key, limit: l.limit, amount: l.amount })),
  onFailure: request.onFailure,
  state: "held",
  consumed: request.limits.map((l) => l.amount)
})

/**
 * The answer to `request` from what its reserve step found, whoever ran the step (core.ts's
 * composed step, a store's own statement, or a store step that does more than the reserve, as
 * PostgreSQL's Writ admission does): idempotency, the first short limit in request order, and the
 * store's verdict checked against the rule.
 */
export const judgeReserve = (request: ReserveRequest, found: ReserveStep): Effect.Effect<Reserved, ReserveError> =>
  Effect.suspend((): Effect.Effect<Reserved, ReserveError> => {
    // Idempotency: an id already reserved is answered with what it holds, consuming nothing.
    if (found._tag === "Existing") {
      if (!sameRequest(found.reservation, request)) return Effect.fail(new ReservationConflict({ id: request.id }))
      return Effect.succeed({ ...found.reservation, replayed: true })
    }
    if (found.used.length !== request.limits.length) {
      return Effect.fail(inconsistent(request.id, `${found.used.length} consumptions read for ${request.limits.length} limits`))
    }
    const short = firstShort(request.limits, found.used)
    if (found._tag === "Short") {
      if (short < 0) return Effect.fail(inconsistent(request.id, "the store refused a reserve that fits every limit"))
      // The first limit, in request order, that does not fit is the answer.
      const l = request.limits[short]
      return Effect.fail(new LimitExhausted({ key: l.key, limit: l.limit, used: found.used[short], amount: l.amount }))
    }
    if (short >= 0) return Effect.fail(inconsistent(request.id, `the store drew over the limit of ${request.limits[short].key}`))
    return Effect.succeed({ ...heldReservation(request), replayed: false })
  })

export const makeReservations = (backend: ReservationBackend): ReservationsService => {
  const step = backend.reserveStep ?? composedStep(backend)
  // Spans: each entry point is named, with the reservation id as an attribute, so a trace shows
  // how long a call spends deciding and settling its spend. Plain functions under `withSpan` with
  // no stack trace captured, rather than `Effect.fn`, which builds an Error on every call (issue 30:
  // no runtime tax per call on the hot path).
  const spanned = (name: string, id: string) => Effect.withSpan(name, { attributes: { reservation: id }, captureStackTrace: false })
  const reserve = (request: ReserveRequest): Effect.Effect<Reserved, ReserveError> =>
    Effect.flatMap(validateReserve(request), () => Effect.flatMap(step(heldReservation(request)), (found) => judgeReserve(request, found))).pipe(
      spanned("Reservations.reserve", request.id)
    )

  /** Moves a held reservation to `target`, keeping `keep(i)` consumed for limit i. */
  const settle = (
    id: string,
    target: Exclude<ReservationState, "held">,
    actual: Actual | undefined,
    keepDefault: (r: Reservation, i: number) => bigint
  ): Effect.Effect<Settled, SettleError> =>
    // Every typed refusal below comes before the first write, as a joined boundary requires.
    (backend.join ?? backend.atomic)(Effect.gen(function*() {
      yield* backend.lockId(id)
      const found = yield* backend.load(id)
      if (Option.isNone(found)) return yield* new ReservationNotFound({ id })
      const r = found.value
      if (r.state !== "held") {
        // Settling the same way again answers with the first settlement; another way is refused.
        if (r.state === target) return { ...r, overrun: r.limits.map(() => 0n) }
        return yield* new ReservationSettled({ id, state: r.state })
      }
      if (actual !== undefined) {
        for (const key of Object.keys(actual)) {
          const i = r.limits.findIndex((l) => l.key === key)
          if (i < 0) return yield* new SettlementInvalid({ id, key, reason: "unknown_key" })
          const a = actual[key]
          if (a < 0n) return yield* new SettlementInvalid({ id, key, reason: "negative_amount" })
          // An actual above what was reserved is charged in full (ledger seed: "Commit replaces the
          // reservation with actual usage"; failure settlement "records measured ... spend"): the spend
          // already happened, so capping it would let a budget be passed unseen. What it takes beyond
          // the limit is reported as `overrun`, and the limit is then exhausted for every later reserve.
        }
      }
      const consumed = r.limits.map((l, i) =>
        actual !== undefined && Object.prototype.hasOwnProperty.call(actual, l.key) ? actual[l.key] : keepDefault(r, i)
      )
      const deltas = r.limits
        .map((l, i) => [l.key, consumed[i] - r.consumed[i]] as const)
        .filter(([, d]) => d !== 0n)
      const settled: Reservation = { ...r, state: target, consumed }
      yield* backend.update(settled)
      // The limit rows last, as in a reserve: a hot limit's row is locked for the least time,
      // and in the same order (id, reservation row, sorted keys) as reserves take.
      const overrun = r.limits.map(() => 0n)
      if (deltas.length > 0) {
        const before = yield* backend.lockUsage(sortedDistinct(deltas.map(([k]) => k)))
        yield* backend.addUsage(deltas, before)
        r.limits.forEach((l, i) => {
          const delta = consumed[i] - r.consumed[i]
          if (delta <= 0n) return
          overrun[i] = overrunOf(before.get(l.key) ?? 0n, delta, l.limit)
        })
      }
      return { ...settled, overrun }
    }))

  return {
    reserve,
    commit: (id: string, actual?: Actual) => spanned("Reservations.commit", id)(settle(id, "committed", actual, (r, i) => r.consumed[i])),
    release: (id: string) => spanned("Reservations.release", id)(settle(id, "released", undefined, () => 0n)),
    settleFailure: (id: string, actual?: Actual) =>
      spanned("Reservations.settleFailure", id)(settle(id, "failed", actual, (r, i) => (r.onFailure === "consume" ? r.consumed[i] : 0n))),
    get: (id) => backend.load(id),
    used: (key) => backend.used(key)
  }
}

/** Reservations on whichever ReservationStore is in context. */
export const layer: Layer.Layer<Reservations, never, ReservationStore> = Layer.effect(
  Reservations,
  Effect.map(ReservationStore, makeReservations)
)
