// The MCP requests a grant binds (docs/mcp-gate.md, "Which methods a grant governs"): each is
// signed as one Writ operation (spec section 5), so `act` decides whether the grant names it,
// the application bounds decide its arguments (section 7.2, closed world with `--closed`), and
// `count`/`total` are consumed by the executor for it as for a tool call (section 7.3).
//
//   tools/call      op `mcp/tools/<name>`     args: the tool's `arguments` (adoption.md 2a)
//   resources/read  op `mcp/resources/read`   args: `{uri}`, so a `uri` bound (a `set` of exact
//                                             URIs, or a `prefix`, section 3.1) decides which
//   prompts/get     op `mcp/prompts/<name>`   args: the prompt's `arguments`
//
// The URI is an argument rather than part of the op: section 3.1 matches prefixes by `/`
// segments, and a URI's own `?`, `#` and percent-escapes would make an `act` prefix say less than
// it seems to; a bound on `uri` is compared as the whole string (`set`) or by the same rule.
//
// A resource or prompt result carries its body as its own members (`contents`; `description` and
// `messages`) with the tally in `_meta` (present.ts BODY_META "result"); a tally that is not `ok`
// has no MCP result shape to ride in (a read result has no `isError`), so it is a JSON-RPC error
// whose `data` holds the signed tally (and its body, if any), which `checkBound` verifies.
import { Effect } from "effect"
import { encodeCanonical } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { argsFailure, prefixMatches } from "../../writ/bound.js"
import { writError, type WritError } from "../../writ/reason.js"
import { hashOf } from "../../writ/sign.js"
import type { CheckedTally } from "../../writ/tally.js"
import type { Bounds } from "../../writ/bound.js"
import { BODY_META, CALL_META, TALLY_META, toolOp } from "./present.js"
import { methodRefused, type MethodRefused, missingTally, type MissingTally, resultMismatch, type ResultMismatch } from "./reason.js"

/** The requests signed as operations. */
export const BOUND_METHODS: ReadonlySet<string> = new Set(["tools/call", "resources/read", "prompts/get"])

/** The op of a `resources/read`. */
export const RESOURCE_READ_OP = "mcp/resources/read"
/** The op of a `prompts/get` of `name`. */
export const promptOp = (name: string): string => `mcp/prompts/${name}`

/** The prompt an op names, or undefined when it is not `mcp/prompts/<name>`. */
export const promptOfOp = (op: string): string | undefined =>
  op.startsWith(promptOp("")) && op.length > promptOp("").length ? op.slice(promptOp("").length) : undefined

/** A bound request as an operation: what it names (tool, URI or prompt), its op and its args. */
export interface BoundRequest {
  readonly method: string
  readonly name: string
  readonly op: string
  readonly args: JsonObject
}

const argumentsOf = (params: JsonObject): JsonObject => (isJsonObject(params.arguments) ? params.arguments : {})

/** The operation a request of a bound method is signed as; undefined for any other method. */
export const boundRequest = (method: string, params: JsonObject): BoundRequest | undefined => {
  const name = typeof params.name === "string" ? params.name : ""
  if (method === "tools/call") return { method, name, op: toolOp(name), args: argumentsOf(params) }
  if (method === "prompts/get") return { method, name, op: promptOp(name), args: argumentsOf(params) }
  if (method === "resources/read") {
    const uri = typeof params.uri === "string" ? params.uri : ""
    return { method, name: uri, op: RESOURCE_READ_OP, args: { uri } }
  }
  return undefined
}

/** The request's params as they leave, carrying `call` (the arguments are the signed args). */
export const withCall = (r: BoundRequest, params: JsonObject, call: Json): JsonObject => {
  const meta = isJsonObject(params._meta) ? params._meta : {}
  return {
    ...params,
    ...(r.method === "resources/read" ? {} : { arguments: r.args }),
    _meta: { ...meta, [CALL_META]: call }
  }
}

/** Whether a leaf's `act` names `op` (section 3.2; `sys/` is never matched, section 8). */
export const names = (bnd: Bounds | JsonObject, op: string): boolean => {
  const act = (bnd as JsonObject).act
  return isJsonObject(act) && act.t === "prefix" && typeof act.v === "string" && !op.startsWith("sys/") && prefixMatches(act.v, op)
}

/** Whether a leaf admits `op` on `args` (act, then section 7.2): what a listing keeps. */
export const admits = (bnd: Bounds, op: string, args: JsonObject): boolean => names(bnd, op) && argsFailure(bnd, args) === undefined

/** A request of a method other than `tools/call` whose op the leaf's `act` does not name: refused
 * with the code it had before the method was bound, so a grant for tools keeps its meaning. */
export const checkNamed = (bnd: Bounds | JsonObject, r: BoundRequest): Effect.Effect<void, MethodRefused> =>
  r.method === "tools/call" || names(bnd, r.op)
    ? Effect.void
    : Effect.fail(methodRefused(`the grant does not name ${r.op} (${r.method})`))

/** The leaf of a call as received (not yet verified: the executor does that). */
export const receivedLeafBounds = (call: JsonObject): JsonObject => {
  const chain = Array.isArray(call.chain) ? call.chain : []
  const leaf = chain[chain.length - 1]
  return isJsonObject(leaf) && isJsonObject(leaf.bnd) ? leaf.bnd : {}
}

const canonicalOf = (v: unknown, path: string): Effect.Effect<string, WritError> =>
  Effect.try({ try: () => encodeCanonical(v as Json, "utf16"), catch: () => writError("malformed", path, "not a JSON value") })

/** Adoption.md 2a, for every bound method: the signed call and the request are the same operation
 * on the same bytes (`malformed` otherwise). */
export const matchBound = (r: BoundRequest, call: unknown): Effect.Effect<JsonObject, WritError> =>
  Effect.gen(function*() {
    if (!isJsonObject(call)) return yield* Effect.fail(writError("malformed", CALL_META, "the call is not a JSON object"))
    if (call.op !== r.op) return yield* Effect.fail(writError("malformed", "op", `the call's op is not ${r.op}`))
    if ((yield* canonicalOf(call.args, "args")) !== (yield* canonicalOf(r.args, "arguments"))) {
      return yield* Effect.fail(writError("malformed", "args", `the ${r.method} request differs from the signed args`))
    }
    return call
  })

/** The body of a resource or prompt result: the members the method defines, nothing else. */
export const boundBody = (method: string, result: JsonObject): JsonObject =>
  method === "resources/read"
    ? { contents: Array.isArray(result.contents) ? result.contents : [] }
    : {
      ...(typeof result.description === "string" ? { description: result.description } : {}),
      messages: Array.isArray(result.messages) ? result.messages : []
    }

/** The result of a resource or prompt whose tally is `ok`. */
export const presentBound = (tally: JsonObject, body: JsonObject): JsonObject => ({
  ...body,
  _meta: { [TALLY_META]: tally, [BODY_META]: "result" }
})

/** The JSON-RPC error `data` of a resource or prompt whose tally is not `ok`. */
export const refusalData = (tally: JsonObject, body: Json | undefined): JsonObject => {
  const code = isJsonObject(tally.err) && typeof tally.err.code === "string" ? tally.err.code : String(tally.st)
  return { reason: code, [TALLY_META]: tally, ...(body === undefined || tally.out === null ? {} : { body }) }
}

export type BoundCheckError = MissingTally | ResultMismatch | WritError

/** Checks a resource or prompt answer (a result, or an error carrying a tally) against the call
 * sent, with `verifyTally` the section 6.2 check client.ts makes of a tool's tally. An error with
 * no tally claims nothing was done and is undefined here (it passes as it is). */
export const checkBound = <R>(
  method: string,
  answer: JsonObject,
  verifyTally: (tally: Json) => Effect.Effect<CheckedTally, WritError, R>
): Effect.Effect<{ readonly tally: CheckedTally; readonly body: JsonObject | undefined; readonly ok: boolean } | undefined, BoundCheckError, R> =>
  Effect.gen(function*() {
    const error = isJsonObject(answer.error) ? answer.error : undefined
    const carrier = error !== undefined ? (isJsonObject(error.data) ? error.data : {}) : isJsonObject(answer.result) ? answer.result : {}
    const meta = error !== undefined ? carrier : isJsonObject(carrier._meta) ? carrier._meta : {}
    const given = meta[TALLY_META]
    if (given === undefined) {
      if (error !== undefined) return undefined
      return yield* Effect.fail(missingTally(`the ${method} result carries no ${TALLY_META}`))
    }
    const tally = yield* verifyTally(given)
    const T = tally.value
    if ((error === undefined) !== (T.st === "ok")) {
      return yield* Effect.fail(resultMismatch(error === undefined ? "result" : "error", `a ${T.st} tally answered as ${error === undefined ? "a result" : "an error"}`))
    }
    const body = error === undefined
      ? (meta[BODY_META] === "result" ? boundBody(method, carrier) : undefined)
      : isJsonObject(carrier.body) ? carrier.body : undefined
    if (T.out === null) {
      if (error === undefined) return yield* Effect.fail(resultMismatch("result", "an ok tally with a null out has no result"))
      return { tally, body: undefined, ok: false }
    }
    if (body === undefined) return yield* Effect.fail(resultMismatch(`_meta.${BODY_META}`, "the tally commits to a body and the answer has none"))
    if (hashOf(body) !== T.out) return yield* Effect.fail(resultMismatch("result", "the body does not hash to the tally's out"))
    return { tally, body, ok: error === undefined }
  })
