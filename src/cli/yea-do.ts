// `mandate yea do URL VERB [CAPABILITY] ...`: one request from the command line,
// as an agent would send it (SPEC §3, §4): HELLO first (proofs are bound to the service id, §6.5),
// then the verb with this machine's agent key, its saved grants that may hold at this service
// (§6.3 `svc`) and any `--grant`. Prints what the
// agent reads: the hardened Lens of the reply (README, "Lens"), or the reply as JSON.
// An ERROR reply is printed too, then said as `error: <code> at <verb>: <message>`, exit status 1.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Either, Layer, Option } from "effect"
import { connect } from "../bind/yea-connect/index.js"
import { isJsonObject, parseJson } from "../kernel/json.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { makeClient, type YeaClientShape } from "../yea/client.js"
import type { FinalReply } from "../yea/frame.js"
import { decodeGrant } from "../yea/grant.js"
import type { YeaError } from "../yea/reason.js"
import { encodeConsentCode } from "../yea/consent.js"
import { keyFromSeed } from "../yea/keys.js"
import { printable } from "../yea/lens/printable.js"
import { lensReplyHardened } from "../yea/lens/reply.js"
import { agentKeyPath, yeaHome, readGrants, readKey } from "./yea-home.js"
import { type CliError, cliError, readBytes, runCommand } from "./writ-io.js"
import { resolveService } from "./yea-services.js"
import { editDistance } from "../kernel/edit-distance.js"

const url = Args.text({ name: "URL" }).pipe(Args.withDescription("yea://host:port, yeas://, http(s):// (the HTTP bridge), stdio: (with --command), or a name saved with `yea add`"))
const verb = Args.choice(["HELLO", "ASK", "INTENT", "COMMIT", "UNDO", "EXPAND"].map((v) => [v, v] as const), { name: "VERB" }).pipe(
  Args.withDescription("The request to send: HELLO, ASK, INTENT, COMMIT, UNDO or EXPAND")
)
const capability = Args.text({ name: "CAPABILITY" }).pipe(Args.optional, Args.withDescription("for ASK and INTENT"))
const options = {
  params: Options.text("params").pipe(Options.optional, Options.withDescription("the params, a JSON object")),
  goal: Options.text("goal").pipe(Options.optional, Options.withDescription("INTENT: the goal in words")),
  commit: Options.integer("commit").pipe(Options.optional, Options.withDescription("INTENT: then COMMIT the Nth proposal (1 = first) in the same session; a consent_required answer prints a pc1. code for approve")),
  auto: Options.boolean("auto").pipe(Options.withDescription("INTENT: commit at once if the grant's policy allows (§4.3.1)")),
  proposal: Options.text("proposal").pipe(Options.optional, Options.withDescription("COMMIT: the proposal id")),
  hash: Options.text("hash").pipe(Options.optional, Options.withDescription("COMMIT: the proposal hash")),
  receipt: Options.text("receipt").pipe(Options.optional, Options.withDescription("UNDO: the receipt id")),
  handle: Options.text("handle").pipe(Options.optional, Options.withDescription("EXPAND: the handle")),
  budget: Options.integer("budget").pipe(Options.optional, Options.withDescription("the reply's token budget (§8)")),
  grant: Options.text("grant").pipe(Options.repeated, Options.withDescription("a pg1. grant to send (repeatable), e.g. a consent from approve")),
  noSaved: Options.boolean("no-saved-grants").pipe(Options.withDescription("do not send the grants saved in the YEA home's grants.json ($YEA_HOME, default ~/.yea)")),
  command: Options.text("command").pipe(Options.optional, Options.withDescription("stdio: the service command line (split on spaces)")),
  ca: Options.file("ca").pipe(Options.optional, Options.withDescription("yeas://: a PEM certificate to trust (e.g. self-signed)")),
  json: Options.boolean("json").pipe(Options.withDescription("print the reply as JSON instead of Lens")),
  timeout: Options.integer("timeout").pipe(Options.withDefault(30), Options.withDescription("seconds to wait for the reply"))
}

/**
 * Whether a saved grant may authorize anything at `service` (§6.3: every caveat in every block must
 * hold, and `{"svc": [...]}` holds when the service's id is listed). A grant is left out only when a
 * well-formed `svc` caveat does not list the service: it can only be refused there, and would make
 * the service refuse the request `forbidden`. A grant that does not decode, or whose `svc` is
 * malformed, is still sent, so the service names what is wrong with it.
 */
export const grantMayNameService = (token: string, service: string): boolean =>
  Either.match(decodeGrant(token), {
    onLeft: () => true,
    onRight: (g) =>
      g.blocks.every((b) =>
        b.caveats.every((c) => {
          if (typeof c !== "object" || c === null || !("svc" in c)) return true
          const svc = (c as { svc: unknown }).svc
          return !Array.isArray(svc) || !svc.every((x) => typeof x === "string") || svc.includes(service)
        })
      )
  })

/** The service's capability closest to `name` (the first of equals, in the BRIEF's order). */
export const closestCapability = (name: string, capabilities: ReadonlyArray<string>): string | undefined =>
  capabilities.reduce<{ name?: string; d: number }>((best, c) => {
    const d = editDistance(name, c)
    return d < best.d ? { name: c, d } : best
  }, { d: Infinity }).name

const need = <A>(o: Option.Option<A>, flag: string, verb: string): Effect.Effect<A, CliError> =>
  Option.match(o, { onNone: () => Effect.fail(cliError("invalid_params", `${verb} needs --${flag}`, `--${flag}`)), onSome: Effect.succeed })

export const yeaDoCommand = Command.make("do", { url, verb, capability, ...options }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const params = yield* Option.match(o.params, {
          onNone: () => Effect.succeed(undefined),
          onSome: (t) => {
            const v = parseJson(t, { integersOnly: false })
            return Either.isRight(v) && isJsonObject(v.right) ? Effect.succeed(v.right as Record<string, unknown>) : Effect.fail(cliError("invalid_params", "params is a JSON object", "--params"))
          }
        })
        const h = yield* yeaHome
        const target = yield* resolveService(h, o.url)
        const saved = o.noSaved ? [] : yield* readGrants(h)
        const given = o.grant.map((g) => g.trim())
        const grants = [...saved, ...given]
        // The agent key signs every proof; without grants none is sent, so HELLO and anonymous
        // ASK/INTENT work before `init`.
        const seed = yield* Effect.catchTag(readKey(agentKeyPath(h)), "CliError", (e) =>
          grants.length === 0 && e.reason === "mandate/no_key" ? Effect.flatMap(RandomBytes, (r) => r.bytes(32)) : Effect.fail(e)
        ).pipe(Effect.provide(RandomBytes.live))
        const ca = Option.isSome(o.ca) ? { tls: { ca: Buffer.from(yield* readBytes(o.ca.value)) } } : {}
        const command = Option.map(o.command, (c) => c.split(" ").filter((w) => w !== ""))
        const conn = yield* Effect.mapError(connect(target, { ...ca, ...(Option.isSome(command) ? { command: command.value } : {}), timeoutMs: o.timeout * 1000 }), (e) =>
          cliError(e.reason, e.message, o.url)
        )
        const budget = Option.getOrUndefined(o.budget)
        const agent: YeaClientShape = yield* makeClient(conn, { grants: given, ...(budget !== undefined ? { budget } : {}) }).pipe(
          Effect.provide(Layer.merge(Signer.fromSeed(seed), RandomBytes.live))
        )
        // The saved grants this service may accept (its id is known from the BRIEF); the `--grant`
        // ones are always sent, the user named them for this request.
        const mine = () => {
          const service = agent.service()
          return { grants: service === undefined ? saved : saved.filter((g) => grantMayNameService(g, service)) }
        }
        let capabilities: ReadonlyArray<string> = []
        const send = (): Effect.Effect<FinalReply, YeaError | CliError> => {
          const cap = () => need(o.capability, "CAPABILITY", o.verb)
          switch (o.verb) {
            case "HELLO": return agent.hello()
            case "ASK": return Effect.flatMap(cap(), (c) => agent.ask(c, params, mine()))
            case "INTENT":
              return Effect.flatMap(cap(), (c) => agent.intent(c, params, { ...mine(), auto: o.auto, ...(Option.isSome(o.goal) ? { goal: o.goal.value } : {}) }))
            case "COMMIT":
              return Effect.flatMap(Effect.all([need(o.proposal, "proposal", "COMMIT"), need(o.hash, "hash", "COMMIT")]), ([id, hash]) => agent.commit({ id, hash }, mine()))
            case "UNDO": return Effect.flatMap(need(o.receipt, "receipt", "UNDO"), (r) => agent.undo(r, mine()))
            default: return Effect.flatMap(need(o.handle, "handle", "EXPAND"), (hd) => agent.expand(hd, mine()))
          }
        }
        let where = `${o.verb}${Option.isSome(o.capability) ? " " + o.capability.value : ""}`
        const work = Effect.gen(function* () {
          if (o.verb !== "HELLO") {
            const brief = yield* agent.hello()
            if (brief.kind !== "BRIEF") return brief
            capabilities = brief.capabilities.map((c) => c.name)
          }
          const first = yield* send()
          if (o.verb !== "INTENT" || Option.isNone(o.commit) || first.kind !== "PROPOSALS") return first
          const chosen = first.proposals[o.commit.value - 1]
          if (chosen === undefined) return yield* Effect.fail(cliError("invalid_params", `the service offered ${first.proposals.length} proposals`, "--commit"))
          yield* Console.error(`committing ${chosen.id}: ${printable(chosen.summary)}`)
          where = "COMMIT"
          const committed = yield* agent.commit(chosen, mine())
          // §6.6: a consent request is turned into a code only after it was checked against the
          // proposal this session received (client.consentOf); approve re-checks the hash.
          if (committed.kind === "ERROR" && committed.code === "consent_required") {
            const checked = yield* agent.consentOf(committed)
            const code = yield* encodeConsentCode({ consent: checked.consent, detail: checked.proposal, agent: keyFromSeed(seed) })
            yield* Console.error(`consent required; the principal runs:\n  mandate yea approve ${code}\nthen COMMIT again with --grant <the consent>:\n  mandate yea do ${o.url} COMMIT --proposal ${chosen.id} --hash ${chosen.hash} --grant <consent>`)
          }
          return committed
        })
        const reply = yield* work.pipe(
          Effect.timeoutFail({ duration: `${o.timeout} seconds`, onTimeout: () => cliError("unavailable", `no reply within ${o.timeout} s`, o.url) }),
          Effect.mapError((e) => (e._tag === "CliError" ? e : cliError(e.reason, e.message, e.path ?? o.verb)))
        )
        yield* Console.log(o.json ? JSON.stringify(reply, null, 2) : lensReplyHardened(reply))
        if (reply.kind === "ERROR") {
          const closest = reply.code === "unknown_capability" && Option.isSome(o.capability) ? closestCapability(o.capability.value, capabilities) : undefined
          return yield* Effect.fail(cliError(reply.code, closest === undefined ? reply.message : `${reply.message}; did you mean ${printable(closest)}?`, where))
        }
      })
    )
  )
)
