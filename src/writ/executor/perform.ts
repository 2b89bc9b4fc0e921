// Section 7 step 11 and 12 for an accepted call: perform the operation (a forward one through
// the application, `sys/tallies` (8.2) and `sys/undo` (8.1) by the executor), then sign and
// persist its tally.
import { Effect, Option } from "effect"
import type { Admission } from "./admission.js"
import { finish, type FinishEnv } from "./finish.js"
import { operation, runApplication } from "./operation.js"
import { type Outcome, STORE_UNAVAILABLE } from "./services.js"
import type { Performed, StepEnv } from "./state.js"
import { performTallies } from "./sys-tallies.js"
import { performUndo } from "./sys-undo.js"

/** What performing reads: step 12's stores and key, the application, and the reversals (8.1). */
export type PerformEnv = FinishEnv & StepEnv<"app" | "did" | "reversals", "reversing">

/** Steps 11 and 12 for an accepted call; its audit fields (`a.base`) go with its final tally. */
export const perform = (
  env: PerformEnv,
  a: Extract<Admission, { readonly _tag: "accepted" }>
): Effect.Effect<Performed> =>
  Effect.gen(function*() {
    const { accepted, base, checked, chain, stop } = a
    if (accepted.op === "sys/tallies") {
      const outcome = yield* performTallies(env, checked.json, chain).pipe(
        Effect.catchAll(() => Effect.succeed({ st: "failed", code: STORE_UNAVAILABLE } as Outcome))
      )
      return yield* finish(env, accepted, outcome, Effect.void, base)
    }
    if (accepted.op === "sys/undo") return yield* performUndo(env, accepted, base, checked.json, chain, stop)
    const outcome = yield* runApplication(env, operation(env, "forward", accepted, checked.json, stop, Option.none()))
    return yield* finish(env, accepted, outcome, Effect.void, base)
  })
