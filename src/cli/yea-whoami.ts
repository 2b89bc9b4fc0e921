// `mandate yea whoami` (docs/cli.md): this machine's agent key, whether the principal key is
// here too (an agent with shell access could read it: said as a warning), the home folders and
// how many grants are saved. Reads only; creates nothing.
import { Command } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { agentKeyPath, principalKeyPath, readGrants, readPublicKey, yeaHome } from "./yea-home.js"
import { runCommand } from "./writ-io.js"

export const yeaWhoamiCommand = Command.make("whoami", {}, () =>
  runCommand(
    Effect.gen(function* () {
      const h = yield* yeaHome
      const agent = yield* Effect.either(readPublicKey(agentKeyPath(h)))
      yield* Console.log(`home:          ${h.home}`)
      yield* Console.log(`agent key:     ${agent._tag === "Right" ? agent.right : `none (${agent.left.reason}); run \`mandate yea init --agent-only\``}`)
      const principal = yield* Effect.option(readPublicKey(principalKeyPath(h)))
      yield* Console.log(`principal key: ${Option.match(principal, { onNone: () => "not on this machine", onSome: (k) => `${k} (${principalKeyPath(h)})` })}`)
      const grants = yield* Effect.orElseSucceed(readGrants(h), () => [] as ReadonlyArray<string>)
      yield* Console.log(`grants:        ${grants.length} saved`)
      if (Option.isSome(principal)) yield* Console.error("warning: the principal key is readable here; an agent with shell access could read it and sign its own consent")
    })
  )
)
