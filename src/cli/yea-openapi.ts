// `mandate yea openapi SPEC.json --base URL`: a REST API served as a YEA service (docs/openapi.md)
// on yea:// (TCP, loopback by default), or the HTTP bridge. GETs are `ask`; writes are `intent`
// whose proposal shows the request and sends nothing until COMMIT.
//
// `--preset github|petstore` (reference openapi.md "Presets") serves the document the package
// ships for that API, narrowed to the preset's operations with their risks and projections, its
// credentials read from the environment (GITHUB_TOKEN). A SPEC given as well replaces the shipped
// document (the preset's allow-list still applies), `--base` its server, `--id` and `--prefix` its
// id and prefix, and a `--header`/`--header-file` header the one a credential would set.
import { Args, Command, Options } from "@effect/cli"
import { FetchHttpClient } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { serveOn, stateLayer } from "../app/yea-serve.js"
import { upstreamLayer } from "../bind/yea-openapi/index.js"
import { fromOpenAPI } from "../yea/openapi/index.js"
import { makeService } from "../yea/service/runtime.js"
import { parseHeader, readHeaderFile } from "./header-file.js"
import { cliError, runCommand } from "./writ-io.js"
import { readSpec } from "./yea-openapi-source.js"
import { credentialsLine, presetCredentials, resolvePreset } from "./yea-openapi-preset.js"
import { presetNames } from "../yea/openapi/presets/index.js"
import { trustOf } from "./yea-local.js"

const spec = Args.text({ name: "SPEC" }).pipe(
  Args.withDescription("The OpenAPI document (JSON) describing the REST API: a file, or an http(s):// URL fetched at start (with --preset, it replaces the preset's own)"),
  Args.optional
)
const preset = Options.text("preset").pipe(
  Options.optional,
  Options.withDescription("serve a preset API: github (16 operations; GITHUB_TOKEN as a bearer token) or petstore; its operations, risks and projections, and the document shipped with it")
)
const base = Options.text("base").pipe(Options.optional, Options.withDescription("the API's base URL (default: the spec's first server)"))
const id = Options.text("id").pipe(Options.optional, Options.withDescription("the service id (default: the base URL's host)"))
const prefix = Options.text("prefix").pipe(Options.optional, Options.withDescription("the capability prefix (default: a slug of the API's title)"))
const header = Options.text("header").pipe(Options.repeated, Options.withDescription("K: V sent on every upstream call, never shown to the model (repeatable); put credentials in --header-file instead"))
const headerFile = Options.file("header-file").pipe(
  Options.optional,
  Options.withDescription("a file of headers sent on every upstream call, one `K: V` a line, readable by its owner only (mode 0600): where credentials go, off the command line")
)
const trust = Options.text("trust").pipe(Options.repeated, Options.withDescription("a principal whose grants are accepted (repeatable; default: YEA_TRUST, else your own principal key)"))
const port = Options.integer("port").pipe(Options.withDefault(7447), Options.withDescription("The TCP or HTTP port to serve on (0: any free port)"))
const host = Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("the address to listen on (0.0.0.0 inside a container)"))
const http = Options.boolean("http").pipe(Options.withDescription("serve the HTTP bridge instead of yea://"))
// Proposals and commit claims outlive the process in this file, so a commit cut off by a kill is
// known at restart and never sent upstream again.
const sqlite = Options.file("sqlite").pipe(Options.optional, Options.withDescription("keep state in this SQLite file (default: memory)"))

export const yeaOpenapiCommand = Command.make("openapi", { spec, preset, base, id, prefix, header, headerFile, trust, port, http, sqlite, host }, (o) =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const chosen = Option.isSome(o.preset) ? yield* resolvePreset(o.preset.value) : undefined
        if (Option.isNone(o.spec) && chosen === undefined) {
          return yield* Effect.fail(cliError("mandate/usage", `name the OpenAPI document (SPEC) or a preset (--preset ${presetNames.join("|")})`))
        }
        const doc = Option.isSome(o.spec) ? yield* readSpec(o.spec.value).pipe(Effect.provide(FetchHttpClient.layer)) : chosen?.spec
        const trusted = yield* trustOf(o.trust)
        const credentials = chosen === undefined ? undefined : yield* presetCredentials(chosen)
        const headers: Record<string, string> = { ...credentials?.headers }
        for (const h of o.header) {
          const parsed = parseHeader(h)
          if (parsed === undefined) return yield* Effect.fail(cliError("mandate/usage", `--header ${JSON.stringify(h)} is not "K: V"`))
          headers[parsed[0].toLowerCase()] = parsed[1]
        }
        // Lower-cased, so a header given here replaces a preset's credential of the same name rather than joining it.
        if (Option.isSome(o.headerFile)) for (const [k, v] of yield* readHeaderFile(o.headerFile.value)) headers[k.toLowerCase()] = v
        const service = fromOpenAPI(doc, {
          trust: trusted,
          ...(Option.isSome(o.base) ? { base: o.base.value } : {}),
          ...(Option.isSome(o.id) ? { id: o.id.value } : chosen !== undefined ? { id: chosen.id } : {}),
          ...(Option.isSome(o.prefix) ? { prefix: o.prefix.value } : chosen !== undefined ? { prefix: chosen.prefix } : {}),
          ...(chosen !== undefined ? { operations: chosen.operations } : {})
        })
        const runtime = yield* makeService(service).pipe(Effect.provide(upstreamLayer({ headers })))
        const url = yield* Effect.mapError(serveOn(runtime, o.http ? { _tag: "http", port: o.port, host: o.host } : { _tag: "tcp", port: o.port, host: o.host }), (e) => cliError(`yea/${e.reason}`, e.message))
        yield* Console.error(`serving ${service.id} (${Object.keys(service.capabilities).length} capabilities) at ${url}`)
        if (chosen !== undefined) yield* Console.error(credentialsLine(chosen, credentials?.used ?? []))
        yield* Effect.never
      }).pipe(Effect.provide(stateLayer(Option.getOrUndefined(o.sqlite))), Effect.catchTag("StoreError", (e) => Effect.fail(cliError("mandate/store_unavailable", e.message))))
    )
  )
)
