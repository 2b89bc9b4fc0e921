// The file binding (docs/adoption.md section 2d and Phase 1's "directory of JSON files"): for
// agents that hand work over through a shared folder or a repository, a call and its tally travel
// as files beside the work they are about. For a work item at path W:
//
//   W.writ-call.json    the call (spec section 5), in canonical form; written by the delegator
//   W.writ-tally.json   the executor's answer, the section 10 body {"tally","res"?}
//   W.writ-error.json   an unsigned refusal {"error"} (section 7 steps 1 and 2): no tally exists
//
// When the call's `args` carry `work_sha256`, the base64url SHA-256 of W's bytes, the executor
// runs the call only while W still hashes to it (`file/work_changed` otherwise), so a call signed
// for one version of the work is not applied to another. Files are written to a temporary name and
// renamed, so a reader never sees half a tally. Everything goes through @effect/platform's
// FileSystem service; the executor (a service) decides, this module only moves files.
import { FileSystem } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import { encodeCanonical } from "../../kernel/canonical.js"
import { sha256 } from "../../kernel/hash.js"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import { verifyCall } from "../../writ/call.js"
import { type CallAnswer, callAnswerJson, Executor } from "../../writ/executor/executor.js"
import { type CheckedTally, verifyTally } from "../../writ/tally.js"
import { Received } from "../../writ/verify.js"
import { type FileBindError, fileError, FileReason } from "./errors.js"

export { FileBindError, fileError, FileReason } from "./errors.js"

export const CALL_SUFFIX = ".writ-call.json"
export const TALLY_SUFFIX = ".writ-tally.json"
export const ERROR_SUFFIX = ".writ-error.json"
/** The argument that binds a call to the work's bytes. */
export const WORK_DIGEST_ARG = "work_sha256"
/** Largest file read: a tally (262144 canonical bytes, section 1.6) and its result body. */
export const MAX_FILE_BYTES = 1 << 20

export const callFile = (work: string) => work + CALL_SUFFIX
export const tallyFile = (work: string) => work + TALLY_SUFFIX
export const errorFile = (work: string) => work + ERROR_SUFFIX

const canonical = (v: Json) => encodeCanonical(v, "utf16")

const readFile = (path: string, missing: FileBindError["reason"]) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* Effect.option(fs.stat(path))
    if (Option.isNone(info)) return yield* Effect.fail(fileError(missing, path, "no such file"))
    if (info.value.type !== "File") return yield* Effect.fail(fileError("file/unreadable", path, "not a regular file"))
    if (Number(info.value.size) > MAX_FILE_BYTES) return yield* Effect.fail(fileError("too_large", path, `over ${MAX_FILE_BYTES} bytes`))
    return yield* Effect.mapError(fs.readFile(path), (e) => fileError("file/unreadable", path, e.message))
  })

const readObject = (path: string, missing: FileBindError["reason"]) =>
  Effect.flatMap(readFile(path, missing), (bytes) => {
    const p = parseJson(bytes, { maxDepth: 64, integersOnly: true })
    if (Either.isLeft(p)) return Effect.fail(fileError(p.left.reason, path, p.left.message))
    return isJsonObject(p.right) ? Effect.succeed(p.right) : Effect.fail(fileError("malformed", path, "a JSON object"))
  })

/** Writes `text` to `path` through a temporary file beside it and a rename (atomic on POSIX). */
const writeAtomic = (path: string, text: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const tmp = `${path}.tmp`
    yield* Effect.mapError(fs.writeFileString(tmp, text), (e) => fileError("file/unwritable", tmp, e.message))
    yield* Effect.mapError(fs.rename(tmp, path), (e) => fileError("file/unwritable", path, e.message))
  })

/** base64url SHA-256 of the work's bytes: the value of `work_sha256` in a call about it. */
export const workDigest = (work: string) => Effect.map(readFile(work, "file/unreadable"), (b) => encodeBase64url(sha256(b)))

/** The delegator's side: writes the call beside the work. The same call again is a no-op; a
 * different call already there is `file/exists`. */
export const handOver = (work: string, call: JsonObject) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = callFile(work)
    if (yield* Effect.orElseSucceed(fs.exists(path), () => false)) {
      const there = yield* readObject(path, "missing_call")
      if (canonical(there) === canonical(call)) return path
      return yield* Effect.fail(fileError("file/exists", path, "a different call is handed over beside this work"))
    }
    yield* writeAtomic(path, canonical(call))
    return path
  })

/** The executor's side for one work item: the call file read as received bytes (section 1.1),
 * `work_sha256` checked against the work, the executor's answer written beside it. */
export const executeBeside = Effect.fn("writ.file.executeBeside")(function*(work: string) {
  const executor = yield* Executor
  const bytes = yield* readFile(callFile(work), "missing_call")
  const p = parseJson(bytes, { maxDepth: 64, integersOnly: true })
  if (Either.isRight(p) && isJsonObject(p.right) && isJsonObject(p.right.args) && p.right.args[WORK_DIGEST_ARG] !== undefined) {
    const digest = yield* workDigest(work)
    if (p.right.args[WORK_DIGEST_ARG] !== digest) {
      yield* writeAtomic(errorFile(work), canonical({ error: "file/work_changed" }))
      return yield* Effect.fail(fileError("file/work_changed", work, "the work no longer hashes to the signed work_sha256"))
    }
  }
  const answer: CallAnswer = yield* executor.call(new Received(bytes))
  if (answer._tag === "error") yield* writeAtomic(errorFile(work), canonical(callAnswerJson(answer)))
  else yield* writeAtomic(tallyFile(work), canonical(callAnswerJson(answer)))
  return answer
})

/** Whether a work item still needs its executor: no tally file, or a pending one (section 6). */
const needsWork = (work: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* Effect.orElseSucceed(fs.exists(tallyFile(work)), () => false))) return true
    const t = yield* Effect.either(readObject(tallyFile(work), "missing_tally"))
    return Either.isLeft(t) || !isJsonObject(t.right.tally) || t.right.tally.st === "pending"
  })

/** Every call file in `dir` (not below it) whose work has no final tally, at most `max` of them,
 * in name order, each executed once. Returns the work items and what each was answered. */
export const executeFolder = Effect.fn("writ.file.executeFolder")(function*(dir: string, max = 1000) {
  const fs = yield* FileSystem.FileSystem
  const names = (yield* Effect.mapError(fs.readDirectory(dir), (e) => fileError("file/unreadable", dir, e.message)))
    .filter((n) => n.endsWith(CALL_SUFFIX))
    .sort()
  const done: Array<{ readonly work: string; readonly answer: Either.Either<CallAnswer, FileBindError> }> = []
  for (const n of names) {
    if (done.length >= max) break
    const work = `${dir}/${n.slice(0, -CALL_SUFFIX.length)}`
    if (!(yield* needsWork(work))) continue
    done.push({ work, answer: yield* Effect.either(executeBeside(work)) })
  }
  return done
})

/** The delegator's side, afterwards: the tally beside the work, verified against the call beside
 * it (section 6.2, with the result body); no tally file is `missing_tally`, an error file is its
 * reason. */
export const readTallyBeside = Effect.fn("writ.file.readTallyBeside")(function*(work: string) {
  const fs = yield* FileSystem.FileSystem
  const call = yield* readObject(callFile(work), "missing_call")
  if (!(yield* Effect.orElseSucceed(fs.exists(tallyFile(work)), () => false))) {
    if (yield* Effect.orElseSucceed(fs.exists(errorFile(work)), () => false)) {
      const e = yield* readObject(errorFile(work), "missing_tally")
      return yield* Effect.fail(fileError(Schema.is(FileReason)(e.error) ? e.error : "malformed", errorFile(work), "the executor refused the call unsigned"))
    }
    return yield* Effect.fail(fileError("missing_tally", tallyFile(work), "no tally beside the work"))
  }
  const answer = yield* readObject(tallyFile(work), "missing_tally")
  const k = yield* verifyCall(call)
  const res = answer.res
  const t: CheckedTally = yield* verifyTally(answer.tally as Json, { callId: k.call.id, op: k.call.value.op, chain: k.chain }, res === undefined ? undefined : { value: res })
  return { tally: t, res: res === undefined ? Option.none<Json>() : Option.some(res) }
})
