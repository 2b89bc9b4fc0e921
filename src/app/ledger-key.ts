// The pseudonym key of a safe_telemetry ledger, kept outside the ledger's store (seed "Decision
// Ledger": safe_telemetry "pseudonymizes identifiers with a local key"; kept in the same file as the
// pseudonyms, the key would let whoever copies the file link them back). Where it comes from, first
// found wins:
//   1. a key given by the caller (OpenOptions.key);
//   2. a key file named by the caller (OpenOptions.keyFile);
//   3. the secret in MANDATE_LEDGER_KEY (read through Config, held as a Redacted);
//   4. the key file beside a SQLite ledger: FILE.key (a PostgreSQL ledger has no default).
// A key file holds 64 hex digits and a newline, mode 0600 (refused if others may read it). `init`
// creates the key file when no key is found; opening a ledger never does: a safe_telemetry ledger
// opened without its key is refused (`key_missing`), since a fresh key would silently change every
// pseudonym.
import { FileSystem } from "@effect/platform"
import { Config, Effect, Option, Redacted } from "effect"
import { type StoreError, storeError } from "../accounting/store-error.js"
import { ledgerError, type LedgerError, TELEMETRY_KEY_BYTES, type TelemetryKey } from "../ledger/index.js"

/** The environment variable that may hold the key (64 hex digits). */
export const KEY_ENV = "MANDATE_LEDGER_KEY"

export interface KeyOptions {
  /** The key itself (32 bytes). */
  readonly key?: TelemetryKey
  /** A key file to read the key from (and, for `init` or a ledger whose key is moved out, to write it to). */
  readonly keyFile?: string
}

const HEX = new RegExp(`^[0-9a-fA-F]{${TELEMETRY_KEY_BYTES * 2}}$`)

/** The key a text names (a key file's content or the secret), or `key_invalid`. */
export const parseKey = (text: string, where: string): Effect.Effect<TelemetryKey, LedgerError> => {
  const t = text.trim()
  return HEX.test(t)
    ? Effect.succeed(new Uint8Array(Buffer.from(t, "hex")))
    : Effect.fail(ledgerError("key_invalid", `a ledger key is ${TELEMETRY_KEY_BYTES * 2} hex digits`, where))
}

/** The key in the file at `path`, none if there is no such file; `key_invalid` if others may read it or it holds no key. */
export const readKeyFile = (path: string): Effect.Effect<Option.Option<TelemetryKey>, LedgerError | StoreError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) return Option.none()
    const info = yield* Effect.mapError(fs.stat(path), storeError("ledger.key_file", path))
    if ((info.mode & 0o077) !== 0) {
      return yield* ledgerError("key_invalid", `key file mode ${(info.mode & 0o777).toString(8)} lets others read it; chmod 600`, path)
    }
    const text = yield* Effect.mapError(fs.readFileString(path), storeError("ledger.key_file", path))
    return Option.some(yield* parseKey(text, path))
  })

/** Writes a new key file with mode 0600; never over an existing file. */
export const writeKeyFile = (path: string, key: TelemetryKey): Effect.Effect<void, StoreError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFileString(path, Buffer.from(key).toString("hex") + "\n", { flag: "wx", mode: 0o600 })
    // The mode above is masked by the umask, which can only remove bits; chmod makes it exact.
    yield* fs.chmod(path, 0o600)
  }).pipe(Effect.mapError(storeError("ledger.key_file", path)))

/** The secret in MANDATE_LEDGER_KEY, if set. */
const secret: Effect.Effect<Option.Option<TelemetryKey>, LedgerError> = Effect.gen(function*() {
  const value = yield* Effect.mapError(Config.option(Config.redacted(KEY_ENV)), (e) => ledgerError("key_invalid", String(e), KEY_ENV))
  return Option.isNone(value) ? Option.none() : Option.some(yield* parseKey(Redacted.value(value.value), KEY_ENV))
})

/**
 * The key, from the first source that has one (see the top of this module); `besideLedger` is the
 * default key file (FILE.key of a SQLite ledger), if there is one.
 */
export const findKey = (options: KeyOptions, besideLedger: string | undefined): Effect.Effect<Option.Option<TelemetryKey>, LedgerError | StoreError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (options.key !== undefined) {
      if (options.key.length !== TELEMETRY_KEY_BYTES) return yield* ledgerError("key_invalid", `a ledger key is ${TELEMETRY_KEY_BYTES} bytes`, "key")
      return Option.some(options.key)
    }
    if (options.keyFile !== undefined) return yield* readKeyFile(options.keyFile)
    const fromEnv = yield* secret
    if (Option.isSome(fromEnv)) return fromEnv
    return besideLedger === undefined ? Option.none() : yield* readKeyFile(besideLedger)
  })

/** Where a key is written when none is found: the named key file, else the one beside the ledger. */
export const keyFileFor = (options: KeyOptions, besideLedger: string | undefined): string | undefined => options.keyFile ?? besideLedger
