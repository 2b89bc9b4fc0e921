// The A2A binding, client side: put a call in a message (either form), a revoke in a `CancelTask`,
// and read back a task, accepting it only when its tally verifies against the call (spec section
// 6.2) and the task agrees with it. As on MCP (docs/bindings.md), a task is authenticated only
// through its tally: the tally, the result body its `out` commits to, and the state its `st`
// stands for. Anything else in the task is not, and is not returned.
import { Effect, Option } from "effect"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { verifyCall } from "../../writ/call.js"
import { tallyIdentity } from "../../writ/sign.js"
import { type CheckedTally, verifyTallyTree } from "../../writ/tally.js"
import { a2aError, type A2aError } from "./errors.js"
import {
  CALL_KEY, CALL_MEDIA_TYPE, type CancelTaskParams, type Message, RESULT_MEDIA_TYPE, REVOKE_KEY, TALLY_KEY, TALLY_MEDIA_TYPE, type Task
} from "./schema.js"
import { type CallForm, stateOf } from "./server.js"

/** A request message carrying `call` in the preferred part form or in metadata. */
export const callMessage = (call: JsonObject, form: CallForm, messageId: string, text?: string): Message => ({
  messageId,
  role: "ROLE_USER",
  parts: [
    ...(text === undefined ? [] : [{ text }]),
    ...(form === "part" ? [{ data: call, mediaType: CALL_MEDIA_TYPE }] : [])
  ],
  ...(form === "metadata" ? { metadata: { [CALL_KEY]: call } } : {})
})

/** `tasks/cancel` parameters carrying a revoke (section 9.1). */
export const cancelParams = (taskId: string, revoke: JsonObject): CancelTaskParams => ({ id: taskId, metadata: { [REVOKE_KEY]: revoke } })

/** The tally of a task: its last artifact, in either form, and the result body artifact before it. */
export const tallyFrom = (task: Task): Effect.Effect<{ readonly tally: JsonObject; readonly res: Option.Option<JsonObject> }, A2aError> =>
  Effect.gen(function*() {
    const artifacts = task.artifacts ?? []
    const last = artifacts[artifacts.length - 1]
    const fromPart = last?.parts.find((p) => p.data !== undefined && p.mediaType === TALLY_MEDIA_TYPE)
    const fromMeta: Json | undefined = last?.metadata?.[TALLY_KEY]
    const tally = fromPart?.data ?? fromMeta
    if (tally === undefined) return yield* Effect.fail(a2aError("missing_tally", "task.artifacts", "the last artifact carries no Writ tally"))
    if (!isJsonObject(tally)) return yield* Effect.fail(a2aError("malformed", "task.artifacts", "the tally is an object"))
    const before = artifacts.length >= 2 ? artifacts[artifacts.length - 2] : undefined
    const body = before?.parts.find((p) => p.data !== undefined && (p.mediaType === undefined || p.mediaType === RESULT_MEDIA_TYPE))
    if (body !== undefined && !isJsonObject(body.data)) return yield* Effect.fail(a2aError("malformed", "task.artifacts", "the result body is an object"))
    return { tally, res: body !== undefined && isJsonObject(body.data) ? Option.some(body.data) : Option.none() }
  })

/** What a verified task authenticates. */
export interface VerifiedTask {
  readonly tally: CheckedTally
  readonly res: Option.Option<JsonObject>
  readonly state: Task["status"]["state"]
}

/**
 * Accepts a task answering `call` only when: it has a tally (`missing_tally`); the tally is
 * `valid` under section 6.2 with the result body (its reason otherwise); the result body is there
 * exactly when `out` is not null, and the status names the tally and has the state `st` stands
 * for (`result_mismatch`).
 */
export const verifyTask = Effect.fn("writ.a2a.verifyTask")(function*(call: JsonObject, task: Task) {
  const { tally, res } = yield* tallyFrom(task)
  const k = yield* Effect.mapError(verifyCall(call), (e) => a2aError(e.reason, `call${e.path === undefined ? "" : `.${e.path}`}`, e.message))
  const verdict = yield* verifyTallyTree(tally, { callId: k.call.id, op: k.call.value.op, chain: k.chain }, Option.isSome(res) ? { value: res.value } : undefined)
  if (verdict.verdict !== "valid") return yield* Effect.fail(a2aError(verdict.error.reason, `tally${verdict.error.path === undefined ? "" : `.${verdict.error.path}`}`, verdict.error.message))
  const t = verdict.tally.value
  if ((t.out === null) !== Option.isNone(res)) {
    return yield* Effect.fail(a2aError("result_mismatch", "task.artifacts", t.out === null ? "a result body under a tally with no out" : "no result body under a tally whose out commits to one"))
  }
  if (task.status.state !== stateOf(t.st)) {
    return yield* Effect.fail(a2aError("result_mismatch", "task.status.state", `state ${task.status.state} but the tally says ${t.st}`))
  }
  if (task.status.message?.metadata?.[TALLY_KEY] !== tallyIdentity(tally)) {
    return yield* Effect.fail(a2aError("result_mismatch", `task.status.message.metadata.${TALLY_KEY}`, "the status does not name this tally"))
  }
  const out: VerifiedTask = { tally: verdict.tally, res, state: task.status.state }
  return out
})
