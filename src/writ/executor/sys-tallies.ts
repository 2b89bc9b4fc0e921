// Section 8.2, `sys/tallies`: the tallies held under a writ of the call's chain, asked by the
// issuer of that writ or of one above it.
import { Effect } from "effect"
import type { JsonObject } from "../../kernel/json.js"
import type { CheckedWrit } from "../writ.js"
import type { Outcome } from "./services.js"
import type { StepEnv } from "./state.js"
import type { StoreError } from "./stores.js"

export const performTallies = (
  env: StepEnv<"tallies">,
  call: JsonObject,
  chain: ReadonlyArray<CheckedWrit>
): Effect.Effect<Outcome, StoreError> =>
  Effect.gen(function*() {
    const args = call.args as JsonObject
    const from = call.from as string
    const writ = args.writ
    // `from` issued the writ at index i; it may ask about that writ or any below it.
    const first = chain.findIndex((w) => w.value.iss === from)
    const index = typeof writ === "string" ? chain.findIndex((w) => w.id === writ) : -1
    if (typeof writ !== "string" || index < 0 || first < 0 || index < first) {
      return { st: "failed", code: "tally_mismatch" } as Outcome
    }
    const held = yield* env.tallies.underWrit(writ)
    return { st: "ok", res: { tallies: held.map((h) => h.object) } } as Outcome
  })
