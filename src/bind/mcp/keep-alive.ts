// Approval forms a person fills in while a tool call waits (SPEC-approval; MCP
// basic/utilities/progress). A client gives up on a request after its own time limit (60 s in
// the SDK), and a person typing a phrase can take longer. While a form is open, the call that asked
// gets a progress notification every KEEP_ALIVE under the client's own progress token, so a client
// that restarts its limit on progress (the SDK's `resetTimeoutOnProgress`) keeps the call; and the
// form request itself waits up to FORM_TIMEOUT, not the SDK's 60 s default.
import { Duration, Effect, Schedule } from "effect"
import type { Extra } from "./context.js"

/** How long the server waits for a form to come back. */
export const FORM_TIMEOUT = Duration.minutes(30)
export const FORM_TIMEOUT_MS = Duration.toMillis(FORM_TIMEOUT)
/** How often a waiting call gets progress. */
export const KEEP_ALIVE = Duration.seconds(15)

/** The progress notification's message while a form is open. */
export const WAITING_MESSAGE = "waiting for a person to answer the approval form"

/** `self` (the open form), with progress sent to the call of `extra` every `every` until it ends.
 * A call whose client gave no progress token gets none (MCP: progress only under a token). */
export const whileAsking = <A, E, R>(
  extra: Pick<Extra, "_meta" | "sendNotification"> | undefined,
  self: Effect.Effect<A, E, R>,
  every: Duration.DurationInput = KEEP_ALIVE
): Effect.Effect<A, E, R> => {
  const token = extra?._meta?.progressToken
  if (extra === undefined || token === undefined) return self
  let sent = 0
  const tick = Effect.promise(() =>
    extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: ++sent, message: WAITING_MESSAGE } })
      .catch(() => undefined)
  )
  return Effect.scoped(Effect.zipRight(
    Effect.forkScoped(Effect.repeat(tick, Schedule.spaced(every)).pipe(Effect.delay(every))),
    self
  ))
}
