// Section 9 with several processes on one store: a pending record is its owner's running operation
// until the owner's lease lapses; then another process's recovery takes the record over and
// resolves it. An owner that was only slow (its lease lapsed while it ran) finds, at step 12, that
// its record is no longer its pending one: it answers with the resolution the store holds, so one
// call id has one signed final tally wherever it is asked (never a second, different one).
import { Data, Effect, Option } from "effect"
import type { Performed, StepEnv } from "./state.js"
import { type AcceptedCall, StoreError } from "./stores.js"

/** Step 12 found the record resolved by another process: the step's writes are rolled back. */
export class ResolvedElsewhere extends Data.TaggedError("ResolvedElsewhere")<{}> {}

/**
 * The answer to give for `accepted` once another process resolved it: its stored final tally and
 * result, byte for byte (section 7 step 9). The call's audit entry is left to the caller (the
 * resolver audited its own resolution; this one records that it answered it).
 */
export const storedResolution = (
  env: StepEnv<"calls">,
  accepted: AcceptedCall
): Effect.Effect<Performed, StoreError> =>
  Effect.gen(function*() {
    const entry = yield* env.calls.get(accepted.leaf, accepted.id)
    if (Option.isNone(entry) || entry.value.state !== "final") {
      // Not possible while finalize answers false only for a record that is there and not ours;
      // said as a store failure, so step 12 answers pending (what the record will resolve to).
      return yield* Effect.fail(new StoreError({
        operation: "writ.finish",
        message: `call ${accepted.call} is neither this process's pending record nor final`
      }))
    }
    yield* Effect.logInfo("call resolved by another process sharing the store; answering its resolution")
    return { answer: { _tag: "tally", tally: entry.value.tally, res: entry.value.res } as const, audited: false }
  })
