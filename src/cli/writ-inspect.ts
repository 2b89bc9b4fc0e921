// `mandate writ inspect FILE`: a tally tree (a tally, or an answer file holding one) drawn as an
// indented tree, one hop per line with its signer, op, st, used and the check result of that hop.
// With `--call` the whole tree is checked by section 6.2 and the hop where it first fails is marked.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import type { Json } from "../kernel/json.js"
import { drawTreeChecked } from "./writ-check.js"
import { cliError, exitRefused, isObject, readJson, runCommand } from "./writ-io.js"

const file = Args.text({ name: "FILE" }).pipe(Args.withDescription("A tally, or an answer file holding one"))
const options = {
  call: Options.file("call").pipe(Options.optional, Options.withDescription("The call the tally answers (checks the tree, section 6.2)"))
}

export const writInspectCommand = Command.make("inspect", { file, ...options }, (o) =>
  runCommand(Effect.gen(function*() {
    const { value } = yield* readJson(o.file)
    let tally: Json = value
    let res: Json | undefined
    if (isObject(value) && value.typ === undefined && isObject(value.tally)) {
      tally = value.tally
      res = value.res
    }
    if (!isObject(tally) || tally.typ !== "tally") return yield* Effect.fail(cliError("wrong_type", "inspect takes a tally or an answer holding one", o.file))
    const call = Option.isSome(o.call) ? (yield* readJson(o.call.value)).value : undefined
    const drawn = yield* drawTreeChecked(tally, call, res)
    for (const line of drawn.lines) yield* Console.log(line)
    // Exit status 1 when the tree was checked and is not valid.
    if (drawn.verdict !== "valid" && drawn.verdict !== "unchecked") yield* exitRefused
  }))
)
