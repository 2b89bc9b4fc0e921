// `mandate yea approve <pc1.code> [--to KEY]` (docs/cli.md; SPEC §6.6): shows a proposal's real
// effects, uses, risk and undo, re-checks its hash, asks for confirmation and signs a one-time
// consent with the principal key, printed to paste back to the agent.
//
// The checks are the library's (src/yea/approve.ts, shared with the MCP bridge's approver). This
// command adds what only a terminal can: it runs only when both stdin and stdout are a terminal,
// so that an agent driving the shell through pipes cannot approve its own request (design.md,
// known limits: this does not stop an agent that can open a terminal on the same account).
//
// A job's approval code (SPEC-approval §5: an MCP job tool's plan, `detail.job`, no agent key) is
// approved by typing the phrase it names; the consent is written to the approval store the MCP
// server reads (`--sqlite FILE`, the file given to `mandate yea mcp-example --sqlite`), so the
// agent's retried call runs that plan once.
import { Args, Command, Options } from "@effect/cli"
import { Terminal } from "@effect/platform"
import { Console, Effect, Either, Layer, Option } from "effect"
import { RandomBytes, Signer } from "../kernel/services.js"
import { reviewConsentCode, signConsentCode } from "../yea/approve.js"
import { approveJobCode, decodeJobConsentCode, type JobConsentRequest } from "../yea/approval/index.js"
import { canonical } from "../yea/canonical.js"
import { approvalLayer } from "../store/sqlite/approval.js"
import { SqliteStore } from "../store/sqlite/client.js"
import { isKey } from "../yea/keys.js"
import { agentKeyPath, yeaHome, principalKeyPath, readKey, readPublicKey } from "./yea-home.js"
import { cliError, runCommand } from "./writ-io.js"
import { storeFolder } from "./yea-local.js"
import { fileApprovalLayer } from "../store/file/approval.js"
import { NodeContext } from "@effect/platform-node"
import { CliIo } from "./io.js"

const code = Args.text({ name: "CODE" }).pipe(Args.withDescription("the pc1. consent code the agent printed"))
const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("for a job's approval code: the SQLite approval store the MCP server reads (its --sqlite FILE)"))
const storeDir = Options.directory("store").pipe(Options.optional, Options.withDescription("for a job's approval code: the approval store folder (default: YEA_STORE, else store/ in the YEA home)"))
const to = Options.text("to").pipe(Options.optional, Options.withDescription("the agent key the consent is for, after checking its fingerprint with the agent"))

/** Whether a person is at the run's terminal (both ends). The CLI is the composition root. */
const interactive = Effect.map(CliIo, (io) => io.stdin.isTTY === true && io.stdout.isTTY === true)

/** A job's plan as the person reads it: every member of the hashed job, nothing the model wrote elsewhere. */
const jobLines = (r: JobConsentRequest): ReadonlyArray<string> => [
  `service:    ${r.service}`,
  `tool:       ${r.capability}`,
  `plan:       ${r.summary}`,
  ...Object.entries(r.job).filter(([k]) => k !== "summary" && k !== "tool").map(([k, v]) => `${(k + ":").padEnd(11)} ${Either.getOrElse(canonical(v), () => "?")}`),
  `plan hash:  ${r.hash}`
]

/** SPEC-approval §5: the person types the phrase; the consent goes to the server's approval store. */
const approveJob = (text: string, request: JobConsentRequest, file: Option.Option<string>, folder: Option.Option<string>) =>
  Effect.gen(function* () {
    const where = Option.isSome(file) ? file.value : yield* storeFolder(folder)
    const store = Option.isSome(file)
      ? approvalLayer.pipe(Layer.provide(SqliteStore.layer(file.value)))
      : fileApprovalLayer(where).pipe(Layer.provide(Layer.merge(NodeContext.layer, RandomBytes.live)))
    const principal = yield* readKey(principalKeyPath((yield* yeaHome)))
    yield* Console.log("Approve this plan?")
    for (const line of jobLines(request)) yield* Console.log("  " + line)
    const terminal = yield* Terminal.Terminal
    yield* Effect.orDie(terminal.display(`Type "${request.phrase}" to approve it: `))
    const typed = yield* Effect.mapError(terminal.readLine, () => cliError("mandate/declined", "no answer; nothing signed"))
    yield* approveJobCode(text, typed).pipe(
      Effect.provide(Layer.mergeAll(store, Signer.fromSeed(principal), RandomBytes.live)),
      Effect.catchTags({
        ConsentInvalid: (e) => Effect.fail(cliError(e.code, e.why)),
        StoreError: (e) => Effect.fail(cliError("mandate/store_unavailable", e.message, where)),
        ApprovalStoreError: (e) => Effect.fail(cliError("mandate/store_unavailable", e.why, where))
      })
    )
    yield* Console.log("approved: the agent's next call of this plan runs it, once")
  })

export const yeaApproveCommand = Command.make("approve", { code, to, sqlite, storeDir }, (o) =>
  runCommand(
    Effect.gen(function* () {
      if (!(yield* interactive)) {
        return yield* Effect.fail(cliError("mandate/not_interactive", "approve runs only at an interactive terminal (stdin and stdout), never from a pipe or a script"))
      }
      const job = yield* Effect.option(decodeJobConsentCode(o.code))
      if (Option.isSome(job)) return yield* approveJob(o.code, job.value, o.sqlite, o.storeDir)
      const explicit = Option.getOrUndefined(o.to)
      if (explicit !== undefined && !isKey(explicit)) return yield* Effect.fail(cliError("invalid_params", "not a canonical ed25519: key", "--to"))
      const h = (yield* yeaHome)
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
