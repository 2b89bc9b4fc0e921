// Budget levels and their reset windows. A call's worst case is reserved on every level that applies
// to its key (key, user, team) in ONE reserve of the shared reservation core, through the ledger's
// guard (guarded-call.ts), so the all-or-nothing check and the draw are atomic across processes on
// a SQL store; the answer's real usage settles it (more than reserved is charged in full, overrun).
//
// A limit key names the level, its id (a key's stable id, or the hash of a key the store does not
// know, never the key) and the window of its reset period, computed from the Clock in the budget's
// time zone: a new window is a new key, so nothing has to be reset by a job.

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

/** The limit of a level with no budget of its own (a key bound only by its user or team): accounted, never binding. */
export const UNLIMITED = 10n ** 30n

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

