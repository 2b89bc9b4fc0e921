// `mandate console [--store FILE] [--ledger FILE] [--policy FILE] [--keys PATH] [--port N] [--host H]`: serves
// the read-only console page (src/console) on loopback until interrupted. Prints one line with its
// URL once it listens; any failure is one `error: <reason> at <where>: <why>` line and exit 1.
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { serveConsole } from "../console/listen.js"
import { parseJson } from "../kernel/json.js"
import { decodePolicySpec, toPolicy } from "../ledger/index.js"
import { keyFromSeed } from "../yea/keys.js"
import { cliError, didOfSeed, readKeyFile, runCommand } from "./writ-io.js"
import { basename, join } from "node:path"

const options = {
  store: Options.file("store").pipe(Options.optional, Options.withDescription("An executor's SQLite store (mandate writ serve --store): audit record and calls")),
  ledger: Options.file("ledger").pipe(Options.optional, Options.withDescription("A decision ledger's SQLite file (mandate ledger init)")),
  ledgerName: Options.text("ledger-name").pipe(Options.withDefault("default"), Options.withDescription("The ledger's name in that file")),
  policy: Options.file("policy").pipe(Options.optional, Options.withDescription("A policy file: show the replay diff of the ledger under it (mandate ledger replay)")),
  port: Options.integer("port").pipe(Options.withDefault(8484), Options.withDescription("TCP port (0: any free port)")),
  host: Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("Address to listen on (loopback by default)")),
  keys: Options.text("keys").pipe(Options.repeated, Options.withDescription("A key file (hex seed, as mandate keygen writes it) or a folder of *.key files: principals are shown by the file's name")),
  allowHost: Options.text("allow-host").pipe(Options.repeated, Options.withDescription("A Host name to answer besides loopback's (refused otherwise: DNS rebinding)"))
}

const readPolicy = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(Effect.mapError((e) => cliError("mandate/unreadable", e.message, file)))
    const parsed = parseJson(text, { maxDepth: 16, integersOnly: false })
    if (parsed._tag === "Left") return yield* Effect.fail(cliError("invalid_policy", parsed.left.message, file))
    const spec = yield* decodePolicySpec(parsed.right).pipe(Effect.mapError((e) => cliError(e.reason, e.detail, file)))
    return { file, policy: toPolicy(spec) }
  })

/** The principals' names: each key file's base name, under its did:key and its YEA `ed25519:` form. */
const readNames = (paths: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names: Array<{ id: string; name: string }> = []
    for (const p of paths) {
      const info = yield* fs.stat(p).pipe(Effect.mapError((e) => cliError("mandate/unreadable", e.message, p)))
      const files = info.type === "Directory"
        ? (yield* fs.readDirectory(p).pipe(Effect.mapError((e) => cliError("mandate/unreadable", e.message, p)))).filter((f) => f.endsWith(".key")).sort().map((f) => join(p, f))
        : [p]
      for (const f of files) {
        const seed = yield* readKeyFile(f)
        const name = basename(f).replace(/\.key$/, "")
        names.push({ id: didOfSeed(seed), name }, { id: keyFromSeed(seed), name })
      }
    }
    return names
  })

export const consoleCommand = Command.make("console", options, (o) =>
  runCommand(Effect.scoped(Effect.gen(function*() {
    const policy = Option.isSome(o.policy) ? Option.some(yield* readPolicy(o.policy.value)) : Option.none()
    const names = yield* readNames(o.keys)
    const served = yield* serveConsole(
      { store: o.store, ledger: Option.map(o.ledger, (file) => ({ file, name: o.ledgerName })), policy, names },
      { port: o.port, host: o.host, allowHosts: o.allowHost }
    ).pipe(Effect.mapError((e) => cliError(e.reason, e.detail, e.where)))
    yield* Console.log(`console on ${served.url} (read-only; Ctrl-C stops it)`)
    return yield* Effect.never
  })))
)
