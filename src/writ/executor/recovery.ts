// Section 9, recovery after restart: every pending call record is resolved to a final tally (the
// application's recovered outcome, else `failed` with `unknown_outcome`), and every reversal that
// began and never reported becomes unknown (8.1).
import { Effect, Option } from "effect"
import { audit } from "./audit.js"
import { finish, type FinishEnv } from "./finish.js"
import type { Outcome } from "./services.js"
import { unixSeconds } from "../../kernel/clock.js"
import type { StepEnv } from "./state.js"
import { StoreError } from "./stores.js"
import { identity } from "./tally-sign.js"

/** Resolves every pending record; returns how many there were. */
export const recover = (env: FinishEnv & StepEnv<"app" | "reversals", "recovering">): Effect.Effect<number, StoreError> =>
  Effect.gen(function*() {
    env.state.recovering = true
    // A reversal that began and never reported: its outcome is unknown (section 8.1).
    yield* env.atomic.transaction(env.reversals.markBegunUnknown)
    // With several processes on one store, only the records of processes that are gone.
    const pending = yield* (env.calls.claimOrphans ?? env.calls.pending)
    for (const p of pending) {
      const found = env.app.recover === undefined ? Option.none<Outcome>() : yield* env.app.recover(p)
      const outcome: Outcome = Option.isSome(found) && !p.standing
        ? found.value
        : { st: "failed", code: "unknown_outcome" }
      // No audit fields here: the crash lost them, so the entry is written below from the record.
      const { answer } = yield* finish(env, p, outcome, Effect.void, null)
      // The call's audit entry: the crash lost the one it would have had when answered (9.3).
      yield* audit(env, {
        time: yield* unixSeconds, kind: "call", identity: p.call, unparsed: null, principal: null, peer: null,
        root: null, leaf: p.leaf, op: p.op, outcome: answer._tag === "tally" ? String(answer.tally.st) : "error",
        reason: outcome.st === "ok" ? null : (outcome.code ?? null),
        signed: answer._tag === "tally" ? identity(answer.tally) : null
      })
      if (answer._tag === "tally" && answer.tally.st === "pending") {
        return yield* Effect.fail(
          new StoreError({ operation: "writ.recover", message: `pending record ${p.call} could not be resolved` })
        )
      }
    }
    return pending.length
  }).pipe(Effect.ensuring(Effect.sync(() => void (env.state.recovering = false))))
