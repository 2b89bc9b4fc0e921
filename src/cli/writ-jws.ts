// `mandate writ jws wrap|unwrap`: the JWS profile of Appendix D. `wrap` signs the envelope with
// your key, which must be the object's signer; `unwrap` checks the envelope and then the object
// exactly as section 6.1 says, and writes the object. Failures print their reason code.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { type JwsError, unwrap, wrap } from "../writ/jws.js"
import { cliError, forceOption, keyLayer, readBytes, readObjectFile, runCommand, writeJson } from "./writ-io.js"
import { FileSystem } from "@effect/platform"

/** The envelope's failure as the command's (same code, same place). */
const fromJws = (e: JwsError) => Effect.fail(cliError(e.reason, e.message, e.path))

const wrapCommand = Command.make(
  "wrap",
  {
    file: Args.text({ name: "FILE" }).pipe(Args.withDescription("A signed Writ object (writ, call, tally, revoke or ack)")),
    key: Options.file("key").pipe(Options.withDescription("Your key file: the object's signer (iss, from, or the executor of a tally)")),
    out: Options.file("out").pipe(Options.optional, Options.withDescription("Write the compact JWS here instead of stdout")),
    force: forceOption
  },
  (o) =>
    runCommand(Effect.gen(function*() {
      const { value } = yield* readObjectFile(o.file, "a Writ object")
      const jws = yield* wrap(value).pipe(Effect.provide(yield* keyLayer(o.key)), Effect.catchTag("JwsError", fromJws))
      if (Option.isNone(o.out)) return yield* Console.log(jws)
      const out = o.out.value
      const fs = yield* FileSystem.FileSystem
      // A new file (O_EXCL), as every --out: an existing one only with --force.
      yield* Effect.mapError(fs.writeFileString(out, jws + "\n", { flag: o.force ? "w" : "wx" }), (e) =>
        e._tag === "SystemError" && e.reason === "AlreadyExists"
          ? cliError("mandate/exists", "refusing to overwrite an existing file (--force replaces it)", out)
          : cliError("mandate/unwritable", e.message, out))
      yield* Console.log(`written to ${out}`)
    }))
).pipe(Command.withDescription("Wrap a signed Writ object as a compact JWS (Appendix D)"))

const unwrapCommand = Command.make(
  "unwrap",
  {
    file: Args.text({ name: "FILE" }).pipe(Args.withDescription("A file holding one compact JWS")),
    out: Options.file("out").pipe(Options.optional, Options.withDescription("Write the object here instead of stdout")),
    force: forceOption
  },
  (o) =>
    runCommand(Effect.gen(function*() {
      const text = Buffer.from(yield* readBytes(o.file)).toString("utf8")
      const { header, object, type } = yield* Effect.catchTag(unwrap(text), "JwsError", fromJws)
      if (Option.isNone(o.out)) return yield* Console.log(JSON.stringify(object, null, 2))
      yield* writeJson(o.out.value, object, o.force)
      yield* Console.log(`${type} signed by ${header.kid}: written to ${o.out.value}`)
    }))
).pipe(Command.withDescription("Check a compact JWS (Appendix D) and the Writ object inside it; print the object"))

export const writJwsCommand = Command.make("jws").pipe(Command.withSubcommands([wrapCommand, unwrapCommand]))
