// `mandate keygen FILE`: a new Ed25519 key (spec section 1.3) as a seed file readable by its owner
// only (mode 0600), and its did:key printed on stdout. `--show` prints the did:key of an existing
// key file instead, after the same permission check every command applies when it reads a key.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { RandomBytes } from "../kernel/services.js"
import { didOfSeed, readKeyFile, runCommand, writeKeyFile } from "./writ-io.js"

const file = Args.text({ name: "FILE" }).pipe(Args.withDescription("The key file to create (or, with --show, to read)"))
const show = Options.boolean("show").pipe(Options.withDescription("Print the did:key of an existing key file; write nothing"))

export const keygenCommand = Command.make("keygen", { file, show }, ({ file, show }) =>
  runCommand(Effect.gen(function*() {
    if (show) {
      yield* Console.log(didOfSeed(yield* readKeyFile(file)))
      return
    }
    const random = yield* RandomBytes
    const seed = yield* random.bytes(32)
    yield* writeKeyFile(file, seed)
    yield* Console.log(didOfSeed(seed))
  }).pipe(Effect.provide(RandomBytes.live)))
)
