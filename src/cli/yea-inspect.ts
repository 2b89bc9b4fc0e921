// `mandate yea inspect <TOKEN|CODE|FRAME|FILE>`: decodes a `pg1.` grant (§6.2,
// its signatures and links checked, §6.4 steps 1 to 3), a `pc1.` consent code (reviewed exactly as
// `approve` would, without signing), or any frame (§2, checked against its Schema), and prints it
// as Lens and, with `--json`, as JSON. Text that came from a service is shown with the hardened
// Lens unless `--spec` asks for the specification's exact rendering (README, "Lens").
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Either } from "effect"
import { parseJson } from "../kernel/json.js"
import { reviewConsentCode } from "../yea/approve.js"
import { CONSENT_CODE_PREFIX, decodeConsentCode } from "../yea/consent.js"
import { decodeReplyEither, decodeRequestEither } from "../yea/frame.js"
import { decodeGrant, TOKEN_PREFIX, verifyChain } from "../yea/grant.js"
import { lensTime } from "../yea/lens/fields.js"
import { lensReply, lensReplyHardened } from "../yea/lens/reply.js"
import type { YeaError } from "../yea/reason.js"
import { canonical } from "../yea/canonical.js"
import { cliError, readBytes, runCommand } from "./writ-io.js"

const input = Args.text({ name: "INPUT" }).pipe(Args.withDescription("a pg1. grant, a pc1. consent code, a JSON frame, or a file holding one"))
const json = Options.boolean("json").pipe(Options.withDescription("print JSON instead of Lens"))
const spec = Options.boolean("spec").pipe(Options.withDescription("render replies with the specification's exact Lens, not the hardened one"))

const fromYea = (e: YeaError) => cliError(e.reason, e.message, e.path)

/** The argument itself, or the contents of the file it names. */
const textOf = (arg: string) =>
  Effect.gen(function* () {
    const t = arg.trim()
    if (t.startsWith(TOKEN_PREFIX) || t.startsWith(CONSENT_CODE_PREFIX) || t.startsWith("{")) return t
    const fs = yield* FileSystem.FileSystem
    if (!(yield* Effect.orElseSucceed(fs.exists(arg), () => false))) {
      return yield* Effect.fail(cliError("bad_frame", "neither a pg1. grant, a pc1. code, a JSON frame nor a file", "INPUT"))
    }
    return new TextDecoder().decode(yield* readBytes(arg)).trim()
  })

const show = (v: unknown): string => Either.getOrElse(canonical(v), () => JSON.stringify(v))

const grantView = (token: string, asJson: boolean) =>
  Effect.gen(function* () {
    const g = yield* Effect.mapError(decodeGrant(token), fromYea)
    // Trusting the grant's own root shows whether the signatures and links hold (§6.4 steps 2, 3);
    // whether a service trusts that principal is the service's decision.
    const chain = verifyChain(g, { trusted: [g.principal], proofKey: g.holder })
    const verified = Either.isRight(chain)
    if (asJson) {
      yield* Console.log(JSON.stringify({ kind: "grant", id: g.id, principal: g.principal, holder: g.holder, verified, blocks: g.blocks.map((b) => ({ id: b.id, p: b.raw, s: b.s })) }, null, 2))
    } else {
      yield* Console.log(`grant ${g.id} · ${g.blocks.length} block${g.blocks.length === 1 ? "" : "s"} · signatures ${verified ? "verify" : "DO NOT verify"}`)
      yield* Console.log(`principal: ${g.principal}`)
      yield* Console.log(`holder:    ${g.holder}`)
      for (let i = 0; i < g.blocks.length; i++) {
        const b = g.blocks[i]
        yield* Console.log(`block ${i} ${i === 0 ? "(root)" : "(delegation)"} to ${b.sub} at ${lensTime(b.iat)}`)
        if (b.caveats.length === 0) yield* Console.log("  (no caveats: everything)")
        for (const c of b.caveats) yield* Console.log("  " + show(c))
      }
    }
    if (Either.isLeft(chain)) return yield* Effect.fail(fromYea(chain.left))
  })

const codeView = (text: string, asJson: boolean) =>
  Effect.gen(function* () {
    const code = yield* Effect.mapError(decodeConsentCode(text), fromYea)
    const review = yield* Effect.mapError(reviewConsentCode(text, { to: code.agent }), fromYea)
    if (asJson) yield* Console.log(JSON.stringify({ kind: "consent-code", consent: code.consent, agent: code.agent, proposal: review.proposal }, null, 2))
    else {
      yield* Console.log("consent code (hash re-checked)")
      for (const line of review.lines) yield* Console.log("  " + line)
    }
  })

const frameView = (text: string, asJson: boolean, specLens: boolean) =>
  Effect.gen(function* () {
    const v = yield* Either.mapLeft(parseJson(text, { integersOnly: false }), (e) => cliError("bad_frame", e.message, "INPUT"))
    const isRequest = typeof v === "object" && v !== null && !Array.isArray(v) && "verb" in v
    if (isRequest) {
      const f = yield* Effect.mapError(decodeRequestEither(v), fromYea)
      yield* Console.log(asJson ? JSON.stringify(f, null, 2) : `request ${f.verb} ${f.id}\n${show(f)}`)
      return
    }
    const r = yield* Effect.mapError(decodeReplyEither(v), fromYea)
    yield* Console.log(asJson ? JSON.stringify(r, null, 2) : (specLens ? lensReply : lensReplyHardened)(r))
  })

export const yeaInspectCommand = Command.make("inspect", { input, json, spec }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const text = yield* textOf(o.input)
      if (text.startsWith(TOKEN_PREFIX)) return yield* grantView(text, o.json)
      if (text.startsWith(CONSENT_CODE_PREFIX)) return yield* codeView(text, o.json)
      return yield* frameView(text, o.json, o.spec)
    })
  )
)
