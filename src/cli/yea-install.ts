// `mandate yea install` (alias `setup`) and `mandate yea uninstall`: the bridge's entry in an MCP
// client's configuration file (docs/cli.md, "Get started"). The file is the JSON most clients
// read, an object whose `mcpServers` maps a name to `{command, args, env}`; only the entry named
// here is written or removed, every other entry and member is kept as it was.
//
// The entry runs `mandate yea mcp` on the saved services (services.json, yea-services.ts) or the
// ones given, with `YEA_HOME` pointing at the home that holds the agent's key file (the name that
// wins over `MANDATE_HOME`, so the entry's home is the one used whatever else is set): the key is
// read from there by the bridge, never written into the client's file (a seed in a client config
// would be readable by whatever reads that file). `install` creates the agent key when there is
// none, and never a principal key (design.md, known limits). A file that is not strict JSON (a
// client's JSON-with-comments) is refused rather than rewritten without its comments.
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Either, Schema } from "effect"
import { dirname, join, basename } from "node:path"
import { parseJson } from "../kernel/json.js"
import { RandomBytes } from "../kernel/services.js"
import { agentKeyPath, createKey, yeaHome } from "./yea-home.js"
import { readServices, resolveService } from "./yea-services.js"
import { type CliError, cliError, runCommand } from "./writ-io.js"

/** The client's file: any JSON object, `mcpServers` (when there) an object of entries. */
const ClientConfig = Schema.Struct(
  { mcpServers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
type ClientConfig = typeof ClientConfig.Type

/** The entry written for the bridge: a command line and the home's path, nothing secret. */
export const BridgeEntry = Schema.Struct({
  command: Schema.String,
  args: Schema.Array(Schema.String),
  env: Schema.Struct({ YEA_HOME: Schema.String })
})

const config = Options.file("config").pipe(Options.withDescription("the MCP client's configuration file (JSON with mcpServers); created if missing"))
const entryName = Options.text("name").pipe(Options.withDefault("yea"), Options.withDescription("the entry's name under mcpServers"))

/** The file's object, or an empty one when there is no file. Follows a link to the real file. */
const readConfig = (path: string): Effect.Effect<{ readonly real: string; readonly value: ClientConfig; readonly mode: number } | undefined, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) return undefined
    const real = yield* Effect.mapError(fs.realPath(path), (e) => cliError("mandate/unreadable", e.message, path))
    const info = yield* Effect.mapError(fs.stat(real), (e) => cliError("mandate/unreadable", e.message, path))
    if (info.type !== "File") return yield* Effect.fail(cliError("mandate/unreadable", "not a regular file", path))
    const text = yield* Effect.mapError(fs.readFileString(real), (e) => cliError("mandate/unreadable", e.message, path))
    const bad = () => cliError("mandate/bad_client_config", "an MCP client configuration is a strict JSON object whose mcpServers is an object", path)
    const parsed = parseJson(text, { integersOnly: false })
    if (Either.isLeft(parsed)) return yield* Effect.fail(bad())
    const value = yield* Effect.mapError(Schema.decodeUnknown(ClientConfig)(parsed.right), bad)
    return { real, value, mode: info.mode & 0o777 }
  })

/** Writes the whole object to a new file beside the real one and renames it into place. */
const writeConfig = (path: string, value: ClientConfig, mode: number): Effect.Effect<void, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const tmp = join(dirname(path), `.${basename(path)}.mandate-new`)
    yield* Effect.ignore(fs.remove(tmp))
    yield* Effect.mapError(fs.writeFileString(tmp, JSON.stringify(value, null, 2) + "\n", { flag: "wx", mode }), (e) => cliError("mandate/unwritable", e.message, tmp))
    yield* Effect.mapError(fs.chmod(tmp, mode), (e) => cliError("mandate/unwritable", e.message, tmp))
    yield* Effect.mapError(fs.rename(tmp, path), (e) => cliError("mandate/unwritable", e.message, path))
  })

const installOptions = {
  config,
  name: entryName,
  service: Options.text("service").pipe(Options.repeated, Options.withDescription("a service URL or saved name to serve (repeatable; default: every saved service)")),
  command: Options.text("command").pipe(Options.withDefault("mandate"), Options.withDescription("the command the client starts (default: mandate, from the PATH)"))
}

/** `install`, under either of its names. */
export const installCommand = (commandName: "install" | "setup") =>
  Command.make(commandName, installOptions, (o) =>
    runCommand(
      Effect.gen(function* () {
        const h = (yield* yeaHome)
        const urls = o.service.length > 0
          ? yield* Effect.forEach(o.service, (s) => resolveService(h, s))
          : (yield* readServices(h)).map((s) => s.url)
        if (urls.length === 0) return yield* Effect.fail(cliError("invalid_params", "no services to serve: save one with `mandate yea add NAME URL` or pass --service", "--service"))
        const agent = yield* createKey(agentKeyPath(h), Effect.flatMap(RandomBytes, (r) => r.bytes(32)).pipe(Effect.provide(RandomBytes.live)))
        const before = yield* readConfig(o.config)
        const entry = Schema.encodeSync(BridgeEntry)({ command: o.command, args: ["yea", "mcp", ...urls], env: { YEA_HOME: h.home } })
        const servers = before?.value.mcpServers ?? {}
        const had = Object.hasOwn(servers, o.name)
        yield* writeConfig(before?.real ?? o.config, { ...(before?.value ?? {}), mcpServers: { ...servers, [o.name]: entry } }, before?.mode ?? 0o600)
        yield* Console.log(`${had ? "replaced" : "added"} ${o.name} in ${o.config}: ${o.command} yea mcp ${urls.join(" ")}`)
        yield* Console.log(`agent key: ${agent.key} (${agent.created ? "created" : "exists"}) ${agentKeyPath(h)}`)
        yield* Console.error("restart the MCP client to load it")
      })
    )
  )

export const yeaInstallCommand = installCommand("install")
export const yeaSetupCommand = installCommand("setup")

export const yeaUninstallCommand = Command.make("uninstall", { config, name: entryName }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const before = yield* readConfig(o.config)
      const servers = before?.value.mcpServers
      if (before === undefined || servers === undefined || !Object.hasOwn(servers, o.name)) {
        return yield* Console.log(`no ${o.name} entry in ${o.config}; nothing to remove`)
      }
      const { [o.name]: _removed, ...rest } = servers
      yield* writeConfig(before.real, { ...before.value, mcpServers: rest }, before.mode)
      yield* Console.log(`removed ${o.name} from ${o.config} (keys and grants are left in place)`)
    })
  )
)

