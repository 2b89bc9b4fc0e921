// A Clock whose time is set, in whole seconds, by whoever drives the executor (the scenario
// runner's section 14.1 `now`, and tests). Only the time is set: sleeping waits on `base`.
import type { Duration } from "effect"
import { Effect } from "effect"
import * as Clock from "effect/Clock"

export interface SettableClock {
  readonly clock: Clock.Clock
  /** Sets the time to `seconds` since the epoch. */
  readonly set: (seconds: number) => void
}

/** A clock reading `startSeconds` until set; its `sleep` is `base`'s. */
export const settableClock = (base: Clock.Clock, startSeconds = 0): SettableClock => {
  let millis = startSeconds * 1000
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    unsafeCurrentTimeNanos: () => BigInt(millis) * 1_000_000n,
    currentTimeMillis: Effect.sync(() => millis),
    currentTimeNanos: Effect.sync(() => BigInt(millis) * 1_000_000n),
    sleep: (d: Duration.Duration) => base.sleep(d)
  }
  return { clock, set: (seconds: number) => void (millis = seconds * 1000) }
}
