// The wait before reconnecting a server that went away, shared by `writ mcp-gate`
// (../writ-mcp-gate/restart.ts) and `writ mcp-proxy` (./proxy-upstream.ts); docs/mcp-gate.md,
// "When the server exits". Reconnects in a row wait longer each time, so a server that keeps
// dropping costs a bounded number of attempts per minute: doubling from RECONNECT_DELAY, capped at
// RECONNECT_DELAY_MAX, and each wait jittered down to between half and all of it, so the gates
// and proxies one restart dropped do not all come back at the same instant. The jitter is drawn
// from the Random in context and every wait is on the Clock in context (a test drives both).
import { Duration, Effect, Schedule } from "effect"

export const RECONNECT_DELAY = Duration.millis(200)
export const RECONNECT_DELAY_MAX = Duration.seconds(10)

/** The backoff: exponential from `base`, capped at `max`, jittered to [0.5, 1] of each wait, in
 * whole milliseconds (a fractional wait would make the Clock's arithmetic, and a test's, inexact). */
export const reconnectSchedule = (
  base: Duration.DurationInput = RECONNECT_DELAY,
  max: Duration.DurationInput = RECONNECT_DELAY_MAX
): Schedule.Schedule<Duration.Duration> =>
  Schedule.exponential(base, 2).pipe(
    Schedule.modifyDelay((_, d) => Duration.min(d, max)),
    Schedule.jitteredWith({ min: 0.5, max: 1 }),
    Schedule.modifyDelay((_, d) => Duration.millis(Math.round(Duration.toMillis(d))))
  )

/** Waits in a row: `wait` sleeps the next wait of the schedule, `reset` starts it again (a
 * reconnect that found the server alive). */
export interface Backoff {
  readonly wait: Effect.Effect<Duration.Duration>
  readonly reset: Effect.Effect<void>
}

export const backoff = (schedule: Schedule.Schedule<Duration.Duration> = reconnectSchedule()): Effect.Effect<Backoff> =>
  Effect.map(Schedule.driver(Schedule.delays(schedule)), (driver) => ({
    // The schedule never ends, so `next` never fails (orDie keeps the type honest).
    wait: Effect.orDie(driver.next(undefined)),
    reset: driver.reset
  }))
