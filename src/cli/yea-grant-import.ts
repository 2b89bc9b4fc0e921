// `mandate yea grant-import TOKEN|FILE`: saves a grant issued on another device to this machine's
// agent key, so the principal key never has to be here (docs/cli.md, "Identity and policy").
//
// The grant is checked before it is saved, as a service would check it (§6.4), with this machine's
// agent key standing for the proof key: it decodes (step 1), every block's signature verifies and
// every `prev` names the block before (steps 2, 3), its root is a principal given with `--trust`
// (step 4; without `--trust` the principal is printed for the user to compare), and its holder is
// this agent (step 5). Its caveats are well-formed and it has not expired (§6.3: a malformed caveat
// or a passed `exp` makes every request under it `forbidden`, so saving it would only make `yea do`
// send a grant that is refused). Each refusal names the protocol's reason code; a caveat is the
// grant's own text, printed safe for a terminal.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { unixSeconds } from "../kernel/clock.js"
import { caveatProblem } from "../yea/caveat.js"
import { decodeGrant, TOKEN_PREFIX, verifyChain } from "../yea/grant.js"
import { grantReason } from "../yea/grant-reason.js"
import { isKey } from "../yea/keys.js"
import { printable } from "../yea/lens/printable.js"
import { agentKeyPath, grantsPath, yeaHome, readGrants, readPublicKey, saveGrant } from "./yea-home.js"
import { cliError, readBytes, runCommand } from "./writ-io.js"

const source = Args.text({ name: "TOKEN|FILE" }).pipe(Args.withDescription("a pg1. grant token, or a file holding one"))
const trust = Options.text("trust").pipe(
  Options.repeated,
  Options.withDescription("a principal's ed25519: key the grant must be issued by (repeatable; default: any, printed to check)")
)

/** The token itself, or the one-token text of a file. */
const tokenOf = (text: string) =>
  text.startsWith(TOKEN_PREFIX)
    ? Effect.succeed(text.trim())
    : Effect.map(readBytes(text), (bytes) => new TextDecoder().decode(bytes).trim())

export const yeaGrantImportCommand = Command.make("grant-import", { source, trust }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const bad = o.trust.find((k) => !isKey(k))
      if (bad !== undefined) return yield* Effect.fail(cliError("invalid_params", "not a canonical ed25519: key", "--trust"))
      const h = (yield* yeaHome)
      const agent = yield* readPublicKey(agentKeyPath(h))
      const token = yield* tokenOf(o.source)
      const grant = yield* Effect.mapError(decodeGrant(token), (e) => cliError(e.reason, e.message, e.path ?? "TOKEN"))
      yield* Effect.mapError(verifyChain(grant, { trusted: o.trust.length > 0 ? o.trust : [grant.principal], proofKey: agent }), (e) =>
        cliError(e.reason, e.message, e.path ?? "TOKEN")
      )
      const now = yield* unixSeconds
      for (const [b, block] of grant.blocks.entries()) {
        for (const [c, caveat] of block.caveats.entries()) {
          const where = `blocks[${b}].p.caveats[${c}]`
          if (caveatProblem(caveat) !== undefined) return yield* Effect.fail(cliError("forbidden", printable(grantReason.malformedCaveat(caveat)), where))
          const exp = (caveat as { exp?: number }).exp
          if (exp !== undefined && !(now < exp)) return yield* Effect.fail(cliError("forbidden", grantReason.expired, where))
        }
      }
      const had = (yield* readGrants(h)).includes(token)
      const path = had ? grantsPath(h) : yield* saveGrant(h, token)
      yield* Console.log(`grant      ${grant.id}`)
      yield* Console.log(`principal  ${grant.principal}`)
      yield* Console.log(`holder     ${grant.holder} (this agent)`)
      yield* Console.error(`${had ? "already saved in" : "saved to"} ${path}`)
      if (o.trust.length === 0) yield* Console.error("check that the principal above is the key you expect (or pass it with --trust)")
    })
  )
)
