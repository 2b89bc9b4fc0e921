// C, the payment agent of the demo (spec Appendix A): a handler module for `mandate writ serve`
// (shipped built as dist/examples/payment.js: `--handler dist/examples/payment.js`).
// `travel/charge` charges (a fake charge, an id and the amount) and promises a reversal window in
// `rev`; `sys/undo` refunds it. A charge whose args carry `hold` does not finish on its own: it
// announces itself (a marker file in MANDATE_DEMO_SIGNAL_DIR, so the demo knows the work is in
// flight) and waits for the executor's stop signal, which a revoke raises (section 9.1); it then
// reports `canceled` with code `revoked` (the executor's own convention, services.ts
// `cancelOnStop`), because it did stop.
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Config, Duration, Effect, Option } from "effect"
import type { ApplicationService, Operation, Outcome } from "../writ/executor/services.js"

/** The reversal window the demo's executors promise (section 6 `rev`). */
export const REVERSAL_WINDOW = 86400

const num = (v: unknown): number => (typeof v === "number" ? v : 0)

const announceHeld = (op: Operation) =>
  Effect.gen(function*() {
    const dir = yield* Config.option(Config.string("MANDATE_DEMO_SIGNAL_DIR"))
    if (Option.isNone(dir)) return
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFileString(`${dir.value}/held-${op.callId}`, op.op)
  }).pipe(Effect.provide(NodeContext.layer), Effect.ignore)

const charge = (op: Operation): Outcome => ({
  st: "ok",
  res: { charge: `ch_${op.callId.slice(0, 10)}`, amount: num(op.args.amount), currency: String(op.args.currency ?? "") },
  used: { amount: num(op.args.amount) },
  rev: op.acc + REVERSAL_WINDOW
})

export const application: ApplicationService = {
  perform: (op) => {
    if (op.kind === "undo") {
      const target = Option.getOrUndefined(op.target)
      return Effect.succeed({ st: "ok", res: { refund: `re_${(target?.tally ?? "").slice(0, 10)}`, of: target?.tally ?? null } })
    }
    if (op.args.hold === undefined) return Effect.succeed(charge(op))
    // Held work: runs until told to stop (then `canceled`), or completes after 30 s. The race
    // is made interruptible (the executor may run operations in an uninterruptible region) so
    // the losing timer is dropped at once instead of being waited for.
    return Effect.zipRight(
      announceHeld(op),
      Effect.interruptible(Effect.raceFirst(
        Effect.as(op.stopSignal, { st: "canceled", code: "revoked" } as Outcome),
        Effect.as(Effect.disconnect(Effect.sleep(Duration.seconds(30))), charge(op))
      ))
    )
  }
}

export default application
