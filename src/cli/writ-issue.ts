// `mandate writ issue`: a root writ (spec section 2) from your key to a holder, with bounds from
// flags (section 3). Written as a chain file of one writ, the file a holder delegates or calls from.
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { issueRoot } from "../writ/issue.js"
import { boundOptions, boundsFromFlags, expiryFromFlags, maxTtlOption, seconds } from "./writ-bounds.js"
import { cliError, forceOption, keyLayer, runCommand, writeJson } from "./writ-io.js"

const options = {
  key: Options.file("key").pipe(Options.withDescription("Your key file (the issuer, who signs)")),
  hld: Options.text("hld").pipe(Options.withPseudoName("DID"), Options.withDescription("The holder's did:key")),
  out: Options.file("out").pipe(Options.withDescription("Where to write the chain file (a JSON array holding the writ)")),
  force: forceOption,
  maxTtl: maxTtlOption,
  ...boundOptions
}

export const writIssueCommand = Command.make("issue", options, (o) =>
  runCommand(Effect.gen(function*() {
    const bnd = yield* boundsFromFlags(o)
    if (bnd.act === undefined) return yield* Effect.fail(cliError("mandate/usage", "a root writ needs --act (section 3.2)"))
    const exp = yield* expiryFromFlags(o, yield* seconds("max-ttl", o.maxTtl))
    if (exp === undefined) return yield* Effect.fail(cliError("mandate/usage", "a root writ needs --exp or --ttl"))
    const issued = yield* issueRoot({ hld: o.hld, bnd, exp }).pipe(Effect.provide(yield* keyLayer(o.key)))
    yield* writeJson(o.out, issued.chain as never, o.force)
    yield* Console.log(`writ ${issued.id}`)
    yield* Console.log(`  iss ${issued.writ.iss}`)
    yield* Console.log(`  hld ${issued.writ.hld}`)
    yield* Console.log(`  exp ${issued.writ.exp}`)
    yield* Console.log(`written to ${o.out}`)
  }))
)
