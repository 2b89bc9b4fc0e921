// The proxy's bound on server notifications waiting for the client (docs/mcp-gate.md, Bounds): at
// most `max` are queued; past that they are dropped and logged, once per burst, never responses or
// requests, so a client that does not read costs bounded memory and the session goes on.
import { Effect } from "effect"

export const MAX_QUEUED_NOTIFICATIONS = 1000

export interface NoteBound {
  /** A notification from the server: whether to queue it (false: dropped). */
  readonly admit: () => boolean
  /** A queued notification was taken off the queue to be relayed. */
  readonly taken: () => void
}

/** The bound; `log` runs a warning outside any fiber (the transport's callback). */
export const noteBound = (max: number, log: (e: Effect.Effect<void>) => void): NoteBound => {
  let queued = 0
  let dropped = 0
  return {
    admit: () => {
      if (queued >= max) {
        // The client is not reading: this one is dropped, and the drops are told once per burst.
        if (dropped++ === 0) log(Effect.logWarning(`the client is not reading: server notifications past ${max} queued are dropped`))
        return false
      }
      if (dropped > 0 && queued === 0) {
        log(Effect.logWarning(`${dropped} server notifications were dropped`))
        dropped = 0
      }
      queued++
      return true
    },
    taken: () => {
      queued--
    }
  }
}
