// The client side of the MCP binding (docs/adoption.md 2a; docs/bindings.md, Client): build the
// `tools/call` params carrying a call, refuse to send a chain with consumable bounds to a server
// that does not advertise the extension, and verify a result before anything in it is believed.
//
// A result authenticates exactly three things (bindings.md, "What a verified result
// authenticates"): the tally (spec section 6.2 against the call sent), the body
// (`structuredContent`, present and an object exactly when `out` is not null, hashing to `out`),
// and `isError` (true exactly when `st` is not `ok`; a missing `isError` is false, as in MCP).
// Everything else is rebuilt by `present`, never passed on.
import { Effect } from "effect"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { type VerifiedCall, verifyCall } from "../../writ/call.js"
import { type WritError, writError } from "../../writ/reason.js"
import { hashOf } from "../../writ/sign.js"
import { type CheckedTally, verifyTally, verifyTallyObject } from "../../writ/tally.js"
import type { CheckedWrit } from "../../writ/writ.js"
import { BODY_META, type BodyForm, CALL_META, ERROR_META, present, resultBody, TALLY_META, toolOp } from "./present.js"
import { missingTally, resultMismatch, type ResultMismatch, unenforcedServer, type UnenforcedServer, type MissingTally } from "./reason.js"

/** The `tools/call` params for `call` (its `op` names the tool, its `args` are the arguments). */
export const params = (tool: string, call: JsonObject, meta: JsonObject = {}): JsonObject => ({
  name: tool,
  arguments: isJsonObject(call.args) ? call.args : {},
  _meta: { ...meta, [CALL_META]: call }
})

/** Whether any writ of the chain carries a consumable bound (`max` or `count`, adoption.md 2a). */
export const hasConsumableBounds = (chain: ReadonlyArray<CheckedWrit>): boolean =>
  chain.some((w) => Object.values(w.value.bnd).some((b) => b.t === "max" || b.t === "count"))

/** Adoption.md 2a, first client rule: a chain with `max` or `count` bounds goes only to a server
 * that advertises `io.writ/delegation` (`unenforced_server`). */
export const ready = (chain: ReadonlyArray<CheckedWrit>, advertised: boolean): Effect.Effect<void, UnenforcedServer> =>
  advertised || !hasConsumableBounds(chain)
    ? Effect.void
    : Effect.fail(unenforcedServer("the server does not advertise io.writ/delegation and the chain has max or count bounds"))

/** The reasons a call is refused with at section 7 steps 3 to 10: a signed `failed` tally whose
 * `acc` may lie past `exp` (an `expired` refusal) or whose chain may not verify, so it is checked
 * as section 6.1 under the party that received the call and must name this call. */
const refusalCodes: ReadonlySet<string> = new Set([
  "chain_broken", "not_narrowed", "unknown_bound", "expired", "root_not_accepted", "wrong_executor", "revoked",
  "peer_mismatch", "no_standing", "forbidden_op", "missing_arg", "out_of_bounds", "count_exhausted", "total_exhausted"
])

/** Section 6.2 for the tally answering `sent` (a refusal as above). */
export const verifyAnswer = (sent: VerifiedCall, tally: Json): Effect.Effect<CheckedTally, WritError> =>
  Effect.gen(function*() {
    const leaf = sent.chain[sent.chain.length - 1]
    const t = isJsonObject(tally) ? tally : {}
    const code = isJsonObject(t.err) ? t.err.code : undefined
    if (t.st === "failed" && typeof code === "string" && refusalCodes.has(code)) {
      const checked = yield* verifyTallyObject(tally, leaf.value.hld, "tally")
      if (checked.value.call !== sent.call.id) return yield* Effect.fail(writError("tally_mismatch", "tally.call", "the refusal answers another call"))
      if (checked.value.op !== sent.call.value.op) return yield* Effect.fail(writError("tally_mismatch", "tally.op", "the refusal names another op"))
      return checked
    }
    return yield* verifyTally(tally, { callId: sent.call.id, op: sent.call.value.op, chain: sent.chain })
  })

export type CheckError = MissingTally | ResultMismatch | WritError

/** A verified result: the tally and the body it commits to (absent when `out` is null). */
export interface Checked {
  readonly tally: CheckedTally
  readonly body: JsonObject | undefined
  /** Where the body was carried (present.ts `BODY_META`). */
  readonly form: BodyForm
}

/**
 * Verifies `result` as the answer to `call` (bindings.md `Check`): no tally is `missing_tally`; a
 * tally that fails section 6.2 fails with its section 11 reason; a body or `isError` that
 * contradicts the tally is `result_mismatch`.
 */
export const check: (call: Json, result: unknown) => Effect.Effect<Checked, CheckError> = Effect.fn("writ.mcp.check")(
  function*(call: Json, result: unknown) {
    const sent = yield* verifyCall(call)
    const r = isJsonObject(result) ? result : {}
    const meta = isJsonObject(r._meta) ? r._meta : {}
    const tally = meta[TALLY_META]
    if (tally === undefined) {
      const code = typeof meta[ERROR_META] === "string" ? ` (the server refused it unsigned: ${meta[ERROR_META]})` : ""
      return yield* Effect.fail(missingTally(`the result carries no ${TALLY_META}${code}`))
    }
    const checked = yield* verifyAnswer(sent, tally)
    const T = checked.value
    // The body: present and an object exactly when `out` is not null, hashing to `out`. In the
    // "result" form it is the result's own content and structuredContent (present.ts BODY_META).
    const form: BodyForm = meta[BODY_META] === "result" ? "result" : "structured"
    if (meta[BODY_META] !== undefined && form !== "result") return yield* Effect.fail(resultMismatch(`_meta.${BODY_META}`, "an unknown body form"))
    if (form === "result" && T.out === null) return yield* Effect.fail(resultMismatch(`_meta.${BODY_META}`, `a ${T.st} tally with a null out has no body`))
    const body = form === "result" ? resultBody(r) : r.structuredContent
    if (form === "result" && !Array.isArray(r.content)) return yield* Effect.fail(resultMismatch("content", "a relayed result has content blocks"))
    if (T.out !== null) {
      if (!isJsonObject(body)) return yield* Effect.fail(resultMismatch("structuredContent", "the tally commits to a body and the result has none"))
      if (hashOf(body) !== T.out) return yield* Effect.fail(resultMismatch("structuredContent", "the body does not hash to the tally's out"))
    } else if (body !== undefined) {
      return yield* Effect.fail(resultMismatch("structuredContent", `a ${T.st} tally with a null out has no body`))
    }
    // `isError`: true exactly when `st` is not `ok`; missing counts as false.
    const isError = r.isError === undefined ? false : r.isError
    if (isError !== (T.st !== "ok")) {
      return yield* Effect.fail(resultMismatch("isError", `isError ${String(r.isError)} contradicts the tally's st ${T.st}`))
    }
    return { tally: checked, body: T.out === null ? undefined : (body as JsonObject), form }
  }
)

/** `check`, then the result to show in its place, rebuilt from what the tally authenticates. */
export const verified = (call: Json, result: unknown): Effect.Effect<{ readonly checked: Checked; readonly result: JsonObject }, CheckError> =>
  Effect.map(check(call, result), (checked) => ({ checked, result: present(checked.tally.json, checked.body, checked.form) }))

/** The tool a call names, or undefined when its `op` is not `mcp/tools/<tool>`. */
export const toolOfOp = (op: string): string | undefined =>
  op.startsWith(toolOp("")) && op.length > toolOp("").length ? op.slice(toolOp("").length) : undefined
