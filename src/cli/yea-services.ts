// `mandate yea add URL`, `remove URL|ID`, `services` (docs/cli.md "add, remove, services"): the
// list of services in `services.json` of the YEA home, which `mandate yea mcp` with no URL serves.
// `add` sends HELLO first, so only a service that answers with a BRIEF is added (with the id and
// name it claims); the file is written whole and renamed into place, mode 0600.
import { Args, Command } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Layer, Schema } from "effect"
import { join } from "node:path"
import { connect } from "../bind/yea-connect/index.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { makeClient } from "../yea/client.js"
import { cliError, runCommand } from "./writ-io.js"
import { ensurePrivateDir, type Home, readKey, agentKeyPath, yeaHome } from "./yea-home.js"

export const ServiceEntry = Schema.Struct({ url: Schema.String, id: Schema.String, name: Schema.String })
export type ServiceEntry = typeof ServiceEntry.Type
const ServicesFile = Schema.parseJson(Schema.Array(ServiceEntry))

export const servicesPath = (h: Home): string => join(h.home, "services.json")

/** The saved services, empty when there is no file; a malformed file is refused by name. */
export const readServices = (h: Home) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = servicesPath(h)
    if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) return [] as ReadonlyArray<ServiceEntry>
    const text = yield* Effect.mapError(fs.readFileString(path), (e) => cliError("mandate/unreadable", e.message, path))
    return yield* Effect.mapError(Schema.decode(ServicesFile)(text), () => cliError("mandate/bad_services_file", "services.json holds a JSON array of {url, id, name}", path))
  })

/** What a command given a service means by it: anything with a URL scheme as it is (the
 * transport then accepts or refuses its scheme), else a saved service by its name or id
 * (`mandate/unknown_service` when none is). */
export const resolveService = (h: Home, nameOrUrl: string) =>
  /^[a-z][a-z0-9+.-]*:/i.test(nameOrUrl)
    ? Effect.succeed(nameOrUrl)
    : Effect.flatMap(readServices(h), (list) => {
      const found = list.find((s) => s.name === nameOrUrl || s.id === nameOrUrl)
      return found !== undefined
        ? Effect.succeed(found.url)
        : Effect.fail(cliError("mandate/unknown_service", `no saved service is named ${nameOrUrl} (mandate yea services lists them; mandate yea add URL saves one)`, nameOrUrl))
    })

const writeServices = (h: Home, list: ReadonlyArray<ServiceEntry>) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* ensurePrivateDir(h.home)
    const path = servicesPath(h)
    const tmp = path + ".new"
    yield* Effect.ignore(fs.remove(tmp))
    yield* Effect.mapError(fs.writeFileString(tmp, JSON.stringify(list, null, 2) + "\n", { flag: "wx", mode: 0o600 }), (e) => cliError("mandate/unwritable", e.message, tmp))
    yield* Effect.mapError(fs.rename(tmp, path), (e) => cliError("mandate/unwritable", e.message, path))
  })

const url = Args.text({ name: "URL" }).pipe(Args.withDescription("the service's URL (yea://, yeas://, http(s)://)"))

export const yeaAddCommand = Command.make("add", { url }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* yeaHome
        const seed = yield* Effect.orElseSucceed(readKey(agentKeyPath(h)), () => new Uint8Array(32))
        const brief = yield* Effect.gen(function* () {
          const client = yield* makeClient(yield* connect(o.url), { agentName: "mandate-add" })
          return yield* client.hello()
        }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(seed), RandomBytes.live)), Effect.mapError((e) => cliError(`yea/${e.reason}`, e.message, o.url)))
        if (brief.kind !== "BRIEF") return yield* Effect.fail(cliError("mandate/bad_service", `HELLO was answered ${brief.kind}, not BRIEF`, o.url))
        const list = yield* readServices(h)
        const entry = { url: o.url, id: brief.service.id, name: brief.service.name }
        yield* writeServices(h, [...list.filter((s) => s.url !== o.url), entry])
        yield* Console.log(`added ${entry.id} (${entry.name}) at ${entry.url}; restart your AI tool so its bridge serves it`)
      })
    )
  )
)

const which = Args.text({ name: "URL|ID" }).pipe(Args.withDescription("the saved service to remove: its URL or its id"))

export const yeaRemoveCommand = Command.make("remove", { which }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const h = yield* yeaHome
      const list = yield* readServices(h)
      const kept = list.filter((s) => s.url !== o.which && s.id !== o.which)
      if (kept.length === list.length) return yield* Effect.fail(cliError("mandate/unknown_service", "no saved service has this URL or id", o.which))
      yield* writeServices(h, kept)
      yield* Console.log(`removed ${list.length - kept.length} service${list.length - kept.length === 1 ? "" : "s"}`)
    })
  )
)

export const yeaServicesCommand = Command.make("services", {}, () =>
  runCommand(
    Effect.gen(function* () {
      const list = yield* readServices(yield* yeaHome)
      if (list.length === 0) return yield* Console.log("no services; add one with `mandate yea add URL`")
      for (const s of list) yield* Console.log(`${s.id}  ${s.name}  ${s.url}`)
    })
  )
)
