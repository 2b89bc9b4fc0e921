// `mandate yea mcp-example`: the example billing MCP server with job tools (src/bind/mcp), on stdio
// (default) or Streamable HTTP on 127.0.0.1, with the approval store in memory or a SQLite file
// shared with `mandate yea approve`. The start-up line goes to stderr (stdout is the stdio transport).
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import { RandomBytes } from "../kernel/services.js"
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
const oob = Options.choice("out-of-band", ["low", "medium", "high"] as const).pipe(Options.withDefault("high" as const))
const http = Options.boolean("http").pipe(Options.withDescription("serve Streamable HTTP on 127.0.0.1 (token from YEA_HTTP_TOKEN, person from YEA_SUB)"))
const port = Options.integer("port").pipe(Options.withDefault(0))

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
