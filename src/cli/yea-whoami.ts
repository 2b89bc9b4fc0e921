// `mandate yea whoami`: the public keys this machine holds and where they live (docs/cli.md,
// "Identity and policy": the principal's public key is what a service pins and what a grant's
// verifier trusts; the agent's is what a grant names as its holder, SPEC §6.2).
//
// Only public keys are printed, never a seed. A key that is not there is said as `none`; the
// command fails `mandate/no_key` only when neither key is there (nothing to show). Any other
// problem with a key file (a symbolic link, a folder others can write) fails with its reason,
// as every command reading the keys does (yea-home.ts).
import { Command } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { cliEnv } from "./io.js"
import { agentKeyPath, homeFromEnv, principalKeyPath, readPublicKey } from "./yea-home.js"
import { type CliError, cliError, runCommand } from "./writ-io.js"

/** The key of a key file, or None when there is no file (any other failure stays a failure). */
const keyIfAny = (path: string): Effect.Effect<Option.Option<string>, CliError, FileSystem.FileSystem> =>
  readPublicKey(path).pipe(
    Effect.map(Option.some),
    Effect.catchIf((e) => e.reason === "mandate/no_key", () => Effect.succeedNone)
  )

const line = (label: string, key: Option.Option<string>, path: string): string =>
  `${label.padEnd(11)}${Option.getOrElse(key, () => "none")}  ${path}`

export const yeaWhoamiCommand = Command.make("whoami", {}, () =>
  runCommand(
    Effect.gen(function* () {
      const h = homeFromEnv(yield* cliEnv)
      const agent = yield* keyIfAny(agentKeyPath(h))
      const principal = yield* keyIfAny(principalKeyPath(h))
      if (Option.isNone(agent) && Option.isNone(principal)) {
        return yield* Effect.fail(cliError("mandate/no_key", "no agent or principal key here; run `mandate yea init`", h.home))
      }
      yield* Console.log(`home       ${h.home}`)
      yield* Console.log(line("agent", agent, agentKeyPath(h)))
      yield* Console.log(line("principal", principal, principalKeyPath(h)))
      // design.md, known limits: a principal key the agent can read lets it sign its own consent.
      if (Option.isSome(principal) && Option.isSome(agent)) {
        yield* Console.error("note: the principal key is readable on this machine; an agent with shell access could read it too")
      }
    })
  )
)
