// `mandate yea mcp URL...` (the bridge, below) and `mandate yea mcp-example`: the example billing MCP server with job tools (src/bind/mcp), on stdio
// (default) or Streamable HTTP on 127.0.0.1, with the approval store in memory or a SQLite file
// shared with `mandate yea approve`. The start-up line goes to stderr (stdout is the stdio transport).
import { Args, Command, Options } from "@effect/cli"
import { Config, Console, Effect, Layer, Option } from "effect"
import { RandomBytes, Signer } from "../kernel/services.js"
import { makeBridge } from "../bind/mcp/bridge.js"
import { describeService } from "../bind/mcp/bridge-service.js"
import { fileBridgeMemory } from "../bind/mcp/bridge-memory.js"
import { yeaHome } from "./yea-home.js"
import { readServices } from "./yea-services.js"
import { join } from "node:path"
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
import { localPolicyFile, pinnedPrincipal, signedPolicy, signedPolicySource, storeFolder } from "./yea-local.js"
import { fileApprovalLayer } from "../store/file/approval.js"
import { NodeContext } from "@effect/platform-node"

const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("keep approvals in this SQLite file, shared with `mandate yea approve --sqlite`"))
const storeDir = Options.directory("store").pipe(Options.optional, Options.withDescription("keep approvals in this folder, shared with `mandate yea approve` (stdio default: YEA_STORE, else store/ in the YEA home; HTTP default: memory)"))
const principal = Options.text("principal").pipe(Options.optional, Options.withDescription("the pinned principal key (ed25519:...); default: the key in the file YEA_PRINCIPAL_PUB names, if that file is safe"))
const policy = Options.text("policy").pipe(Options.optional, Options.withDescription("the signed policy: a pg1. token, or a file holding one (re-read on every call); default: YEA_POLICY"))
const seed = Options.text("server-seed").pipe(Options.withDescription("the server key's 32-byte seed, base64url"))
const deny = Options.text("deny").pipe(Options.repeated, Options.withDescription("a tool that never runs (repeatable)"))
const oob = Options.choice("out-of-band", ["low", "medium", "high"] as const).pipe(Options.withDefault("high" as const))
const http = Options.boolean("http").pipe(Options.withDescription("serve Streamable HTTP on 127.0.0.1 (token from YEA_HTTP_TOKEN, person from YEA_SUB)"))
const port = Options.integer("port").pipe(Options.withDefault(0))

export const yeaMcpExampleCommand = Command.make("mcp-example", { sqlite, storeDir, principal, policy, seed, deny, oob, http, port }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const s = decodeSeed(o.seed)
        if (Option.isNone(s)) return yield* Effect.fail(cliError("mandate/bad_key", "--server-seed is not a base64url 32-byte seed"))
        const serviceId = keyFromSeed(s.value)
        const readPolicy = yield* signedPolicy(yield* signedPolicySource(o.policy))
        const policyFile = yield* localPolicyFile
        const pinned = yield* pinnedPrincipal(o.principal)
        const tighten: Tightening = { deny: o.deny, outOfBand: o.oob }
        const token = process.env.YEA_HTTP_TOKEN ?? ""
        const person = process.env.YEA_SUB ?? ""
        if (o.http && (token.length < 32 || person === "")) return yield* Effect.fail(cliError("mandate/usage", "HTTP needs YEA_HTTP_TOKEN (32 characters or more) and YEA_SUB"))
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
          if (!o.http) return yield* serveStdio(billingServer(ctx, book))
          const { url } = yield* serveHttp({ port: o.port, token, sub: person }, () => billingServer(ctx, book))
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

// `mandate yea mcp URL...`: the bridge (SPEC-bridge) on stdio.
const urls = Args.text({ name: "URL" }).pipe(Args.repeated)
const agentSeed = Options.text("agent-seed").pipe(Options.withDescription("the agent key's 32-byte seed, base64url (proofs are signed with it)"))
const grants = Options.text("grant").pipe(Options.repeated, Options.withDescription("a grant (pg1.) the agent presents (repeatable)"))
const principalSeed = Options.text("approve-here").pipe(Options.optional, Options.withDescription("the principal's seed on this machine: approve by typing the phrase in the client"))

const toolsMode = Options.choice("tools", ["generic", "per-capability"] as const).pipe(Options.optional, Options.withDescription("one tool per capability, or two generic tools per service (default: generic past 25 capabilities)"))
const budget = Options.integer("budget").pipe(Options.optional, Options.withDescription("the token budget of each reply the services send (SPEC §8)"))

const bridgeHttp = Options.boolean("http").pipe(Options.withDescription("serve Streamable HTTP on 127.0.0.1 instead of stdio (bearer token from YEA_HTTP_TOKEN, 32 characters or more)"))

export const yeaMcpBridgeCommand = Command.make("mcp", { urls, agentSeed, grants, deny, principalSeed, toolsMode, budget, http: bridgeHttp, port }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const seedOf = (s: string, what: string) => Option.match(decodeSeed(s), { onNone: () => Effect.fail(cliError("mandate/bad_key", `${what} is not a base64url 32-byte seed`)), onSome: Effect.succeed })
        const agent = yield* seedOf(o.agentSeed, "--agent-seed")
        const principal = Option.isSome(o.principalSeed) ? Signer.make(yield* seedOf(o.principalSeed.value, "--approve-here")) : undefined
        if (Option.isSome(o.budget) && o.budget.value < 1) return yield* Effect.fail(cliError("mandate/usage", "--budget is a positive number of tokens"))
        // No URL: the services saved with `mandate yea add` (docs/cli.md "Bridges").
        const urls = o.urls.length > 0 ? o.urls : (yield* readServices(yield* yeaHome)).map((e) => e.url)
        if (urls.length === 0) return yield* Effect.fail(cliError("mandate/usage", "name at least one service URL, or add one with `mandate yea add URL`"))
        const token = Option.getOrElse(yield* Effect.orElseSucceed(Config.option(Config.string("YEA_HTTP_TOKEN")), () => Option.none<string>()), () => "")
        if (o.http && token.length < 32) return yield* Effect.fail(cliError("mandate/usage", "--http needs YEA_HTTP_TOKEN (32 characters or more)"))
        const described = yield* Effect.forEach(urls, (url) =>
          Effect.gen(function* () {
            const conn = yield* connect(url)
            const client = yield* makeClient(conn, { grants: o.grants, agentName: "mandate-bridge", ...(Option.isSome(o.budget) ? { budget: o.budget.value } : {}) })
            return yield* describeService(client)
          }).pipe(Effect.mapError((e) => cliError(`yea/${e.reason}`, `${url}: ${e.message}`)))
        )
        const policyFile = yield* localPolicyFile
        // Pending proposals and consents outlive the process (a client restarts its servers freely).
        const consents = join((yield* yeaHome).home, "consents")
        const memory = yield* Effect.mapError(fileBridgeMemory(consents), (e) => cliError("mandate/unwritable", e.message, consents))
        const { server, newServer, skipped } = yield* makeBridge(described.map((d) => d.service), { agent: keyFromSeed(agent), grants: o.grants, deny: o.deny, policyFile, memory, ...(Option.isSome(o.toolsMode) ? { tools: o.toolsMode.value } : {}), ...(principal === undefined ? {} : { principal }) })
        for (const s of [...described.flatMap((d) => d.skipped), ...skipped]) yield* Console.error(`yea mcp: not served: ${s}`)
        if (!o.http) return yield* serveStdio(server)
        // One person's bridge on loopback: a fresh server per session over the one bridge state.
        const { url } = yield* serveHttp({ port: o.port, token, sub: "bridge" }, newServer)
        yield* Console.error(`serving MCP at ${url}`)
        yield* Effect.never
      }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(decodeSeedOrZero(o.agentSeed)), RandomBytes.live)))
    )
  )
)

const decodeSeedOrZero = (s: string) => Option.getOrElse(decodeSeed(s), () => new Uint8Array(32))
