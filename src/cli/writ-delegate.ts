// `mandate writ delegate`: a child writ (sections 4 and 7.5) of a writ you hold, narrowed by flags.
// The chain file is taken up with `holdChain` (verified, its leaf held by your key) and the child
// is built by `delegate`, which narrows the held writ and refuses, before signing, any child that
// section 4 would reject: no writ read from a file is ever signed as given (section 7.5).
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { delegate, holdChain } from "../writ/issue.js"
import { boundOptions, boundsFromFlags, expiryFromFlags } from "./writ-bounds.js"
import { forceOption, keyLayer, readChainFile, runCommand, writeJson } from "./writ-io.js"

const options = {
  key: Options.file("key").pipe(Options.withDescription("Your key file (the holder of the chain's last writ)")),
  chain: Options.file("chain").pipe(Options.withDescription("The chain file you hold (root first)")),
  hld: Options.text("hld").pipe(Options.withDescription("The new holder's did:key")),
  out: Options.file("out").pipe(Options.withDescription("Where to write the extended chain file")),
  force: forceOption,
  ...boundOptions
}

export const writDelegateCommand = Command.make("delegate", options, (o) =>
  runCommand(Effect.gen(function*() {
    const chain = yield* readChainFile(o.chain)
    const bnd = yield* boundsFromFlags(o)
    const exp = yield* expiryFromFlags(o)
    const issued = yield* Effect.gen(function*() {
      const held = yield* holdChain(chain)
      return yield* delegate(held, { hld: o.hld, bnd, ...(exp === undefined ? {} : { exp }) })
    }).pipe(Effect.provide(yield* keyLayer(o.key)))
    yield* writeJson(o.out, issued.chain as never, o.force)
    yield* Console.log(`writ ${issued.id} (child ${issued.chain.length - 1} of ${issued.writ.prv})`)
    yield* Console.log(`  iss ${issued.writ.iss}`)
    yield* Console.log(`  hld ${issued.writ.hld}`)
    yield* Console.log(`  exp ${issued.writ.exp}`)
    yield* Console.log(`written to ${o.out}`)
  }))
)
