// `mandate yea services | add NAME URL | remove NAME`: the services this machine's agent talks to,
// by name, in `services.json` of the YEA home (docs/cli.md, "yea add, remove, services"). `add`
// says HELLO first and keeps the id of the BRIEF (§4.1), so a typo'd URL or a host that is not a
// YEA service is refused before it is saved. `yea do` takes a saved name where it takes a URL.
//
// The file is `{"services": [{"name", "url", "id"}]}`, checked with a Schema when read (a bad file
// is refused `mandate/bad_services_file`, never rewritten over), written whole to a new 0600 file
// and renamed over the old one in the 0700 home (yea-home.ts), as grants.json is.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Either, Option, Schema } from "effect"
import { join } from "node:path"
import { parseJson } from "../kernel/json.js"
import { printable } from "../yea/lens/printable.js"
import { cliEnv } from "./io.js"
import { askService, isServiceUrl } from "./yea-service-id.js"
import { checkNoLinks, ensurePrivateDir, type Home, homeFromEnv } from "./yea-home.js"
import { type CliError, cliError, runCommand } from "./writ-io.js"

/** A name to type: lower-case letters, digits, `-` and `_`, at most 40 (a tool-name prefix). */
export const ServiceName = Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,39}$/))
/** The transports a saved service can be reached on without more options (stdio: needs a command). */
const SAVABLE = new Set(["yea:", "yeas:", "http:", "https:"])

export const SavedService = Schema.Struct({ name: ServiceName, url: Schema.String, id: Schema.String })
export type SavedService = typeof SavedService.Type
export const ServicesFile = Schema.Struct({ services: Schema.Array(SavedService) })

export const servicesPath = (h: Home): string => join(h.home, "services.json")

/** The saved services, none when there is no file. */
export const readServices = (h: Home): Effect.Effect<ReadonlyArray<SavedService>, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = servicesPath(h)
    if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) return []
    yield* checkNoLinks(path)
    const text = yield* Effect.mapError(fs.readFileString(path), (e) => cliError("mandate/unreadable", e.message, path))
    const bad = () => cliError("mandate/bad_services_file", `services.json holds {"services": [{"name", "url", "id"}]} with distinct names`, path)
    const parsed = parseJson(text)
    if (Either.isLeft(parsed)) return yield* Effect.fail(bad())
    const file = yield* Effect.mapError(Schema.decodeUnknown(ServicesFile)(parsed.right), bad)
    if (new Set(file.services.map((s) => s.name)).size !== file.services.length) return yield* Effect.fail(bad())
    return file.services
  })

const writeServices = (h: Home, services: ReadonlyArray<SavedService>): Effect.Effect<string, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* ensurePrivateDir(h.home)
    const path = servicesPath(h)
    const tmp = path + ".new"
    yield* Effect.ignore(fs.remove(tmp))
    const body = JSON.stringify(Schema.encodeSync(ServicesFile)({ services }), null, 2) + "\n"
    yield* Effect.mapError(fs.writeFileString(tmp, body, { flag: "wx", mode: 0o600 }), (e) => cliError("mandate/unwritable", e.message, tmp))
    yield* Effect.mapError(fs.chmod(tmp, 0o600), (e) => cliError("mandate/unwritable", e.message, tmp))
    yield* Effect.mapError(fs.rename(tmp, path), (e) => cliError("mandate/unwritable", e.message, path))
    return path
  })

/** A URL as given, or the URL saved under a name (`mandate/no_service` when none is). */
export const resolveService = (h: Home, nameOrUrl: string): Effect.Effect<string, CliError, FileSystem.FileSystem> =>
  isServiceUrl(nameOrUrl)
    ? Effect.succeed(nameOrUrl)
    : Effect.flatMap(readServices(h), (list) => {
        const found = list.find((s) => s.name === nameOrUrl)
        return found === undefined
          ? Effect.fail(cliError("mandate/no_service", "no service saved under this name; see `mandate yea services`", nameOrUrl))
          : Effect.succeed(found.url)
      })

const checkName = (name: string): Effect.Effect<string, CliError> =>
  Schema.is(ServiceName)(name)
    ? Effect.succeed(name)
    : Effect.fail(cliError("invalid_params", "a service name is 1 to 40 of a-z, 0-9, - and _, starting with a letter or digit", "NAME"))

const checkUrl = (url: string): Effect.Effect<string, CliError> => {
  const protocol = URL.canParse(url) ? new URL(url).protocol : undefined
  return protocol !== undefined && SAVABLE.has(protocol)
    ? Effect.succeed(url)
    : Effect.fail(cliError("mandate/bad_url", "a saved service is reached on yea://, yeas://, http:// or https://", url))
}

export const yeaServicesCommand = Command.make("services", {}, () =>
  runCommand(
    Effect.gen(function* () {
      const list = yield* readServices(homeFromEnv(yield* cliEnv))
      if (list.length === 0) return yield* Console.error("no services saved; add one with `mandate yea add NAME URL`")
      const width = Math.max(...list.map((s) => s.name.length))
      // A hand-edited file is text from anywhere: printed safe for a terminal.
      for (const s of list) yield* Console.log(`${s.name.padEnd(width)}  ${printable(s.url)}  ${printable(s.id)}`)
    })
  )
)

const name = Args.text({ name: "NAME" }).pipe(Args.withDescription("the name to save it under: a-z, 0-9, - and _, at most 40"))
const url = Args.text({ name: "URL" }).pipe(Args.withDescription("the service: yea://host:port, yeas://, http(s):// (the HTTP bridge)"))
const addOptions = {
  ca: Options.file("ca").pipe(Options.optional, Options.withDescription("yeas://: a PEM certificate to trust for the HELLO check")),
  noCheck: Options.boolean("no-check").pipe(Options.withDescription("save without saying HELLO (the id is then recorded as unknown)")),
  timeout: Options.integer("timeout").pipe(Options.withDefault(30), Options.withDescription("seconds to wait for the service's BRIEF"))
}

export const yeaAddCommand = Command.make("add", { name, url, ...addOptions }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const h = homeFromEnv(yield* cliEnv)
      const n = yield* checkName(o.name)
      const u = yield* checkUrl(o.url)
      const list = yield* readServices(h)
      const id = o.noCheck ? "unknown" : yield* askService(u, { command: Option.none(), ca: o.ca, timeout: o.timeout })
      const before = list.find((s) => s.name === n)
      const next = before === undefined ? [...list, { name: n, url: u, id }] : list.map((s) => (s.name === n ? { name: n, url: u, id } : s))
      const path = yield* writeServices(h, next)
      yield* Console.log(`${before === undefined ? "added" : "replaced"} ${n}  ${u}  ${id}`)
      yield* Console.error(`saved to ${path}`)
    })
  )
)

export const yeaRemoveCommand = Command.make("remove", { name: Args.text({ name: "NAME" }).pipe(Args.withDescription("the saved service to remove")) }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const h = homeFromEnv(yield* cliEnv)
      const list = yield* readServices(h)
      if (!list.some((s) => s.name === o.name)) {
        return yield* Effect.fail(cliError("mandate/no_service", "no service saved under this name; see `mandate yea services`", o.name))
      }
      yield* writeServices(h, list.filter((s) => s.name !== o.name))
      yield* Console.log(`removed ${o.name}`)
    })
  )
)
