// Where `mandate yea ...` keeps its keys and grants (docs/cli.md "Environment"; design.md, known
// limits: the principal key must be isolated from the agent).
//
//   $YEA_HOME, else $MANDATE_HOME, else ~/.yea   agent.key, grants.json, policy.json,
//                                                services.json, consents/, store/, server/
//   $YEA_PRINCIPAL_HOME, else $MANDATE_PRINCIPAL_HOME (default the home)   principal.key
//
// The reference tools keep these files in `~/.yea` and read `YEA_HOME` and `YEA_PRINCIPAL_HOME`
// (reference docs/cli.md "Environment", SPEC-mcp-ts options table `store`/`serverKey`), so a user
// of those tools finds their keys here unchanged. The `MANDATE_` names are read after the `YEA_`
// ones (they were Mandate's own spellings first); an option naming a file (`--agent-key`,
// `--store`, `--policy`, `--server-key`...) wins over both. Everything is read through Effect's
// Config, so an in-process run (a test) sees its own environment and never the real home folder.
//
// The old default was `~/.mandate`. When neither variable is set, `~/.yea` does not exist and
// `~/.mandate` does, that folder is used as the home (nothing is moved behind the user's back, and
// keys, grants and the store stay together) with one line on stderr saying how to move it. Once
// `~/.yea` exists it is the home and `~/.mandate` is not read. Only the YEA commands use this
// resolver: Writ and the ledger take their files from options.
//
// Key files are the 64-hex-digit seed files of `mandate keygen` (writ-io.ts), mode 0600. The
// folders are created 0700 and refused when they are symbolic links or writable by others; a key
// path is checked link by link and the key read only when it is a regular file, never through a
// symbolic link or from a FIFO (design.md, security review, "Base64url and local state").
// All file access goes through @effect/platform's FileSystem.
import { FileSystem } from "@effect/platform"
import { Config, Console, Effect, Option } from "effect"
import { homedir } from "node:os"
import { dirname, isAbsolute, join, resolve, sep } from "node:path"
import { parseJson } from "../kernel/json.js"
import { keyFromSeed } from "../yea/keys.js"
import { CliIo } from "./io.js"
import { type CliError, cliError, readKeyFile, seedHex, systemWhy, writeKeyFile } from "./writ-io.js"

export interface Home {
  readonly home: string
  readonly principalHome: string
}

/** A variable under its `YEA_` name, else its `MANDATE_` name (docs/cli.md "Environment"). */
export const eitherName = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(Config.nonEmptyString(`YEA_${name}`).pipe(Config.orElse(() => Config.nonEmptyString(`MANDATE_${name}`))))

/** The default home's folder name (the reference tools' `~/.yea`). */
export const HOME_DIR = ".yea"
/** Mandate's default home before it followed the reference tools: still read when it alone exists. */
export const OLD_HOME_DIR = ".mandate"

/** How the home was found: named by a variable, the default, or the old default read in its place. */
export type HomeSource = "variable" | "default" | "old-default"

export interface ResolvedHome extends Home {
  readonly source: HomeSource
}

const homeConfig = Config.all({ home: eitherName("HOME"), principalHome: eitherName("PRINCIPAL_HOME"), user: Config.option(Config.nonEmptyString("HOME")) })

/**
 * The home and where it came from: a variable (YEA_HOME, else MANDATE_HOME), else `~/.yea`, else
 * (when `~/.yea` is missing and `~/.mandate` is a folder) `~/.mandate`.
 */
export const resolveHome: Effect.Effect<ResolvedHome, CliError, FileSystem.FileSystem> = Effect.gen(function* () {
  const c = yield* Effect.mapError(homeConfig, (e) => cliError("mandate/usage", String(e), "YEA_HOME"))
  const withPrincipal = (home: string, source: HomeSource): ResolvedHome => ({ home, principalHome: resolve(Option.getOrElse(c.principalHome, () => home)), source })
  if (Option.isSome(c.home)) return withPrincipal(resolve(c.home.value), "variable")
  const user = Option.getOrElse(c.user, homedir)
  const home = resolve(join(user, HOME_DIR))
  const old = resolve(join(user, OLD_HOME_DIR))
  const fs = yield* FileSystem.FileSystem
  const isDir = (p: string) => Effect.orElseSucceed(Effect.map(fs.stat(p), (i) => i.type === "Directory"), () => false)
  if (!(yield* Effect.orElseSucceed(fs.exists(home), () => false)) && (yield* isDir(old))) return withPrincipal(old, "old-default")
  return withPrincipal(home, "default")
})

/** The one line said when the old default home is read (once per run, see `yeaHome`). */
export const oldHomeNotice = (h: Home): string =>
  `notice: reading the YEA home from ${h.home}, the old default; the default is now ~/${HOME_DIR}: move it with \`mv ${h.home} ${join(dirname(h.home), HOME_DIR)}\` (or set YEA_HOME=${h.home})`

// The runs that have said the notice already: a command resolves the home more than once (its
// keys, its policy.json, its store), and one line is enough. Keyed by the run's streams (CliIo),
// so each in-process run (a test) gets its own line.
const noticed = new WeakSet<object>()

/** The folders, from the run's configuration (the environment: the CLI is the composition root). */
export const yeaHome: Effect.Effect<Home, CliError, FileSystem.FileSystem> = Effect.gen(function* () {
  const h = yield* resolveHome
  if (h.source === "old-default") {
    const io = yield* CliIo
    if (!noticed.has(io)) {
      noticed.add(io)
      yield* Console.error(oldHomeNotice(h))
    }
  }
  return { home: h.home, principalHome: h.principalHome }
})

export const policyFilePath = (h: Home): string => join(h.home, "policy.json")

export const agentKeyPath = (h: Home): string => join(h.home, "agent.key")
export const principalKeyPath = (h: Home): string => join(h.principalHome, "principal.key")
export const grantsPath = (h: Home): string => join(h.home, "grants.json")

const isLink = (fs: FileSystem.FileSystem, path: string) => Effect.orElseSucceed(Effect.as(fs.readLink(path), true), () => false)

/** Every component of `path` that exists, from the root down, is not a symbolic link. */
export const checkNoLinks = (path: string): Effect.Effect<void, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const abs = isAbsolute(path) ? path : resolve(path)
    const parts = abs.split(sep).filter((p) => p !== "")
    let at = ""
    for (const p of parts) {
      at += sep + p
      if (yield* isLink(fs, at)) return yield* Effect.fail(cliError("mandate/symlink", "a symbolic link on a key path; refusing to follow it", at))
    }
  })

/** A private folder: created 0700 if missing; refused if a link, not a folder, or writable by others. */
export const ensurePrivateDir = (dir: string): Effect.Effect<void, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* checkNoLinks(dir)
    const info = yield* Effect.option(fs.stat(dir))
    if (Option.isNone(info)) {
      yield* Effect.mapError(fs.makeDirectory(dir, { recursive: true, mode: 0o700 }), (e) => cliError("mandate/unwritable", e.message, dir))
      yield* Effect.mapError(fs.chmod(dir, 0o700), (e) => cliError("mandate/unwritable", e.message, dir))
      return
    }
    yield* checkPrivateDir(dir)
  })

/** An existing folder that is not a link and not group- or world-writable. */
export const checkPrivateDir = (dir: string): Effect.Effect<void, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* checkNoLinks(dir)
    const info = yield* Effect.mapError(fs.stat(dir), (e) => cliError("mandate/unreadable", e.message, dir))
    if (info.type !== "Directory") return yield* Effect.fail(cliError("mandate/unreadable", "not a folder", dir))
    if ((info.mode & 0o022) !== 0) return yield* Effect.fail(cliError("mandate/key_permissions", `folder mode ${(info.mode & 0o777).toString(8)} lets others write to it; chmod 700`, dir))
  })

/** Reads a key file after the link-by-link check, only when it is a regular file (no FIFO). */
export const readKey = (path: string): Effect.Effect<Uint8Array, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) return yield* Effect.fail(cliError("mandate/no_key", "no key here; run `mandate yea init`", path))
    yield* checkPrivateDir(dirname(path))
    yield* checkNoLinks(path)
    const info = yield* Effect.mapError(fs.stat(path), (e) =>
      e._tag === "SystemError" && e.reason === "NotFound" ? cliError("mandate/no_key", "no key here; run `mandate yea init`", path) : cliError("mandate/unreadable", e.message, path)
    )
    if (info.type !== "File") return yield* Effect.fail(cliError("mandate/unreadable", "not a regular file; refusing to read it", path))
    return yield* readKeyFile(path)
  })

/** The `ed25519:` key of a key file. */
export const readPublicKey = (path: string) => Effect.map(readKey(path), keyFromSeed)

/** Creates a key file (0600) in a private folder unless one exists; returns its key and whether it is new. */
export const createKey = (path: string, seed: Effect.Effect<Uint8Array>) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* ensurePrivateDir(dirname(path))
    if (yield* Effect.orElseSucceed(fs.exists(path), () => false)) return { key: keyFromSeed(yield* readKey(path)), created: false }
    const s = yield* seed
    yield* writeKeyFile(path, s)
    return { key: keyFromSeed(s), created: true }
  })

// A server's key: `<home>/server/<name>.key` (SPEC-mcp-ts, options table, `serverKey`; design
// decision 2: the server key is not one of the secrets SPEC-approval §9 keeps from the agent, so it
// lives in the agent's home). Created on first run; read under the row's rules, which add to the
// agent's keys': a regular file only, at most 64 KiB, owned by this user and readable by no one
// else, in a folder this user owns that no one else can write.

/** The largest key file read (SPEC-mcp-ts `serverKey`): a seed is 65 bytes; anything past this is not a key. */
export const MAX_KEY_FILE_BYTES = 64 * 1024

const SEED_HEX = /^[0-9a-f]{64}$/

/** A server's name as `yea service-id NAME` takes it: letters, digits, `_` and `-`, no dot, no
 * slash, so it can be neither a path nor a URL (anything else is a key file or a service). */
export const isServerName = (s: string): boolean => /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(s)

export const serverKeyDir = (h: Home): string => join(h.home, "server")
export const serverKeyPath = (h: Home, name: string): string => join(serverKeyDir(h), `${name}.key`)

/** This process's user, where the platform has one (POSIX); undefined on Windows, where owners are not checked. */
const currentUid = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined)

const notOwned = (what: string, uid: number, path: string) =>
  cliError("mandate/key_permissions", `${what} belongs to user ${uid}, not to this user; refusing to trust it`, path)

/** The server key folder: private (checkPrivateDir) and, where there are owners, this user's. */
const checkServerKeyDir = (dir: string): Effect.Effect<void, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* checkPrivateDir(dir)
    const me = currentUid()
    const info = yield* Effect.mapError(fs.stat(dir), (e) => cliError("mandate/unreadable", systemWhy(e), dir))
    if (me !== undefined && Option.isSome(info.uid) && info.uid.value !== me) return yield* Effect.fail(notOwned("the folder", info.uid.value, dir))
  })

/**
 * Reads a server key file under the `serverKey` row's rules. No link on the path (checked link by
 * link), then the checks are made on the open file, so the file read is the file checked: a regular
 * file (the path is stat'ed first so that a FIFO is never opened and cannot block), the same file as
 * that stat, at most 64 KiB, this user's, and readable by no one else.
 */
export const readServerKey = (path: string): Effect.Effect<Uint8Array, CliError, FileSystem.FileSystem> =>
  Effect.scoped(
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) {
        // exists() follows links: a dangling link is still a link, refused as one.
        yield* checkNoLinks(path)
        return yield* Effect.fail(cliError("mandate/no_key", "no server key here; `mandate yea mcp-example` creates it on its first run", path))
      }
      yield* checkServerKeyDir(dirname(path))
      yield* checkNoLinks(path)
      const before = yield* Effect.mapError(fs.stat(path), (e) => cliError("mandate/unreadable", systemWhy(e), path))
      if (before.type !== "File") return yield* Effect.fail(cliError("mandate/unreadable", "not a regular file; refusing to read it", path))
      const file = yield* Effect.mapError(fs.open(path, { flag: "r" }), (e) => cliError("mandate/unreadable", systemWhy(e), path))
      const info = yield* Effect.mapError(file.stat, (e) => cliError("mandate/unreadable", systemWhy(e), path))
      const same = Option.isNone(info.ino) || Option.isNone(before.ino) || (info.ino.value === before.ino.value && info.dev === before.dev)
      if (info.type !== "File" || !same) return yield* Effect.fail(cliError("mandate/unreadable", "the file changed while it was opened; refusing to read it", path))
      if (Number(info.size) > MAX_KEY_FILE_BYTES) return yield* Effect.fail(cliError("mandate/bad_key_file", `${Number(info.size)} bytes; a key file is at most ${MAX_KEY_FILE_BYTES}`, path))
      const me = currentUid()
      if (me !== undefined && Option.isSome(info.uid) && info.uid.value !== me) return yield* Effect.fail(notOwned("the key file", info.uid.value, path))
      if ((info.mode & 0o077) !== 0) {
        return yield* Effect.fail(cliError("mandate/key_permissions", `key file mode ${(info.mode & 0o777).toString(8)} lets others read it; chmod 600`, path))
      }
      const bytes = yield* Effect.mapError(file.readAlloc(MAX_KEY_FILE_BYTES), (e) => cliError("mandate/unreadable", systemWhy(e), path))
      const hex = Buffer.from(Option.getOrElse(bytes, () => new Uint8Array(0))).toString("utf8").trim()
      if (!SEED_HEX.test(hex)) return yield* Effect.fail(cliError("mandate/bad_key_file", "a key file holds 64 lowercase hex digits", path))
      return new Uint8Array(Buffer.from(hex, "hex"))
    })
  )

/**
 * The key of server `name`, created on first run: a fresh seed written to a temporary file (0600)
 * in the 0700 folder and hard-linked into place. The link fails if the key exists (as `O_EXCL`
 * would), so two first runs agree on one key, and a reader never sees a half-written key. Either
 * way the key is then read back under readServerKey's rules.
 */
export const ensureServerKey = (h: Home, name: string, seed: Effect.Effect<Uint8Array>): Effect.Effect<{ readonly seed: Uint8Array; readonly path: string; readonly created: boolean }, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const dir = serverKeyDir(h)
    const path = serverKeyPath(h, name)
    yield* ensurePrivateDir(h.home)
    yield* ensurePrivateDir(dir)
    yield* checkServerKeyDir(dir)
    const exists = yield* Effect.orElseSucceed(fs.exists(path), () => false)
    let created = false
    if (!exists) {
      yield* checkNoLinks(path)
      // A fresh 0700 folder of its own beside the key, so the temporary name cannot be taken.
      const tmpDir = yield* Effect.mapError(fs.makeTempDirectory({ directory: dir, prefix: `.${name}.key.` }), (e) => cliError("mandate/unwritable", systemWhy(e), dir))
      const tmp = join(tmpDir, "key")
      const write = Effect.gen(function* () {
        const s = yield* seed
        yield* Effect.mapError(fs.writeFileString(tmp, seedHex(s) + "\n", { flag: "wx", mode: 0o600 }), (e) => cliError("mandate/unwritable", systemWhy(e), tmp))
        // The mode above is masked by the umask, which can only remove bits; chmod makes it exact.
        yield* Effect.mapError(fs.chmod(tmp, 0o600), (e) => cliError("mandate/unwritable", systemWhy(e), tmp))
        return yield* fs.link(tmp, path).pipe(
          Effect.as(true),
          // Another run linked its key first: that key is the one.
          Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => Effect.succeed(false)),
          Effect.mapError((e) => cliError("mandate/unwritable", systemWhy(e), path))
        )
      })
      created = yield* write.pipe(Effect.ensuring(Effect.ignore(fs.remove(tmpDir, { recursive: true }))))
    }
    return { seed: yield* readServerKey(path), path, created }
  })

/** The saved grants (`grants.json`, an array of `pg1.` tokens), empty when there is none. */
export const readGrants = (h: Home): Effect.Effect<ReadonlyArray<string>, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = grantsPath(h)
    if (!(yield* Effect.orElseSucceed(fs.exists(path), () => false))) return []
    yield* checkNoLinks(path)
    const text = yield* Effect.mapError(fs.readFileString(path), (e) => cliError("mandate/unreadable", e.message, path))
    const parsed = parseJson(text)
    if (parsed._tag === "Left" || !Array.isArray(parsed.right) || !parsed.right.every((t) => typeof t === "string")) {
      return yield* Effect.fail(cliError("mandate/bad_grants_file", "grants.json holds a JSON array of pg1. tokens", path))
    }
    return parsed.right as ReadonlyArray<string>
  })

/** Appends `token` to `grants.json` (0600), written whole to a new file and renamed over the old. */
export const saveGrant = (h: Home, token: string): Effect.Effect<string, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* ensurePrivateDir(h.home)
    const list = yield* readGrants(h)
    if (list.includes(token)) return grantsPath(h)
    const path = grantsPath(h)
    const tmp = path + ".new"
    yield* Effect.ignore(fs.remove(tmp))
    const body = JSON.stringify([...list, token], null, 2) + "\n"
    yield* Effect.mapError(fs.writeFileString(tmp, body, { flag: "wx", mode: 0o600 }), (e) => cliError("mandate/unwritable", e.message, tmp))
    yield* Effect.mapError(fs.chmod(tmp, 0o600), (e) => cliError("mandate/unwritable", e.message, tmp))
    yield* Effect.mapError(fs.rename(tmp, path), (e) => cliError("mandate/unwritable", e.message, path))
    return path
  })
