// B, the booking agent of the demo (spec Appendix A): a handler module for `mandate writ serve`
// (shipped built as dist/examples/booking.js).
// `travel/book` delegates the charge to C (section 7.5): it takes up the chain it runs under with
// `holdChain` (its own key, MANDATE_DEMO_KEY), narrows it with `delegate` to a child writ for C
// (`act` travel/charge, `amount` at most the booking's amount, one use), records that writ before
// sending it, calls C over the HTTP binding (MANDATE_DEMO_C_URL), records C's tally before acting
// on it, and reports C's tally in `sub` and the child writ in `wrt` (the executor adds both from
// what was recorded). C never answering is `failed` with `undeliverable` (section 9.2).
import { NodeContext } from "@effect/platform-node"
import { Config, Duration, Effect, Layer, Option } from "effect"
import type { JsonObject } from "../kernel/json.js"
import { isJsonObject } from "../kernel/json.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { postWrit } from "../bind/writ-http/client.js"
import { delegate, holdChain, makeCall } from "../writ/issue.js"
import type { ApplicationService, Operation, Outcome } from "../writ/executor/services.js"
import { readSeedFile } from "../app/inputs.js"
import { REVERSAL_WINDOW } from "./payment.js"

const settings = Config.all({
  key: Config.string("MANDATE_DEMO_KEY"),
  cUrl: Config.string("MANDATE_DEMO_C_URL"),
  cDid: Config.string("MANDATE_DEMO_C_DID")
})

const num = (v: unknown): number => (typeof v === "number" ? v : 0)

const book = (op: Operation): Effect.Effect<Outcome, unknown> =>
  Effect.gen(function*() {
    const cfg = yield* settings
    const seed = yield* readSeedFile(cfg.key)
    const keys = Layer.merge(Signer.fromSeed(seed), RandomBytes.live)
    return yield* Effect.gen(function*() {
      const held = yield* holdChain(op.chain)
      const amount = num(op.args.amount)
      // Section 7.5: the child is built by narrowing the writ B holds, never signed from data.
      const child = yield* delegate(held, {
        hld: cfg.cDid,
        bnd: {
          act: { t: "prefix", v: "travel/charge" },
          amount: { t: "max", v: amount },
          uses: { t: "count", v: 1 }
        }
      })
      // Persisted before it is sent to anyone (section 7.5).
      yield* op.recordIssued(child.json)
      const args: Record<string, unknown> = {}
      for (const k of ["amount", "currency", "fare", "date", "pnr", "hold"]) if (op.args[k] !== undefined) args[k] = op.args[k]
      const call = yield* makeCall({ chain: child.chain, op: "travel/charge", args: args as JsonObject })
      const answer = yield* Effect.either(postWrit(cfg.cUrl, call.call.json, { timeout: Duration.seconds(60) }))
      const tally = answer._tag === "Right" ? Option.flatMap(answer.right.json, (j) => (isJsonObject(j) && isJsonObject(j.tally) ? Option.some(j.tally) : Option.none())) : Option.none()
      if (Option.isNone(tally)) return { st: "failed", code: "undeliverable" } as Outcome
      // Persisted before B acts on its contents (section 7.5); kept only if it verifies as C's.
      yield* op.recordSub(tally.value)
      const t = tally.value
      const res = answer._tag === "Right" ? Option.getOrUndefined(answer.right.json) : undefined
      const chargeBody = isJsonObject(res) && res.res !== undefined ? res.res : null
      const used = isJsonObject(t.used) ? num(t.used.amount) : 0
      if (t.st === "ok") {
        return {
          st: "ok",
          res: { booking: `bk_${op.callId.slice(0, 10)}`, pnr: String(op.args.pnr ?? ""), charge: chargeBody },
          used: { amount: used },
          rev: op.acc + REVERSAL_WINDOW
        } as Outcome
      }
      if (t.st === "canceled") return { st: "canceled", code: "revoked" } as Outcome
      return { st: "failed", code: "demo/charge_failed" } as Outcome
    }).pipe(Effect.provide(keys))
  }).pipe(Effect.provide(NodeContext.layer))

export const application: ApplicationService = {
  perform: (op) => {
    if (op.kind === "undo") return Effect.succeed({ st: "ok", res: { unbooked: Option.getOrUndefined(op.target)?.tally ?? null } } as Outcome)
    return book(op).pipe(
      Effect.catchAll(() => Effect.succeed({ st: "failed", code: "demo/booking_error" } as Outcome))
    )
  }
}

export default application
