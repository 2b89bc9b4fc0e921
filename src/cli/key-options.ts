// Key material on the command line, in one form: a key file, 64 hex digits (the 32-byte Ed25519
// seed) and a newline, mode 0600, as `mandate keygen FILE` and `mandate yea init` write it
// (writ-io.ts readKeyFile). A seed itself is never asked for on the command line: any user of the
// machine can read a process's arguments (ps, /proc/PID/cmdline), while a key file's mode keeps it
// to its owner. The options that took a base64url seed (`--agent-seed`, `--server-seed`, and
// `--approve-here SEED`) are still read, each with a deprecation line on stderr, so that scripts
// written for them keep working until they move to key files.
import { Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { decodeSeed } from "../yea/keys.js"
import { type CliError, cliError, readKeyFile } from "./writ-io.js"

/** `--NAME FILE`: a key file, optional (the command says what it falls back to). */
export const keyFileOption = (name: string, description: string) =>
  Options.file(name).pipe(Options.optional, Options.withDescription(description))

/** The deprecated `--NAME SEED` that `--replacement FILE` replaces. */
export const deprecatedSeedOption = (name: string, replacement: string) =>
  Options.text(name).pipe(
    Options.optional,
    Options.withDescription(`Deprecated: the key's seed in base64url, visible to every user of this machine; use ${replacement} FILE instead`)
  )

const deprecation = (command: string, option: string, replacement: string) =>
  Console.error(`${command}: warning: ${option} is deprecated (a seed on the command line is visible to every user of this machine); give ${replacement} FILE, a key file as \`mandate keygen FILE\` writes it`)

const fromSeedText = (text: string, option: string, what = "a base64url 32-byte seed"): Effect.Effect<Uint8Array, CliError> =>
  Option.match(decodeSeed(text), {
    onNone: () => Effect.fail(cliError("mandate/bad_key", `${option} is not ${what}`)),
    onSome: Effect.succeed
  })

export interface KeySource {
  /** The command, for the deprecation line (`yea mcp`). */
  readonly command: string
  readonly fileOption: string
  readonly file: Option.Option<string>
  readonly seedOption: string
  readonly seed: Option.Option<string>
  /** Where the key comes from when neither option is given; absent: one of them is required. */
  readonly fallback?: Effect.Effect<Uint8Array, CliError, FileSystem.FileSystem>
}

/** The seed of a key given as `--x-key FILE`, or (deprecated) as `--x-seed SEED`, or the fallback. */
export const keyFrom = (k: KeySource): Effect.Effect<Uint8Array, CliError, FileSystem.FileSystem> => {
  if (Option.isSome(k.file) && Option.isSome(k.seed)) {
    return Effect.fail(cliError("mandate/usage", `give ${k.fileOption} or ${k.seedOption}, not both`))
  }
  if (Option.isSome(k.file)) return readKeyFile(k.file.value)
  if (Option.isSome(k.seed)) return Effect.zipRight(deprecation(k.command, k.seedOption, k.fileOption), fromSeedText(k.seed.value, k.seedOption))
  return k.fallback ?? Effect.fail(cliError("mandate/usage", `give ${k.fileOption} FILE, a key file as \`mandate keygen FILE\` writes it`))
}

/** An option whose value is a key file, or (deprecated) a base64url seed where no such file exists. */
export const keyFileOrSeed = (value: string, command: string, option: string): Effect.Effect<Uint8Array, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const isFile = yield* Effect.orElseSucceed(fs.exists(value), () => false)
    if (isFile || Option.isNone(decodeSeed(value))) return yield* readKeyFile(value)
    yield* deprecation(command, `${option} SEED`, `${option}`)
    return yield* fromSeedText(value, option)
  })
