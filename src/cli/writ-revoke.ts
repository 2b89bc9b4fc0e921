// `mandate writ revoke`: a revoke (spec section 9.1) of the last writ of a chain you issued a writ
// in, or with `--all` of every writ your key ever issued (`writ` "*"). Send it with `writ send`.
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { makeRevoke } from "../writ/issue.js"
import { cliError, forceOption, keyLayer, readChainFile, runCommand, writeJson } from "./writ-io.js"

const options = {
  key: Options.file("key").pipe(Options.withDescription("Your key file (the revoker, an issuer on the chain)")),
  chain: Options.file("chain").pipe(Options.optional, Options.withDescription("Chain file, root to the writ revoked")),
  all: Options.boolean("all").pipe(Options.withDescription("Revoke every writ your key issued (key-wide, writ \"*\")")),
  out: Options.file("out").pipe(Options.withDescription("Where to write the revoke")),
  force: forceOption
}

export const writRevokeCommand = Command.make("revoke", options, (o) =>
  runCommand(Effect.gen(function*() {
    if (o.all === Option.isSome(o.chain)) return yield* Effect.fail(cliError("mandate/usage", "give --chain FILE or --all"))
    const spec = Option.isSome(o.chain) ? { chain: yield* readChainFile(o.chain.value) } : { writ: "*" as const }
    const r = yield* makeRevoke(spec as never).pipe(Effect.provide(yield* keyLayer(o.key)))
    yield* writeJson(o.out, r.revoke.json, o.force)
    yield* Console.log(`revoke ${r.revoke.id} of ${r.revoke.value.writ}`)
    yield* Console.log(`written to ${o.out}`)
  }))
)
