// `mandate writ verify FILE`: the verdict on any Writ object file and, when it fails, its reason.
// A writ, a chain (array), a call, a revoke and an ack get section 6.1 (and section 4 for chains
// and calls, section 9.1 for revokes); a tally, or an answer file holding one, gets section 6.2
// when `--call` names the call it answers (a signed refusal the check `writ send` gives it,
// writ-check.ts `verifyAnswerTally`: one verdict for one object). Exit status 0 only for `valid`.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import type { Json } from "../kernel/json.js"
import { verifyAny } from "./writ-check.js"
import { describeFailure, exitRefused, readJson, runCommand } from "./writ-io.js"

const options = {
  call: Options.file("call").pipe(Options.optional, Options.withDescription("The call a tally answers (section 6.2 needs it)")),
  res: Options.file("res").pipe(Options.optional, Options.withDescription("A result or ack body to check against `out`")),
  executor: Options.text("executor").pipe(Options.optional, Options.withDescription("The receiver's did:key, to check a wrong_executor refusal it signed (as writ send --executor)")),
  now: Options.integer("now").pipe(Options.optional, Options.withDescription("Check expiry at this time (Unix seconds)"))
}

export const writVerifyCommand = Command.make(
  "verify",
  { file: Args.text({ name: "FILE" }).pipe(Args.withDescription("The object file")), ...options },
  (o) =>
    runCommand(Effect.gen(function*() {
      const { bytes, value } = yield* readJson(o.file)
      const call: Json | undefined = Option.isSome(o.call) ? (yield* readJson(o.call.value)).value : undefined
      const res: Json | undefined = Option.isSome(o.res) ? (yield* readJson(o.res.value)).value : undefined
      const report = yield* verifyAny(value, bytes, {
        ...(call === undefined ? {} : { call }),
        ...(res === undefined ? {} : { res }),
        ...(Option.isSome(o.executor) ? { receiver: o.executor.value } : {}),
        ...(Option.isSome(o.now) ? { now: o.now.value } : {})
      })
      yield* Console.log(`${report.kind}: ${report.verdict}${report.error ? `: ${describeFailure(report.error)}` : ""}`)
      for (const n of report.notes) yield* Console.log(`  ${n}`)
      if (report.verdict !== "valid") yield* exitRefused
    }))
)

