// `mandate yea mcp URL...` (the bridge, below) and `mandate yea mcp-example`: the example billing MCP server with job tools (src/examples/billing-mcp.ts, on src/bind/mcp), on stdio
// (default) or Streamable HTTP on 127.0.0.1, with the approval store in memory or a SQLite file
// shared with `mandate yea approve`. The start-up line goes to stderr (stdout is the stdio transport).
// Keys are key files (key-options.ts), never seeds on the command line.
import { Args, Command, Options } from "@effect/cli"
import { Config, ConfigError, Console, Effect, Layer, Option, Redacted } from "effect"
import { RandomBytes, Signer } from "../kernel/services.js"
import { makeBridge } from "../bind/mcp/bridge.js"
import { describeService } from "../bind/mcp/bridge-service.js"
import { fileBridgeMemory } from "../bind/mcp/bridge-memory.js"
import { fileApprovalLayer } from "../store/file/approval.js"
import { NodeContext } from "@effect/platform-node"
import { join } from "node:path"
import { connect } from "../bind/yea-connect/index.js"
import { makeClient } from "../yea/client.js"
import { billingServer, newBook } from "../examples/billing-mcp.js"
import { makeApprovals } from "../bind/mcp/context.js"
import { serveHttp, serveStdio, subOf } from "../bind/mcp/serve.js"
import { memoryApprovalStore, randomCodecLayer, type Tightening } from "../yea/approval/index.js"
import { keyFromSeed } from "../yea/keys.js"
import { approvalLayer } from "../store/sqlite/approval.js"
import { SqliteStore } from "../store/sqlite/client.js"
import { deprecatedSeedOption, keyFileOption, keyFileOrSeed, keyFrom } from "./key-options.js"
import { cliError, runCommand } from "./writ-io.js"
import { listenOptions, remoteOf } from "./writ-mcp.js"
import { serveRemote } from "../bind/mcp/remote.js"
import { agentKeyPath, ensureServerKey, readKey, yeaHome } from "./yea-home.js"
import { localPolicyFile, pinnedPrincipal, signedPolicy, signedPolicySource, storeFolder } from "./yea-local.js"
import { readServices } from "./yea-services.js"

const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("keep approvals in this SQLite file, shared with `mandate yea approve --sqlite`"))
const storeDir = Options.directory("store").pipe(Options.optional, Options.withDescription("keep approvals in this folder, shared with `mandate yea approve` (stdio default: YEA_STORE, else store/ in the YEA home; HTTP default: memory)"))
const principal = Options.text("principal").pipe(Options.optional, Options.withDescription("the pinned principal key (ed25519:...); default: the key in the file YEA_PRINCIPAL_PUB names, if that file is safe"))
const policy = Options.text("policy").pipe(Options.optional, Options.withDescription("the signed policy: a pg1. token, or a file holding one (re-read on every call); default: YEA_POLICY"))
const serverKey = keyFileOption("server-key", "the server's key file (mandate keygen FILE); its public key is the service id (default: server/billing.key in the YEA home, created on the first run)")
const serverSeed = deprecatedSeedOption("server-seed", "--server-key")
const deny = Options.text("deny").pipe(Options.repeated, Options.withDescription("a tool that never runs (repeatable)"))
const oob = Options.choice("out-of-band", ["low", "medium", "high"] as const).pipe(
  Options.withDefault("high" as const),
  Options.withDescription("the lowest risk whose approval must come out of band (a consent code), never from a form in the client")
)
const http = Options.boolean("http").pipe(Options.withDescription("serve Streamable HTTP on 127.0.0.1 (token from YEA_HTTP_TOKEN, person from YEA_SUB)"))
const port = Options.integer("port").pipe(Options.withDefault(0), Options.withDescription("with --http: the port on 127.0.0.1 (0: any free port)"))

/** The example server's name: its key is `server/billing.key` in the YEA home. */
export const EXAMPLE_SERVER_NAME = "billing"

/**
 * The job server's key (SPEC-mcp-ts, options table, `serverKey`): `--server-key FILE`, or the
 * deprecated `--server-seed`, else `<YEA home>/server/billing.key`, created on the first run.
 */
export const exampleServerKey = (o: { readonly serverKey: Option.Option<string>; readonly serverSeed: Option.Option<string> }) =>
  keyFrom({
    command: "yea mcp-example", fileOption: "--server-key", file: o.serverKey, seedOption: "--server-seed", seed: o.serverSeed,
    fallback: Effect.flatMap(yeaHome, (home) =>
      Effect.map(ensureServerKey(home, EXAMPLE_SERVER_NAME, Effect.provide(Effect.flatMap(RandomBytes, (r) => r.bytes(32)), RandomBytes.live)), (k) => k.seed)
    )
  })

/** The HTTP token: 32 characters or more (guessing it must be out of reach), never printed. */
export const MIN_HTTP_TOKEN = 32

/**
 * The HTTP transport's credentials, read through Config (the run's environment): the bearer
 * token as a Redacted value, so it never reaches a log line or an error message, and the person
 * it stands for. A missing variable is `mandate/usage`; a token that is too short is
 * `mandate/bad_token`, a typed failure of the command rather than a defect of the server.
 */
export const httpCredentials = Effect.gen(function*() {
  const token = yield* Config.redacted("YEA_HTTP_TOKEN").pipe(
    Effect.mapError(() => cliError("mandate/usage", `HTTP needs YEA_HTTP_TOKEN (${MIN_HTTP_TOKEN} characters or more) and YEA_SUB`))
  )
  if (Redacted.value(token).length < MIN_HTTP_TOKEN) {
    return yield* Effect.fail(cliError("mandate/bad_token", `YEA_HTTP_TOKEN has ${Redacted.value(token).length} characters; it needs ${MIN_HTTP_TOKEN} or more`))
  }
  const sub = yield* Config.nonEmptyString("YEA_SUB").pipe(
    Effect.mapError((e: ConfigError.ConfigError) => cliError("mandate/usage", `HTTP needs YEA_SUB, the person the token stands for (${ConfigError.isMissingData(e) ? "missing" : "empty"})`))
  )
  return { token, sub }
})

export const yeaMcpExampleCommand = Command.make("mcp-example", { sqlite, storeDir, principal, policy, serverKey, serverSeed, deny, oob, http, port }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const seed = yield* exampleServerKey(o)
        const serviceId = keyFromSeed(seed)
        const readPolicy = yield* signedPolicy(yield* signedPolicySource(o.policy))
        const policyFile = yield* localPolicyFile
        const pinned = yield* pinnedPrincipal(o.principal)
        const tighten: Tightening = { deny: o.deny, outOfBand: o.oob }
        const credentials = o.http ? Option.some(yield* httpCredentials) : Option.none()
        const folder = o.http && Option.isNone(o.storeDir) ? Option.none<string>() : Option.some(yield* storeFolder(o.storeDir))
        const store = Option.match(o.sqlite, {
          onNone: () => Option.match(folder, { onNone: () => memoryApprovalStore, onSome: (dir) => fileApprovalLayer(dir).pipe(Layer.provide(Layer.merge(NodeContext.layer, RandomBytes.live))) }),
          onSome: (file) => approvalLayer.pipe(Layer.provide(SqliteStore.layer(file)))
        })
        const services = Layer.mergeAll(store, randomCodecLayer, RandomBytes.live).pipe(Layer.provideMerge(RandomBytes.live))
        yield* Effect.gen(function* () {
          const ctx = yield* makeApprovals({
            name: "billing",
            transport: o.http ? "http" : "stdio",
            serviceId,
            principal: pinned,
            policy: readPolicy,
            policyFile,
            tighten,
            singleProcess: true,
            ...(o.http ? { sub: subOf } : {})
          })
          yield* Console.error(`yea: service id ${serviceId} (name billing)`)
          const book = newBook()
          if (Option.isNone(credentials)) return yield* serveStdio(billingServer(ctx, book))
          const { token, sub } = credentials.value
          const { url } = yield* serveHttp({ port: o.port, token: Redacted.value(token), sub }, () => billingServer(ctx, book))
          yield* Console.error(`serving MCP at ${url}`)
          yield* Effect.never
        }).pipe(
          Effect.provide(services),
          Effect.catchTags({
            StartupRefused: (e) => Effect.fail(cliError(`mandate/${e.reason}`, e.message)),
            StoreError: (e) => Effect.fail(cliError("mandate/store_unavailable", e.message)),
            ApprovalStoreError: (e) => Effect.fail(cliError("mandate/store_unavailable", e.why))
          })
        )
      })
    )
  )
)

// `mandate yea mcp URL...`: the bridge (SPEC-bridge) on stdio, `--http` (loopback, one token) or
// `--listen HOST:PORT [--keys FILE]` (Streamable HTTP for remote clients, docs/mcp-gate.md).
const urls = Args.text({ name: "URL" }).pipe(Args.withDescription("A YEA service to serve to the MCP client: yea://, yeas://, http(s):// or stdio: (default: the services of `mandate yea add`)"), Args.repeated)
const agentKey = keyFileOption("agent-key", "the agent's key file, which signs the proofs (default: the agent key `mandate yea init` wrote in the YEA home, $YEA_HOME or ~/.yea)")
const agentSeed = deprecatedSeedOption("agent-seed", "--agent-key")
const grants = Options.text("grant").pipe(Options.repeated, Options.withDescription("a grant (pg1.) the agent presents (repeatable)"))
const approveHere = Options.file("approve-here").pipe(
  Options.optional,
  Options.withDescription("the principal's key file on this machine: a phrase typed into the client's form approves, and the bridge signs the consent (a client that fills forms by itself then approves by itself)")
)

/** Said on stderr whenever --approve-here is on: signing inside the client is the path the
 * bridge's design warns about (SPEC-bridge, design decision 4: clients that fill forms or hand
 * them to a model, the phrase shown in the form, a principal key within an agent's reach). */
export const APPROVE_HERE_WARNING =
  "yea mcp: warning: --approve-here signs a consent with the principal's key whenever the phrase is typed into the client's form; a client that fills forms automatically (or lets its model answer them) approves by itself, and the phrase is shown in the form. Use it only with a client in which a person types the answer, and keep in mind that an agent with a shell on this machine can reach this key file."

const toolsMode = Options.choice("tools", ["generic", "per-capability"] as const).pipe(Options.optional, Options.withDescription("one tool per capability, or two generic tools per service (default: generic past 25 capabilities)"))
const budget = Options.integer("budget").pipe(Options.optional, Options.withDescription("the token budget of each reply the services send (SPEC §8)"))
const bridgeHttp = Options.boolean("http").pipe(Options.withDescription("serve Streamable HTTP on 127.0.0.1 instead of stdio (bearer token from YEA_HTTP_TOKEN, 32 characters or more)"))

export const yeaMcpBridgeCommand = Command.make("mcp", { urls, agentKey, agentSeed, grants, deny, approveHere, toolsMode, budget, http: bridgeHttp, port, ...listenOptions }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const home = yield* yeaHome
        if (Option.isSome(o.budget) && o.budget.value < 1) return yield* Effect.fail(cliError("mandate/usage", "--budget is a positive number of tokens"))
        // No URL: the services saved with `mandate yea add` (docs/cli.md "Bridges").
        const urls = o.urls.length > 0 ? o.urls : (yield* readServices(home)).map((e) => e.url)
        if (urls.length === 0) return yield* Effect.fail(cliError("mandate/usage", "name at least one service URL, or add one with `mandate yea add URL`"))
        // --listen: the network listener of `writ mcp-gate` (bind/mcp/remote.ts), bearer keys hashed
        // at rest; --http stays the one person's loopback front end with YEA_HTTP_TOKEN.
        if (Option.isSome(o.listen) && o.http) return yield* Effect.fail(cliError("mandate/usage", "give --http or --listen, not both", "--listen"))
        const remote = yield* remoteOf(o)
        const token = Option.getOrElse(yield* Effect.orElseSucceed(Config.option(Config.string("YEA_HTTP_TOKEN")), () => Option.none<string>()), () => "")
        if (o.http && token.length < MIN_HTTP_TOKEN) return yield* Effect.fail(cliError("mandate/usage", `--http needs YEA_HTTP_TOKEN (${MIN_HTTP_TOKEN} characters or more)`))
        const agent = yield* keyFrom({
          command: "yea mcp", fileOption: "--agent-key", file: o.agentKey, seedOption: "--agent-seed", seed: o.agentSeed,
          fallback: readKey(agentKeyPath(home))
        })
        const principalSeed = Option.isSome(o.approveHere) ? yield* keyFileOrSeed(o.approveHere.value, "yea mcp", "--approve-here") : undefined
        if (principalSeed !== undefined) yield* Console.error(APPROVE_HERE_WARNING)
        yield* Effect.gen(function* () {
          const principal = principalSeed === undefined ? undefined : Signer.make(principalSeed)
          const described = yield* Effect.forEach(urls, (url) =>
            Effect.gen(function* () {
              const conn = yield* connect(url)
              const client = yield* makeClient(conn, { grants: o.grants, agentName: "mandate-bridge", ...(Option.isSome(o.budget) ? { budget: o.budget.value } : {}) })
              return yield* describeService(client)
            }).pipe(Effect.mapError((e) => (e._tag === "BridgeServiceRefused" ? cliError("mandate/bad_service", `${url}: ${e.message}`) : cliError(`yea/${e.reason}`, `${url}: ${e.message}`))))
          )
          const policyFile = yield* localPolicyFile
          // Pending proposals and consents outlive the process (a client restarts its servers freely).
          const consents = join(home.home, "consents")
          const memory = yield* Effect.mapError(fileBridgeMemory(consents), (e) => cliError("mandate/unwritable", e.message, consents))
          const { server, newServer, skipped } = yield* makeBridge(described.map((d) => d.service), {
            agent: keyFromSeed(agent), grants: o.grants, deny: o.deny, policyFile, memory,
            ...(Option.isSome(o.toolsMode) ? { tools: o.toolsMode.value } : {}),
            ...(principal === undefined ? {} : { principal })
          })
          for (const s of [...described.flatMap((d) => d.skipped), ...skipped]) yield* Console.error(`yea mcp: not served: ${s}`)
          if (remote !== undefined) {
            // A fresh server per session over the one bridge state, as with --http.
            const listener = yield* serveRemote(remote, newServer).pipe(Effect.mapError((e) => cliError("mandate/usage", e.message, "--listen")))
            yield* Console.error(`serving MCP at ${listener.url}`)
            return yield* Effect.never
          }
          if (!o.http) return yield* serveStdio(server)
          // One person's bridge on loopback: a fresh server per session over the one bridge state.
          const { url } = yield* serveHttp({ port: o.port, token, sub: "bridge" }, newServer)
          yield* Console.error(`serving MCP at ${url}`)
          yield* Effect.never
        }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(agent), RandomBytes.live)))
      })
    )
  )
)
