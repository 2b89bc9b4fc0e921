// Section 7 step 11 and 12 for an accepted call: perform the operation (a forward one through
// the application, `sys/tallies` (8.2) and `sys/undo` (8.1) by the executor), then sign and
// persist its tally.
import { Effect, Option } from "effect"
import type { CallAnswer } from "./answers.js"
import type { Admission } from "./admission.js"
import { finish } from "./finish.js"
import { operation, runApplication } from "./operation.js"
import { type Outcome, STORE_UNAVAILABLE } from "./services.js"
import type { ExecutorEnv } from "./state.js"
import { performTallies } from "./sys-tallies.js"
import { performUndo } from "./sys-undo.js"

export const perform = (
  env: ExecutorEnv,
  a: Extract<Admission, { readonly _tag: "accepted" }>
): Effect.Effect<CallAnswer> =>
  Effect.gen(function*() {
    const { accepted, checked, chain, stop } = a
    if (accepted.op === "sys/tallies") {
      const outcome = yield* performTallies(env, checked.json, chain).pipe(
        Effect.catchAll(() => Effect.succeed({ st: "failed", code: STORE_UNAVAILABLE } as Outcome))
      )
      return yield* finish(env, accepted, outcome, Effect.void)
    }
    if (accepted.op === "sys/undo") return yield* performUndo(env, accepted, checked.json, chain, stop)
    const outcome = yield* runApplication(env, operation(env, "forward", accepted, checked.json, stop, Option.none()))
    return yield* finish(env, accepted, outcome, Effect.void)
  })
