// The conformance runner, spec section 14: every vector file in a directory, each evaluated by the
// operation its `op` names, compared with its `expect` and `reason`.
//
// Objects under `input` are verified from their own text (`rawjson.ts`), minified but otherwise as
// written, so that number spellings, duplicate members and nesting reach the strict reader intact.
import { FileSystem, Path } from "@effect/platform"
import { Effect, Either } from "effect"
import type { Json } from "../kernel/json.js"
import { parseJson } from "../kernel/json.js"
import { checkAck } from "./ack.js"
import { checkBound, narrows, satisfies } from "./bound.js"
import { verifyCall, checkCall } from "./call.js"
import { checkExpiry, verifyChain } from "./chain.js"
import { type WritError, writError } from "./reason.js"
import { canonicalText } from "./sign.js"
import { verifyRevoke } from "./revoke.js"
import { verifyTally } from "./tally.js"
import { Received, type ObjectInput } from "./verify.js"
import { checkWrit, verifyWrit } from "./writ.js"
import { member, minified, scan, type Span } from "./rawjson.js"

export type VectorOp =
  | "canonicalize"
  | "narrows"
  | "satisfies"
  | "verify_writ"
  | "verify_chain"
  | "verify_call"
  | "verify_tally"
  | "verify_revoke"
  | "check_ack"

export interface VectorResult {
  readonly file: string
  readonly name: string
  readonly op: string
  readonly expect: string
  readonly reason?: string | undefined
  readonly actual: "accept" | "reject" | "error"
  readonly actualReason?: string | undefined
  readonly detail?: string | undefined
  readonly pass: boolean
}

/** Verdict of one operation: accept, or reject with a section 11 reason. */
type Outcome = { readonly actual: "accept" | "reject"; readonly reason?: string; readonly detail?: string }

const reject = (e: WritError): Outcome => ({ actual: "reject", reason: e.reason, detail: `${e.path ?? ""} ${e.message}`.trim() })

const strict = (text: string): Either.Either<Json, WritError> =>
  Either.mapLeft(parseJson(text), (e) => writError(e.reason, undefined, e.message))

/** A chain member as the verifier receives it: each element that is an object keeps its own text. */
const chainInput = (text: string, s: Span | undefined): unknown => {
  if (s === undefined) return undefined
  if (s.kind !== "array" || s.elements === undefined) return lenient(text, s)
  return s.elements.map((e): ObjectInput | unknown => (e.kind === "object" ? new Received(minified(text, e)) : lenient(text, e)))
}

const lenient = (text: string, s: Span | undefined): unknown => {
  if (s === undefined) return undefined
  try {
    return JSON.parse(text.slice(s.start, s.end))
  } catch {
    return undefined
  }
}

/** An embedded object (or body) as received: its own text, which section 1.1 judges when it is read. */
function received(text: string, s: Span): Received
function received(text: string, s: Span | undefined): ObjectInput
function received(text: string, s: Span | undefined): ObjectInput {
  return s === undefined ? (null as Json) : new Received(minified(text, s))
}

/** Evaluates one vector's operation on its input. */
export const evaluate = (op: string, text: string, input: Span, now: number | undefined): Effect.Effect<Outcome> => {
  const run = (eff: Effect.Effect<unknown, WritError>): Effect.Effect<Outcome> =>
    Effect.match(eff, { onFailure: reject, onSuccess: () => ({ actual: "accept" as const }) })
  const m = (name: string) => member(input, name)
  switch (op) {
    case "canonicalize": {
      const raw = lenient(text, m("raw"))
      const expected = lenient(text, m("canonical"))
      if (typeof raw !== "string") return Effect.succeed({ actual: "reject", reason: "malformed", detail: "raw is not a string" })
      const r = strict(raw)
      if (Either.isLeft(r)) return Effect.succeed(reject(r.left))
      const got = canonicalText(r.right)
      if (typeof expected === "string" && got !== expected) {
        return Effect.succeed({ actual: "accept", detail: `canonical form ${got} differs from ${expected}` })
      }
      return Effect.succeed({ actual: "accept" })
    }
    case "narrows":
      return run(
        Effect.gen(function* () {
          // Section 3 on the child (read strictly, section 1.1), then on the parent, then the
          // type and the narrowing rule (section 14).
          const child = yield* strictSpan(text, m("child"))
          yield* checkBound(child, "child")
          const parent = yield* strictSpan(text, m("parent"))
          yield* checkBound(parent, "parent")
          yield* narrows(child, parent)
        })
      )
    case "satisfies":
      return run(
        Effect.gen(function* () {
          // Section 3 on the bound, then the argument (read strictly: a value section 1.1 forbids
          // can never reach section 7.2 inside a call), then the rule.
          const bound = yield* strictSpan(text, m("bound"))
          yield* checkBound(bound, "bound")
          const arg = yield* strictSpan(text, m("arg"))
          yield* satisfies(bound, arg)
        })
      )
    case "verify_writ":
      return run(verifyWrit(received(text, m("writ"))))
    case "verify_chain":
      return run(
        Effect.gen(function* () {
          const chain = yield* verifyChain(chainInput(text, m("chain")))
          if (now !== undefined) yield* checkExpiry(chain, now)
        })
      )
    case "verify_call":
      return run(verifyCall(received(text, m("call")), now === undefined ? {} : { now }))
    case "verify_tally":
      return run(
        Effect.gen(function* () {
          // The verifier made K under a chain ending in W (section 6.2): it holds both, so they are
          // read (section 6.1 steps 1 to 5) but their signatures are its own business.
          const w = yield* checkWrit(received(text, m("writ")), "writ")
          const k = yield* checkCall(received(text, m("call")), "call")
          const kchain = yield* Effect.forEach(k.value.chain, (x, i) => checkWrit(x, `call.chain[${i}]`))
          const chain = [...kchain.slice(0, -1), w]
          const resSpan = m("res")
          const body = resSpan === undefined ? undefined : received(text, resSpan)
          yield* verifyTally(received(text, m("tally")), { callId: k.id, op: k.value.op, chain }, body)
        })
      )
    case "verify_revoke":
      return run(verifyRevoke(received(text, m("revoke"))))
    case "check_ack": {
      const resSpan = m("res")
      return run(
        checkAck({
          revoke: received(text, m("revoke")),
          ack: received(text, m("ack")),
          body: resSpan === undefined ? undefined : received(text, resSpan),
          chain: chainInput(text, m("chain")),
          tally: received(text, m("tally"))
        })
      )
    }
    default:
      return Effect.succeed({ actual: "reject", reason: "unsupported_op", detail: `unknown vector op ${op}` })
  }
}

const strictSpan = (text: string, s: Span | undefined): Effect.Effect<Json, WritError> =>
  s === undefined
    ? Effect.fail(writError("malformed", undefined, "member absent from the vector input"))
    : Either.match(strict(minified(text, s)), { onLeft: Effect.fail, onRight: Effect.succeed })

/** Runs one vector file's text. Never fails: a vector that cannot be read is a failed result. */
export const runVectorText = (file: string, text: string): Effect.Effect<VectorResult> =>
  Effect.gen(function* () {
    let meta: Record<string, unknown>
    try {
      meta = JSON.parse(text) as Record<string, unknown>
    } catch (e) {
      return { file, name: file, op: "?", expect: "?", actual: "error" as const, detail: `unreadable vector: ${String(e)}`, pass: false }
    }
    const name = String(meta.name ?? file)
    const op = String(meta.op ?? "?")
    const expect = String(meta.expect ?? "?")
    const reason = typeof meta.reason === "string" ? meta.reason : undefined
    const now = typeof meta.now === "number" ? meta.now : undefined
    const input = member(scan(text), "input")
    if (input === undefined || input.kind !== "object") {
      return { file, name, op, expect, reason, actual: "error" as const, detail: "vector has no input object", pass: false }
    }
    const out = yield* evaluate(op, text, input, now).pipe(
      Effect.catchAllDefect((d) => Effect.succeed<Outcome & { defect?: true }>({ actual: "reject", reason: "defect", detail: String(d) }))
    )
    const pass =
      out.actual === expect && (expect !== "reject" || out.reason === reason) && !(expect === "accept" && out.detail !== undefined)
    return { file, name, op, expect, reason, actual: out.actual, actualReason: out.reason, detail: out.detail, pass }
  })

/** Runs every `*.json` vector file in `dir`, in file-name order. */
export const runConformance = (dir: string): Effect.Effect<ReadonlyArray<VectorResult>, Error, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const files = (yield* fs.readDirectory(dir)).filter((f) => f.endsWith(".json")).sort()
    return yield* Effect.forEach(files, (f) =>
      Effect.flatMap(fs.readFileString(path.join(dir, f)), (text) => runVectorText(f, text))
    )
  }).pipe(Effect.mapError((e) => new Error(String(e))))

/** One line per failure, naming the vector, the expected and actual verdict and reason. */
export const formatFailure = (r: VectorResult): string =>
  `FAIL ${r.file} (${r.name}, ${r.op}): expected ${r.expect}${r.reason ? ` ${r.reason}` : ""}, got ${r.actual}${r.actualReason ? ` ${r.actualReason}` : ""}${r.detail ? ` [${r.detail}]` : ""}`

export const summary = (rs: ReadonlyArray<VectorResult>): string => {
  const passed = rs.filter((r) => r.pass).length
  return `${passed} passed, ${rs.length - passed} failed`
}
