// `mandate yea service-id NAME|KEYFILE|URL`: the id a service's grants and proofs are bound to
// (SPEC §6.3 `svc`, §6.5): from a server key file (its public key is the service id,
// SPEC-mcp-ts "serverKey"), a server's name (its key `<home>/server/NAME.key`, read under that
// row's rules), or from the BRIEF a running service answers HELLO with (§4.1).
//
// A key file is read under the same rules as the agent's keys (yea-home.ts: no symbolic link, a
// regular file in a folder others cannot write); only its public key is printed. Anything with a
// scheme (`yea://`, `yeas://`, `http(s)://`, `stdio:`) is a service to ask.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import { connect } from "../bind/yea-connect/index.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { makeClient } from "../yea/client.js"
import { printable } from "../yea/lens/printable.js"
import { keyFromSeed } from "../yea/keys.js"
import { isServerName, readPublicKey, readServerKey, serverKeyPath, yeaHome } from "./yea-home.js"
import { type CliError, cliError, readBytes, runCommand } from "./writ-io.js"

const target = Args.text({ name: "NAME|KEYFILE|URL" }).pipe(
  Args.withDescription("a server's name (letters, digits, - and _: its key server/NAME.key in the YEA home, e.g. billing), a server key file (64 hex digits, mode 0600; write ./NAME for a file named like a server), or a service's URL: yea://, yeas://, http(s):// or stdio: (with --command)")
)
const options = {
  command: Options.text("command").pipe(Options.optional, Options.withDescription("stdio: the service command line (split on spaces)")),
  ca: Options.file("ca").pipe(Options.optional, Options.withDescription("yeas://: a PEM certificate to trust (e.g. self-signed)")),
  timeout: Options.integer("timeout").pipe(Options.withDefault(30), Options.withDescription("seconds to wait for the service's BRIEF"))
}

/** A URL rather than a file name: a scheme of two letters or more (so `C:` style paths are files). */
export const isServiceUrl = (s: string): boolean => /^[a-z][a-z0-9+.-]+:/i.test(s)

/** HELLO, then the id of the BRIEF; an anonymous request, so a throwaway key signs it (§4.1). */
export const askService = (url: string, o: { command: Option.Option<string>; ca: Option.Option<string>; timeout: number }): Effect.Effect<string, CliError, FileSystem.FileSystem> =>
  Effect.scoped(
    Effect.gen(function* () {
      const ca = Option.isSome(o.ca) ? { tls: { ca: Buffer.from(yield* readBytes(o.ca.value)) } } : {}
      const command = Option.map(o.command, (c) => c.split(" ").filter((w) => w !== ""))
      const conn = yield* Effect.mapError(connect(url, { ...ca, ...(Option.isSome(command) ? { command: command.value } : {}), timeoutMs: o.timeout * 1000 }), (e) => cliError(e.reason, e.message, url))
      const seed = yield* Effect.flatMap(RandomBytes, (r) => r.bytes(32))
      const client = yield* makeClient(conn, { grants: [] }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(seed), RandomBytes.live)))
      const reply = yield* client.hello().pipe(
        Effect.timeoutFail({ duration: `${o.timeout} seconds`, onTimeout: () => cliError("unavailable", `no BRIEF within ${o.timeout} s`, url) }),
        Effect.mapError((e) => (e._tag === "CliError" ? e : cliError(e.reason, e.message, url)))
      )
      if (reply.kind === "ERROR") return yield* Effect.fail(cliError(reply.code, reply.message, url))
      if (reply.kind !== "BRIEF") return yield* Effect.fail(cliError("bad_frame", `HELLO answered ${reply.kind}, not BRIEF`, url))
      // The id is the service's own text: printed safe for a terminal (Lens, untrusted input).
      return printable(reply.service.id)
    })
  ).pipe(Effect.provide(RandomBytes.live))

export const yeaServiceIdCommand = Command.make("service-id", { target, ...options }, (o) =>
  runCommand(
    Effect.gen(function* () {
      const id = isServiceUrl(o.target)
        ? yield* askService(o.target, o)
        : isServerName(o.target)
        ? keyFromSeed(yield* readServerKey(serverKeyPath(yield* yeaHome, o.target)))
        : yield* readPublicKey(o.target)
      yield* Console.log(id)
    })
  )
)
