// `mandate yea init | grant | delegate` (docs/cli.md "Identity and policy"; SPEC §6.2 to §6.4).
//
// `init` creates the agent key in $YEA_HOME (default ~/.yea) and the principal key in $YEA_PRINCIPAL_HOME
// (yea-home.ts), both mode 0600, and warns when the two share a folder: an agent with shell access
// could then read the principal key and sign its own consent (design.md, known limits).
// `grant` signs a root grant with the principal key (to this machine's agent unless `--to`) and
// saves it for `do` when this machine's agent holds it. `delegate` narrows a grant the agent holds
// for another key: the new block can only add caveats (§6.3, every block must hold).
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Either, Layer, Option } from "effect"
import { unixSeconds } from "../kernel/clock.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { decodeGrant, delegateGrant, issueRootGrant, verifyChain } from "../yea/grant.js"
import { isKey } from "../yea/keys.js"
import type { YeaError } from "../yea/reason.js"
import { caveatOptions, caveatsOf } from "./yea-caveats.js"
import { agentKeyPath, createKey, yeaHome, principalKeyPath, readKey, readPublicKey, saveGrant } from "./yea-home.js"
import { type CliError, cliError, runCommand } from "./writ-io.js"

const fromYea = (e: YeaError): CliError => cliError(e.reason, e.message, e.path)

const signerOf = (seed: Uint8Array) => Layer.merge(Signer.fromSeed(seed), RandomBytes.live)

const agentOnly = Options.boolean("agent-only").pipe(Options.withDescription("create only the agent key (the principal key lives on another device)"))

export const yeaInitCommand = Command.make("init", { agentOnly }, ({ agentOnly }) =>
  runCommand(
    Effect.gen(function* () {
      const h = (yield* yeaHome)
      const random = yield* RandomBytes
      const seed = random.bytes(32)
      const agent = yield* createKey(agentKeyPath(h), seed)
      yield* Console.log(`agent key:     ${agent.key} (${agent.created ? "created" : "exists"}) ${agentKeyPath(h)}`)
      if (agentOnly) return
      const principal = yield* createKey(principalKeyPath(h), seed)
      yield* Console.log(`principal key: ${principal.key} (${principal.created ? "created" : "exists"}) ${principalKeyPath(h)}`)
      if (h.principalHome === h.home) {
        yield* Console.error("warning: the principal key is in the agent's folder; an agent with shell access could read it and sign its own consent (set YEA_PRINCIPAL_HOME)")
      }
    }).pipe(Effect.provide(RandomBytes.live))
  )
)

const to = Options.text("to").pipe(Options.optional, Options.withDescription("the holder's ed25519: key (default: this machine's agent key)"))
const noSave = Options.boolean("no-save").pipe(Options.withDescription("print the grant only; do not add it to the YEA home's grants.json"))

const holderKey = (flag: Option.Option<string>) =>
  Option.match(flag, {
    onNone: () => Effect.flatMap(yeaHome, (h) => readPublicKey(agentKeyPath(h))),
    onSome: (k) => (isKey(k) ? Effect.succeed(k) : Effect.fail(cliError("invalid_params", "not a canonical ed25519: key", "--to")))
  })

export const yeaGrantCommand = Command.make("grant", { ...caveatOptions, to, noSave }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const h = (yield* yeaHome)
      const now = yield* unixSeconds
      const caveats = yield* caveatsOf(o, now)
      const sub = yield* holderKey(o.to)
      const principal = yield* readKey(principalKeyPath(h))
      const token = yield* Effect.mapError(issueRootGrant({ sub, caveats, iat: now }), fromYea).pipe(Effect.provide(signerOf(principal)))
      if (caveats.length === 0) yield* Console.error("warning: no caveats: this grant allows every verb at every service that trusts this principal")
      const local = yield* Effect.option(readPublicKey(agentKeyPath(h)))
      if (!o.noSave && Option.isSome(local) && local.value === sub) yield* Console.error(`saved to ${yield* saveGrant(h, token)}`)
      yield* Console.log(token)
    })
  )
)

const token = Args.text({ name: "TOKEN" }).pipe(Args.withDescription("a pg1. grant this machine's agent holds"))
const toRequired = Options.text("to").pipe(Options.withDescription("the sub-agent's ed25519: key"))

export const yeaDelegateCommand = Command.make("delegate", { token, ...caveatOptions, to: toRequired }, (o) =>
  runCommand(
    Effect.gen(function* () {
      if (!isKey(o.to)) return yield* Effect.fail(cliError("invalid_params", "not a canonical ed25519: key", "--to"))
      const now = yield* unixSeconds
      const caveats = yield* caveatsOf(o, now)
      const agent = yield* readKey(agentKeyPath((yield* yeaHome)))
      const out = yield* Effect.mapError(delegateGrant(o.token.trim(), { sub: o.to, caveats, iat: now }), fromYea).pipe(Effect.provide(signerOf(agent)))
      yield* Console.log(out)
    })
  )
)
