// What every `mandate writ ...` command shares: key files, object files, the error a command fails
// with, and how that error is printed. File access goes through @effect/platform's FileSystem
// (provided by NodeContext in main.ts), so protocol code never touches the disk.
//
// A command never lets a stack trace escape: every failure is a `CliError` with a reason code, the
// section 11 code when a Writ check refused the input, or a `mandate/...` code (section 11, last
// paragraph: implementation codes are namespaced) for what is not a protocol rejection, such as an
// unreadable file. The code is printed first on the line so scripts can match it.
import type { A2aReason, A2aRpcCode } from "../bind/writ-a2a/errors.js"
import { Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Cause, Console, Data, Effect, Either, Layer, Option } from "effect"
import { encodeCanonical } from "../kernel/canonical.js"
import { didKeyFromPublicKey } from "../kernel/didkey.js"
import { publicKeyFromSeed } from "../kernel/ed25519.js"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../kernel/json.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import type { ServeCode } from "../app/codes.js"
import type { WritError, WritReason } from "../writ/reason.js"
import type { YeaReason } from "../yea/reason.js"
import type { ConsentInvalid } from "../yea/approval/reason.js"
import type { ApprovalReason } from "../writ/approval.js"
import type { JwsReason } from "../writ/jws.js"
import type { LedgerReason } from "../ledger/reason.js"
import type { ConsoleReason } from "../console/reason.js"
import { CommandPath } from "./where.js"
import { exitFailed } from "./io.js"

/** A command's failure: a reason code (section 11, or `mandate/...`), where, and why. */
/**
 * What a command fails with: an application code or a server's (app/codes.ts), or the code of the
 * check that refused, as its own union defines it: Writ (section 11, JWS envelopes, approvals),
 * YEA (§7, plain or namespaced `yea/` where a bridge reports it, and consent codes), the decision
 * ledger and the console.
 */
export type CliReason =
  | ServeCode
  | WritReason
  | JwsReason
  | ApprovalReason
  | YeaReason
  | `yea/${YeaReason}`
  | ConsentInvalid["code"]
  | LedgerReason
  | ConsoleReason
  | Exclude<A2aReason, `mandate/${string}`>
  | A2aRpcCode

export class CliError extends Data.TaggedError("CliError")<{
  readonly reason: CliReason
  readonly path?: string
  readonly message: string
}> {}

export const cliError = (reason: CliReason, message: string, path?: string): CliError =>
  path === undefined ? new CliError({ reason, message }) : new CliError({ reason, path, message })

/** A Writ check's failure as the command's failure (same reason, same path). */
export const fromWrit = (e: WritError): CliError => cliError(e.reason, e.message, e.path)

/** One line naming a failure: `<reason> at <path>: <message>`. */
export const describeFailure = (e: { readonly reason: string; readonly path?: string | undefined; readonly message: string }): string =>
  `${e.reason}${e.path === undefined || e.path === "" ? "" : ` at ${e.path}`}: ${e.message}`

/** Runs a command body: a failure or a defect is printed as `error: <reason> at <where>: <why>`
 * on stderr (where: the failure's path, else the command) and the process exit status becomes 1.
 * Never a stack trace. */
export const runCommand = <R>(self: Effect.Effect<void, CliError | WritError, R>): Effect.Effect<void, never, R> =>
  Effect.gen(function*() {
    const command = yield* CommandPath
    const fail = (reason: string, path: string | undefined, message: string) =>
      Effect.zipRight(
        Console.error(`error: ${describeFailure({ reason, path: path === undefined || path === "" ? command : path, message })}`),
        exitFailed
      )
    yield* self.pipe(
      Effect.catchAll((e) => fail(e.reason, e.path, e.message)),
      Effect.catchAllCause((cause) => {
        const e = Cause.squash(cause)
        return fail("mandate/internal", undefined, e instanceof Error ? e.message : String(e))
      })
    )
  })

/** Marks the command's outcome as a refusal (exit status 1) without an error line. */
export const exitRefused = exitFailed

// ---------------------------------------------------------------------------------------------
// Files

/** What the system said about a file (`ENOENT: no such file or directory, stat 'x'`), without
 * the names of the Effect module and method that asked (`NotFound: FileSystem.stat (x): `). */
export const systemWhy = (e: PlatformError): string => e.description ?? (e._tag === "SystemError" ? e.reason : e.message)

/** No object file is larger than a tally with its body (section 1.6), with room for a body. */
export const MAX_FILE_BYTES = 1 << 20

export const readBytes = (path: string): Effect.Effect<Uint8Array, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* Effect.mapError(fs.stat(path), (e) => cliError("mandate/unreadable", systemWhy(e), path))
    if (info.type !== "File") return yield* Effect.fail(cliError("mandate/unreadable", "not a file", path))
    if (Number(info.size) > MAX_FILE_BYTES) return yield* Effect.fail(cliError("too_large", `file over ${MAX_FILE_BYTES} bytes`, path))
    return yield* Effect.mapError(fs.readFile(path), (e) => cliError("mandate/unreadable", systemWhy(e), path))
  })

/** Reads a JSON file strictly (section 1.1: integers only, no duplicates, 64 levels). */
export const readJson = (path: string): Effect.Effect<{ readonly bytes: Uint8Array; readonly value: Json }, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const bytes = yield* readBytes(path)
    const parsed = parseJson(bytes, { maxDepth: 64, integersOnly: true })
    if (Either.isLeft(parsed)) return yield* Effect.fail(cliError(parsed.left.reason, parsed.left.message, path))
    return { bytes, value: parsed.right }
  })

export const readObjectFile = (path: string, what: string) =>
  Effect.flatMap(readJson(path), ({ bytes, value }) =>
    isObject(value) ? Effect.succeed({ bytes, value }) : Effect.fail(cliError("malformed", `${what} is a JSON object`, path))
  )

export const isObject = isJsonObject

/** A readable JSON text for files a person reads (bytes differ from the canonical form only in
 * whitespace, which section 1.2 lets a verifier accept). */
export const pretty = (v: Json): string => JSON.stringify(v, null, 2) + "\n"

export const canonical = (v: Json): string => encodeCanonical(v, "utf16")

/** `--force` beside every `--out FILE`. */
export const forceOption = Options.boolean("force").pipe(
  Options.withDescription("Replace an existing --out file (a regular file only; never through a symbolic link)")
)

/** Writes `--out`: a new file, created with O_CREAT|O_EXCL (flag `wx`), which fails on any
 * existing path, a symbolic link included, even one that points nowhere (POSIX open(2)); so an
 * existing file is refused (`mandate/exists`) and a link is never followed (`mandate/symlink`).
 * With `force` an existing regular file is unlinked first (unlink removes a link itself, never
 * what it points to) and the new file created the same way; a link or a folder is still refused. */
export const writeJson = (path: string, v: Json, force = false): Effect.Effect<void, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const isLink = Effect.orElseSucceed(Effect.as(fs.readLink(path), true), () => false)
    const unwritable = (e: PlatformError) => cliError("mandate/unwritable", systemWhy(e), path)
    if (force && !(yield* isLink)) {
      const info = yield* Effect.option(fs.stat(path))
      if (Option.isSome(info) && info.value.type !== "File") return yield* Effect.fail(cliError("mandate/exists", "not a regular file; refusing to replace it", path))
      if (Option.isSome(info)) yield* Effect.mapError(fs.remove(path), unwritable)
    }
    yield* fs.writeFileString(path, pretty(v), { flag: "wx" }).pipe(
      Effect.catchAll((e) =>
        Effect.flatMap(isLink, (link): Effect.Effect<never, CliError> =>
          link
            ? Effect.fail(cliError("mandate/symlink", "a symbolic link; refusing to write through it", path))
            : e._tag === "SystemError" && e.reason === "AlreadyExists"
            ? Effect.fail(cliError("mandate/exists", "refusing to overwrite an existing file (--force replaces it)", path))
            : Effect.fail(unwritable(e)))
      )
    )
  })

/** A chain file: an array of writs root first, or a single writ (a chain of one), or an object
 * with a `chain` member (a call or a revoke whose chain is reused). */
export const readChainFile = (path: string): Effect.Effect<ReadonlyArray<Json>, CliError, FileSystem.FileSystem> =>
  Effect.flatMap(readJson(path), ({ value }) => {
    if (Array.isArray(value)) return Effect.succeed(value as ReadonlyArray<Json>)
    if (isObject(value) && value.typ === "writ") return Effect.succeed([value])
    if (isObject(value) && Array.isArray(value.chain)) return Effect.succeed(value.chain as ReadonlyArray<Json>)
    return Effect.fail(cliError("malformed", "a chain file holds an array of writs, a writ, or an object with a chain", path))
  })

// ---------------------------------------------------------------------------------------------
// Key files: 64 hexadecimal digits (the 32-byte Ed25519 seed, RFC 8032 section 5.1.5) and a
// newline, readable by the owner only (mode 0600), like the seeds of section 14.1 scenarios.

const HEX = /^[0-9a-f]{64}$/

export const seedHex = (seed: Uint8Array): string => Buffer.from(seed).toString("hex")

/** Writes a new key file with mode 0600; refuses to overwrite an existing file. */
export const writeKeyFile = (path: string, seed: Uint8Array): Effect.Effect<void, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* Effect.orElseSucceed(fs.exists(path), () => false)
    if (exists) return yield* Effect.fail(cliError("mandate/exists", "refusing to overwrite an existing key file", path))
    yield* Effect.mapError(
      fs.writeFileString(path, seedHex(seed) + "\n", { flag: "wx", mode: 0o600 }),
      (e) => cliError("mandate/unwritable", systemWhy(e), path)
    )
    // The mode above is masked by the umask, which can only remove bits; chmod makes it exact.
    yield* Effect.mapError(fs.chmod(path, 0o600), (e) => cliError("mandate/unwritable", systemWhy(e), path))
  })

/** Reads a key file: refused unless only its owner can read it (`mandate/key_permissions`) and it
 * holds exactly one 64-digit hex seed (`mandate/bad_key_file`). */
export const readKeyFile = (path: string): Effect.Effect<Uint8Array, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* Effect.mapError(fs.stat(path), (e) => cliError("mandate/unreadable", systemWhy(e), path))
    if ((info.mode & 0o077) !== 0) {
      return yield* Effect.fail(cliError("mandate/key_permissions", `key file mode ${(info.mode & 0o777).toString(8)} lets others read it; chmod 600`, path))
    }
    const text = yield* Effect.mapError(fs.readFileString(path), (e) => cliError("mandate/unreadable", systemWhy(e), path))
    const hex = text.trim()
    if (!HEX.test(hex)) return yield* Effect.fail(cliError("mandate/bad_key_file", "a key file holds 64 lowercase hex digits", path))
    return new Uint8Array(Buffer.from(hex, "hex"))
  })

export const didOfSeed = (seed: Uint8Array): string => didKeyFromPublicKey(publicKeyFromSeed(seed))

/** The Signer of a key file and the operating system's randomness: what issuing needs. */
export const keyLayer = (path: string): Effect.Effect<Layer.Layer<Signer | RandomBytes>, CliError, FileSystem.FileSystem> =>
  Effect.map(readKeyFile(path), (seed) => Layer.merge(Signer.fromSeed(seed), RandomBytes.live))

/** An executor's endpoint: an absolute `http:` or `https:` URL (section 10), else `mandate/bad_url`. */
export const httpUrl = (text: string): Effect.Effect<URL, CliError> =>
  Effect.try({ try: () => new URL(text), catch: () => cliError("mandate/bad_url", "not a URL", text) }).pipe(
    Effect.filterOrFail((u) => u.protocol === "http:" || u.protocol === "https:", () => cliError("mandate/bad_url", "not an http: or https: URL", text))
  )

/** An optional option's value or undefined. */
export const opt = <A>(o: Option.Option<A>): A | undefined => Option.getOrUndefined(o)
