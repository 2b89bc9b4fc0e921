// Budgets on the shared reservation core (src/accounting): a call's worst-case cost is reserved,
// in integer micro-USD, on every level that applies to its key (key, user, team) in ONE reserve, so
// the all-or-nothing check and the draw are atomic across processes on a SQL store; the answer's
// real usage then settles it (more than reserved is charged in full and reported as overrun).
//
// A limit key names its level, the level's id (a key's SHA-256, never the key) and the window of
// its reset period, computed from the Clock in the budget's time zone: a new window is a new key,
// so nothing has to be reset by a job.
import { Clock, Effect } from "effect"
import { type LimitExhausted, type LimitSpec, Reservations, type SettleError, type Settled } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"

export type Period = "hour" | "day" | "week" | "month"
export type Mode = "enforce" | "shadow" | "recommend"

export interface BudgetSpec {
  /** micro-USD. */
  readonly limit: bigint
  readonly period?: Period | undefined
}

export interface Level {
  readonly level: "key" | "user" | "team"
  /** The level's id: a key's hash, a user's or team's name. */
  readonly id: string
  readonly budget: BudgetSpec
}

/** A lifted limit (shadow, recommend): spend is still accounted on the same keys. */
const LIFTED = 10n ** 30n
/** The limit of a level with no budget of its own (a key bound only by its user or team): accounted, never binding. */
export const UNLIMITED = LIFTED

/** The window of `period` holding `nowMs`, as the calendar reads in `timeZone` (an IANA name). */
export const windowOf = (period: Period | undefined, timeZone: string, nowMs: number): string => {
  if (period === undefined) return "all"
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", hourCycle: "h23" })
      .formatToParts(nowMs).map((p) => [p.type, p.value])
  ) as Record<string, string>
  const ymd = `${parts.year}-${parts.month}-${parts.day}`
  if (period === "hour") return `${ymd}T${parts.hour}`
  if (period === "day") return ymd
  if (period === "month") return `${parts.year}-${parts.month}`
  // week: the Monday that starts it (ISO 8601 weeks), from the local calendar date.
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day))
  const dow = (new Date(local).getUTCDay() + 6) % 7
  return `W${new Date(local - dow * 86_400_000).toISOString().slice(0, 10)}`
}

export const limitKey = (l: Level, timeZone: string, nowMs: number): string =>
  `gateway/${l.level}/${l.id}/${windowOf(l.budget.period, timeZone, nowMs)}`

export interface Held {
  readonly id: string
  readonly keys: ReadonlyArray<string>
  readonly amount: bigint
}

/** Reserves `amount` on every level at once; enforce checks the limits, shadow/recommend lift them. */
export const reserveCall = (id: string, levels: ReadonlyArray<Level>, amount: bigint, mode: Mode, timeZone: string) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const limits: Array<LimitSpec> = levels.map((l) => ({ key: limitKey(l, timeZone, now), limit: mode === "enforce" ? l.budget.limit : LIFTED, amount }))
    const reservations = yield* Reservations
    yield* reservations.reserve({ id, limits, onFailure: "release" })
    return { id, keys: limits.map((l) => l.key), amount } satisfies Held
  })

export type ReserveCallError = LimitExhausted | StoreError

/**
 * A settlement of the gateway's own reservation: the server holds the only handle to it, so a
 * missing, settled or invalid reservation is a bug here, not a caller's input, and dies.
 */
const settling = (
  step: Effect.Effect<Settled, SettleError, Reservations>
): Effect.Effect<Settled, StoreError, Reservations> =>
  step.pipe(
    Effect.catchTags({
      ReservationNotFound: (e) => Effect.die(e),
      ReservationSettled: (e) => Effect.die(e),
      SettlementInvalid: (e) => Effect.die(e)
    })
  )

/** Every level charged the same amount. */
const charge = (held: Held, actual: bigint) => Object.fromEntries(held.keys.map((k) => [k, actual]))

/** Settles on the real cost: every level is charged `actual` (overrun reported by the core). */
export const commitCall = (held: Held, actual: bigint): Effect.Effect<Settled, StoreError, Reservations> =>
  settling(Effect.flatMap(Reservations, (r) => r.commit(held.id, charge(held, actual))))

/** Gives everything back (an upstream error that was not billed). */
export const releaseCall = (held: Held): Effect.Effect<Settled, StoreError, Reservations> =>
  settling(Effect.flatMap(Reservations, (r) => r.release(held.id)))

/** A failed call that was billed (partial stream output): `actual` stays consumed. */
export const failCall = (held: Held, actual: bigint): Effect.Effect<Settled, StoreError, Reservations> =>
  settling(Effect.flatMap(Reservations, (r) => r.settleFailure(held.id, charge(held, actual))))
