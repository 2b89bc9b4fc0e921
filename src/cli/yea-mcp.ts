// `mandate yea mcp URL...` (the bridge, below) and `mandate yea mcp-example`: the example billing MCP server with job tools (src/bind/mcp), on stdio
// (default) or Streamable HTTP on 127.0.0.1, with the approval store in memory or a SQLite file
// shared with `mandate yea approve`. The start-up line goes to stderr (stdout is the stdio transport).
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import { RandomBytes, Signer } from "../kernel/services.js"
import { makeBridge } from "../bind/mcp/bridge.js"
import { connect } from "../bind/yea-connect/index.js"
import { makeClient } from "../yea/client.js"
import { billingServer, newBook } from "../bind/mcp/example.js"
import { makeApprovals } from "../bind/mcp/context.js"
import { serveHttp, serveStdio, subOf } from "../bind/mcp/serve.js"
import { memoryApprovalStore, randomCodecLayer, type Tightening } from "../yea/approval/index.js"
import { decodeSeed, keyFromSeed } from "../yea/keys.js"
import { approvalLayer } from "../store/sqlite/approval.js"
import { SqliteStore } from "../store/sqlite/client.js"
import { cliError, runCommand } from "./writ-io.js"

const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("keep approvals in this SQLite file, shared with `mandate yea approve` (default: memory)"))
const principal = Options.text("principal").pipe(Options.optional, Options.withDescription("the pinned principal key (ed25519:...)"))
const policy = Options.text("policy").pipe(Options.optional, Options.withDescription("the signed policy: a pg1. token, or a file holding one (re-read on every call)"))
const seed = Options.text("server-seed").pipe(Options.withDescription("the server key's 32-byte seed, base64url"))
const deny = Options.text("deny").pipe(Options.repeated, Options.withDescription("a tool that never runs (repeatable)"))
const oob = Options.choice("out-of-band", ["low", "medium", "high"] as const).pipe(
  Options.withDefault("high" as const),
  Options.withDescription("the lowest risk whose approval must come out of band (a consent code), never from a form in the client")
)
const http = Options.boolean("http").pipe(Options.withDescription("serve Streamable HTTP on 127.0.0.1 (token from YEA_HTTP_TOKEN, person from YEA_SUB)"))
const port = Options.integer("port").pipe(Options.withDefault(0), Options.withDescription("with --http: the port on 127.0.0.1 (0: any free port)"))

export const yeaMcpExampleCommand = Command.make("mcp-example", { sqlite, principal, policy, seed, deny, oob, http, port }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const s = decodeSeed(o.seed)
        if (Option.isNone(s)) return yield* Effect.fail(cliError("mandate/bad_key", "--server-seed is not a base64url 32-byte seed"))
        const serviceId = keyFromSeed(s.value)
        const readPolicy = Option.match(o.policy, {
          onNone: () => Effect.succeed(null),
          onSome: (p) => (p.startsWith("pg1.") ? Effect.succeed(p) : Effect.map(Effect.orElseSucceed(fs.readFileString(p), () => ""), (t) => (t.trim() === "" ? null : t.trim())))
        })
        const tighten: Tightening = { deny: o.deny, outOfBand: o.oob }
        const token = process.env.YEA_HTTP_TOKEN ?? ""
        const person = process.env.YEA_SUB ?? ""
        if (o.http && (token.length < 32 || person === "")) return yield* Effect.fail(cliError("mandate/usage", "HTTP needs YEA_HTTP_TOKEN (32 characters or more) and YEA_SUB"))
        const store = Option.match(o.sqlite, {
          onNone: () => memoryApprovalStore,
          onSome: (file) => approvalLayer.pipe(Layer.provide(SqliteStore.layer(file)))
        })
        const services = Layer.mergeAll(store, randomCodecLayer, RandomBytes.live).pipe(Layer.provideMerge(RandomBytes.live))
        yield* Effect.gen(function* () {
          const ctx = yield* makeApprovals({
            name: "billing",
            transport: o.http ? "http" : "stdio",
            serviceId,
            principal: Option.getOrUndefined(o.principal),
            policy: readPolicy,
            tighten,
            singleProcess: true,
            ...(o.http ? { sub: subOf } : {})
          })
          yield* Console.error(`yea: service id ${serviceId} (name billing)`)
          const book = newBook()
          if (!o.http) return yield* serveStdio(billingServer(ctx, book))
          const { url } = yield* serveHttp({ port: o.port, token, sub: person }, () => billingServer(ctx, book))
          yield* Console.error(`serving MCP at ${url}`)
          yield* Effect.never
        }).pipe(
          Effect.provide(services),
          Effect.catchTags({
            StartupRefused: (e) => Effect.fail(cliError(`mandate/${e.reason}`, e.message)),
            StoreError: (e) => Effect.fail(cliError("mandate/store_unavailable", e.message))
          })
        )
      })
    )
  )
)

// `mandate yea mcp URL...`: the bridge (SPEC-bridge) on stdio.
const urls = Args.text({ name: "URL" }).pipe(Args.withDescription("A YEA service to serve to the MCP client (yea://, yeas://, http(s):// or stdio:); at least one"), Args.repeated)
const agentSeed = Options.text("agent-seed").pipe(Options.withDescription("the agent key's 32-byte seed, base64url (proofs are signed with it)"))
const grants = Options.text("grant").pipe(Options.repeated, Options.withDescription("a grant (pg1.) the agent presents (repeatable)"))
const principalSeed = Options.text("approve-here").pipe(Options.optional, Options.withDescription("the principal's seed on this machine: approve by typing the phrase in the client"))

export const yeaMcpBridgeCommand = Command.make("mcp", { urls, agentSeed, grants, deny, principalSeed }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const seedOf = (s: string, what: string) => Option.match(decodeSeed(s), { onNone: () => Effect.fail(cliError("mandate/bad_key", `${what} is not a base64url 32-byte seed`)), onSome: Effect.succeed })
        const agent = yield* seedOf(o.agentSeed, "--agent-seed")
        const principal = Option.isSome(o.principalSeed) ? Signer.make(yield* seedOf(o.principalSeed.value, "--approve-here")) : undefined
        if (o.urls.length === 0) return yield* Effect.fail(cliError("mandate/usage", "name at least one service URL"))
        const services = yield* Effect.forEach(o.urls, (url) =>
          Effect.gen(function* () {
            const conn = yield* connect(url)
            const client = yield* makeClient(conn, { grants: o.grants, agentName: "mandate-bridge" })
            const brief = yield* client.hello({ budget: 100_000 })
            if (brief.kind !== "BRIEF") return yield* Effect.fail(cliError("mandate/bad_service", `${url} did not answer HELLO with a BRIEF`))
            return { client, id: brief.service.id, name: brief.service.name, capabilities: brief.capabilities }
          }).pipe(Effect.mapError((e) => (e._tag === "CliError" ? e : cliError(`yea/${e.reason}`, `${url}: ${e.message}`))))
        )
        const { server, skipped } = yield* makeBridge(services, { agent: keyFromSeed(agent), grants: o.grants, deny: o.deny, ...(principal === undefined ? {} : { principal }) })
        for (const s of skipped) yield* Console.error(`yea mcp: not served: ${s}`)
        yield* serveStdio(server)
      }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(decodeSeedOrZero(o.agentSeed)), RandomBytes.live)))
    )
  )
)

const decodeSeedOrZero = (s: string) => Option.getOrElse(decodeSeed(s), () => new Uint8Array(32))
