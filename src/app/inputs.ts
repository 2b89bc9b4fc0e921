// The inputs of `writ serve`, read through @effect/platform's FileSystem (a Layer): the executor's
// key (64 hex digits, readable by its owner only, as `mandate keygen` writes it), an optional
// bindings file (transport identity -> keys, section 7.6) and the handler module, which exports
// the ApplicationService that performs operations (as `default` or `application`).
import { FileSystem } from "@effect/platform"
import { Data, Effect, Option } from "effect"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { parseJson } from "../kernel/json.js"
import type { ServeCode } from "./codes.js"
import type { ApplicationService } from "../writ/executor/services.js"
import { parseBindings, type TransportBindings } from "../bind/writ-http/peer.js"

export class ServeError extends Data.TaggedError("ServeError")<{
  readonly code: ServeCode
  /** The file (or server) the failure is about, when there is one: the store, a key file. */
  readonly path?: string
  readonly message: string
}> {}

/**
 * One line naming a failure in the documented form `<code> at <where>: <message>`: where is the
 * failure's file when it has one, else `otherwise` (e.g. the command).
 */
export const describeServeError = (e: ServeError, otherwise?: string): string => {
  const where = e.path ?? otherwise
  return `${e.code}${where === undefined ? "" : ` at ${where}`}: ${e.message}`
}

const HEX = /^[0-9a-f]{64}$/

/** Reads the executor's key file (as `mandate keygen` writes it). */
export const readSeedFile = (path: string): Effect.Effect<Uint8Array, ServeError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* Effect.mapError(fs.stat(path), (e) => new ServeError({ code: "mandate/unreadable", message: `${path}: ${e.message}` }))
    if ((info.mode & 0o077) !== 0) {
      return yield* Effect.fail(new ServeError({ code: "mandate/key_permissions", message: `${path}: key file readable by others; chmod 600` }))
    }
    const text = (yield* Effect.mapError(fs.readFileString(path), (e) => new ServeError({ code: "mandate/unreadable", message: `${path}: ${e.message}` }))).trim()
    if (!HEX.test(text)) return yield* Effect.fail(new ServeError({ code: "mandate/bad_key_file", message: `${path}: a key file holds 64 lowercase hex digits` }))
    return new Uint8Array(Buffer.from(text, "hex"))
  })

/** Reads a bindings file: `{"<transport identity>": ["did:key:...", ...], ...}`. */
export const readBindingsFile = (path: string): Effect.Effect<TransportBindings, ServeError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* Effect.mapError(fs.readFileString(path), (e) => new ServeError({ code: "mandate/unreadable", message: `${path}: ${e.message}` }))
    const parsed = parseJson(text, { integersOnly: true })
    const bindings = parsed._tag === "Right" ? parseBindings(parsed.right) : Option.none()
    if (Option.isNone(bindings)) {
      return yield* Effect.fail(new ServeError({ code: "mandate/bad_bindings", message: `${path}: expected an object mapping transport identities to arrays of did:key` }))
    }
    return bindings.value
  })

/** Why a handler module did not load. Node runs JavaScript only: a TypeScript module fails with
 * ERR_UNKNOWN_FILE_EXTENSION, which is said as what to do about it (the installed package ships
 * its example handlers built, dist/examples/*.js). */
export const handlerLoadFailure = (path: string, e: unknown): ServeError => {
  const code = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined
  if (code === "ERR_UNKNOWN_FILE_EXTENSION" && /\.[cm]?tsx?$/.test(path)) {
    return new ServeError({
      code: "mandate/bad_handler",
      message: `${path}: a TypeScript handler needs a loader: build it to JavaScript (as dist/examples/payment.js is built), or run mandate under node --import tsx`
    })
  }
  return new ServeError({ code: "mandate/bad_handler", message: `${path}: ${String(e)}` })
}

/** Imports the handler module and takes its ApplicationService (`default` or `application`). */
export const loadHandler = (path: string): Effect.Effect<ApplicationService, ServeError> =>
  Effect.gen(function*() {
    const mod = yield* Effect.tryPromise({
      try: () => import(pathToFileURL(resolve(path)).href) as Promise<Record<string, unknown>>,
      catch: (e) => handlerLoadFailure(path, e)
    })
    const candidate = (mod.application ?? mod.default) as Partial<ApplicationService> | undefined
    if (candidate === undefined || candidate === null || typeof candidate.perform !== "function") {
      return yield* Effect.fail(new ServeError({ code: "mandate/bad_handler", message: `${path}: exports no ApplicationService (default or application with perform)` }))
    }
    return candidate as ApplicationService
  })

