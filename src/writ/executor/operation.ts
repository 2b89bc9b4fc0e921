// Section 7 step 11: the operation handed to the application, and running it. The application
// is a service (src/writ/executor/services.ts); whatever it returns or dies with, the executor
// gets an outcome it can sign.
import { Deferred, Effect, Option } from "effect"
import type { JsonObject } from "../../kernel/json.js"
import { verifyTallyObject } from "../tally.js"
import { APPLICATION_ERROR, type Operation, type Outcome } from "./services.js"
import type { StepEnv } from "./state.js"
import type { AcceptedCall, HeldTally } from "./stores.js"
import { hashOf, identity } from "./tally-sign.js"

/** An outcome the executor can sign: a known `st`, a string code, integer `rev`, JSON `res`. */
const wellFormed = (o: Outcome): boolean => {
  if (typeof o !== "object" || o === null || !["ok", "failed", "canceled"].includes(o.st)) return false
  if (o.code !== undefined && typeof o.code !== "string") return false
  if (o.rev !== undefined && !Number.isSafeInteger(o.rev)) return false
  if (o.used !== undefined && (typeof o.used !== "object" || o.used === null)) return false
  if (o.res !== undefined) {
    try {
      hashOf(o.res)
    } catch {
      return false
    }
  }
  return true
}

/** The operation of an accepted call: a forward one, or the reversal of a sys/undo (8.1). */
export const operation = (
  env: StepEnv<"delegations", "delegating">,
  kind: Operation["kind"],
  accepted: AcceptedCall,
  call: JsonObject,
  stop: Deferred.Deferred<void>,
  target: Option.Option<HeldTally>
): Operation => ({
  kind,
  call,
  callId: accepted.call,
  op: accepted.op,
  args: call.args as JsonObject,
  acc: accepted.acc,
  chain: call.chain as ReadonlyArray<JsonObject>,
  target,
  stopSignal: Deferred.await(stop),
  stopRequested: Deferred.isDone(stop),
  recordIssued: (writ) =>
    Effect.zipRight(Effect.sync(() => env.state.delegating.add(accepted.call)), env.delegations.recordIssued({
      leaf: accepted.leaf,
      id: accepted.id,
      writ: identity(writ),
      hld: typeof writ.hld === "string" ? writ.hld : "",
      above: accepted.chain,
      aboveIssuers: accepted.issuers,
      object: writ
    })),
  recordSub: (sub) =>
    Effect.gen(function*() {
      // Section 7.5: a sub-tally passes section 6.1 under the child writ's holder, or is left out.
      const { wrt } = yield* env.delegations.forCall(accepted.leaf, accepted.id)
      const named = wrt.find((w) => identity(w) === sub.writ)
      if (named === undefined || typeof named.hld !== "string") return false
      return yield* verifyTallyObject(sub, named.hld).pipe(
        Effect.flatMap((checked) =>
          env.delegations.recordSub({
            leaf: accepted.leaf,
            id: accepted.id,
            subCall: checked.value.call,
            signer: named.hld as string,
            object: sub
          })
        ),
        Effect.as(true),
        Effect.catchTag("WritError", () => Effect.succeed(false))
      )
    })
})

/** Performs `op` with the application; a malformed outcome or a failure is `failed`. */
export const runApplication = (env: StepEnv<"app">, op: Operation): Effect.Effect<Outcome> =>
  env.app.perform(op).pipe(
    Effect.flatMap((outcome) =>
      wellFormed(outcome)
        ? Effect.succeed(outcome)
        : Effect.as(Effect.logWarning("application returned a malformed outcome"), {
          st: "failed",
          code: APPLICATION_ERROR
        } as Outcome)
    ),
    Effect.catchAllCause((cause) =>
      Effect.as(Effect.logWarning("application failed", cause), { st: "failed", code: APPLICATION_ERROR } as Outcome)
    )
  )
