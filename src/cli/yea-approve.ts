// `mandate yea approve <pc1.code> [--to KEY]` (docs/cli.md; SPEC §6.6): shows a proposal's real
// effects, uses, risk and undo, re-checks its hash, asks for confirmation and signs a one-time
// consent with the principal key, printed to paste back to the agent.
//
// The checks are the library's (src/yea/approve.ts, shared with the MCP bridge's approver). This
// command adds what only a terminal can: it runs only when both stdin and stdout are a terminal,
// so that an agent driving the shell through pipes cannot approve its own request (design.md,
// known limits: this does not stop an agent that can open a terminal on the same account).
import { Args, Command, Options } from "@effect/cli"
import { Terminal } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import { RandomBytes, Signer } from "../kernel/services.js"
import { reviewConsentCode, signConsentCode } from "../yea/approve.js"
import { isKey } from "../yea/keys.js"
import { agentKeyPath, homeFromEnv, principalKeyPath, readKey, readPublicKey } from "./yea-home.js"
import { cliError, runCommand } from "./writ-io.js"

const code = Args.text({ name: "CODE" }).pipe(Args.withDescription("the pc1. consent code the agent printed"))
const to = Options.text("to").pipe(Options.optional, Options.withDescription("the agent key the consent is for, after checking its fingerprint with the agent"))

/** Whether a person is at this process's terminal (both ends). The CLI is the composition root. */
const interactive = Effect.sync(() => process.stdin.isTTY === true && process.stdout.isTTY === true)

export const yeaApproveCommand = Command.make("approve", { code, to }, (o) =>
  runCommand(
    Effect.gen(function* () {
      if (!(yield* interactive)) {
        return yield* Effect.fail(cliError("mandate/not_interactive", "approve runs only at an interactive terminal (stdin and stdout), never from a pipe or a script"))
      }
      const explicit = Option.getOrUndefined(o.to)
      if (explicit !== undefined && !isKey(explicit)) return yield* Effect.fail(cliError("invalid_params", "not a canonical ed25519: key", "--to"))
      const h = homeFromEnv()
      const localAgent = Option.getOrUndefined(yield* Effect.option(readPublicKey(agentKeyPath(h))))
      const review = yield* Effect.mapError(
        reviewConsentCode(o.code, { ...(localAgent !== undefined ? { localAgent } : {}), ...(explicit !== undefined ? { to: explicit } : {}) }),
        (e) => cliError(e.reason, e.message, e.path)
      )
      const principal = yield* readKey(principalKeyPath(h))
      yield* Console.log("Approve this proposal?")
      for (const line of review.lines) yield* Console.log("  " + line)
      const terminal = yield* Terminal.Terminal
      yield* Effect.orDie(terminal.display("Sign a one-time consent for exactly this? [y/N] "))
      const answer = yield* Effect.mapError(terminal.readLine, () => cliError("mandate/declined", "no answer; nothing signed"))
      if (!/^y(es)?$/i.test(answer.trim())) return yield* Effect.fail(cliError("mandate/declined", "not approved; nothing signed"))
      const grant = yield* Effect.mapError(signConsentCode(review), (e) => cliError(e.reason, e.message, e.path)).pipe(
        Effect.provide(Layer.merge(Signer.fromSeed(principal), RandomBytes.live))
      )
      yield* Console.error("consent signed; paste it back to the agent:")
      yield* Console.log(grant)
    })
  )
)
