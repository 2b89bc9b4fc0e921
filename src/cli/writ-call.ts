// `mandate writ call`: build and sign a call (spec section 5) under a chain file, checked by the
// same `verify_call` rules a receiver applies before it is written (so a call the leaf's bounds do
// not admit is refused here with its reason, never signed). Standing calls (section 8) have two
// shorthands: `--undo FILE` (a tally, or an answer holding one) and `--tallies HASH`.
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Option } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { parseJson } from "../kernel/json.js"
import { makeCall } from "../writ/issue.js"
import { cliError, forceOption, isObject, keyLayer, readChainFile, readObjectFile, runCommand, writeJson } from "./writ-io.js"

const options = {
  key: Options.file("key").pipe(Options.withDescription("Your key file (`from`, who signs)")),
  chain: Options.file("chain").pipe(Options.withDescription("The chain file the call runs under (root first)")),
  op: Options.text("op").pipe(Options.optional, Options.withDescription("The operation, e.g. travel/book (implied by --undo and --tallies)")),
  args: Options.text("args").pipe(Options.optional, Options.withDescription("The arguments as a JSON object")),
  argsFile: Options.file("args-file").pipe(Options.optional, Options.withDescription("The arguments from a JSON file")),
  undo: Options.file("undo").pipe(Options.optional, Options.withDescription("sys/undo (section 8.1) of this tally (a tally or an answer file)")),
  tallies: Options.text("tallies").pipe(Options.optional, Options.withDescription("sys/tallies (section 8.2) for this writ identity")),
  id: Options.text("id").pipe(Options.optional, Options.withDescription("The idempotency key (default: 16 random bytes)")),
  out: Options.file("out").pipe(Options.withDescription("Where to write the signed call")),
  force: forceOption
}

const argsOf = (o: {
  readonly op: Option.Option<string>
  readonly args: Option.Option<string>
  readonly argsFile: Option.Option<string>
  readonly undo: Option.Option<string>
  readonly tallies: Option.Option<string>
}) =>
  Effect.gen(function*() {
    const given = [o.args, o.argsFile, o.undo, o.tallies].filter(Option.isSome).length
    if (given > 1) return yield* Effect.fail(cliError("mandate/usage", "give one of --args, --args-file, --undo, --tallies"))
    if (Option.isSome(o.undo)) {
      const { value } = yield* readObjectFile(o.undo.value, "a tally or an answer")
      const tally = value.typ === "tally" ? value : value.tally
      if (!isObject(tally)) return yield* Effect.fail(cliError("malformed", "no tally in the file", o.undo.value))
      return { op: "sys/undo", args: { tally } as JsonObject }
    }
    if (Option.isSome(o.tallies)) return { op: "sys/tallies", args: { writ: o.tallies.value } as JsonObject }
    if (Option.isNone(o.op)) return yield* Effect.fail(cliError("mandate/usage", "--op is required"))
    let args: Json = {}
    if (Option.isSome(o.args)) {
      const p = parseJson(o.args.value, { maxDepth: 64, integersOnly: true })
      if (Either.isLeft(p)) return yield* Effect.fail(cliError(p.left.reason, `--args: ${p.left.message}`))
      args = p.right
    } else if (Option.isSome(o.argsFile)) args = (yield* readObjectFile(o.argsFile.value, "args")).value
    if (!isObject(args)) return yield* Effect.fail(cliError("malformed", "args is a JSON object"))
    return { op: o.op.value, args }
  })

export const writCallCommand = Command.make("call", options, (o) =>
  runCommand(Effect.gen(function*() {
    const chain = yield* readChainFile(o.chain)
    const { op, args } = yield* argsOf(o)
    const made = yield* makeCall({
      chain: chain as ReadonlyArray<JsonObject>,
      op,
      args,
      ...(Option.isSome(o.id) ? { id: o.id.value } : {})
    }).pipe(Effect.provide(yield* keyLayer(o.key)))
    yield* writeJson(o.out, made.call.json, o.force)
    yield* Console.log(`call ${made.call.id}`)
    yield* Console.log(`  op ${made.call.value.op} from ${made.call.value.from}`)
    yield* Console.log(`  to ${made.chain[made.chain.length - 1].value.hld}`)
    yield* Console.log(`written to ${o.out}`)
  }))
)
