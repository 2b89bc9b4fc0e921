// What the executor answers (section 10 bodies; section 14.1 `expect`): to a call an unsigned
// error (section 7 steps 1 and 2) or a tally with its body; to a revoke (9.1, 9.4) an error, a
// 503 code for a revoke it could not persist (section 9), or the tallies, the ack and its body.
import { Option } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import type { AckWithBody } from "./services.js"

/** The answer to a call (section 10): an unsigned error (steps 1 and 2) or a tally and its body. */
export type CallAnswer =
  | { readonly _tag: "error"; readonly reason: string }
  | { readonly _tag: "tally"; readonly tally: JsonObject; readonly res: Option.Option<Json> }

/** The answer to a revoke (sections 9.1, 9.4, 10). */
export type RevokeAnswer =
  /** An invalid revoke: not recorded, changes nothing (section 9.1). */
  | { readonly _tag: "invalid"; readonly reason: string }
  /** A valid revoke the executor could not persist: honored while it runs, answered as an error (section 9). */
  | { readonly _tag: "unsaved"; readonly code: string }
  /** A valid revoke over its sender's allowance (section 12): not recorded, retried later. */
  | { readonly _tag: "limited"; readonly code: string; readonly retryAfter: number }
  | {
    readonly _tag: "recorded"
    readonly tallies: ReadonlyArray<JsonObject>
    readonly ack: JsonObject
    readonly res: JsonObject
    readonly fwd: ReadonlyArray<AckWithBody>
  }

/** The JSON an answer travels as (section 10 bodies; section 14.1 `expect`). */
export const callAnswerJson = (a: CallAnswer): JsonObject =>
  a._tag === "error"
    ? { error: a.reason }
    : Option.isSome(a.res)
    ? { tally: a.tally, res: a.res.value }
    : { tally: a.tally }

export const revokeAnswerJson = (a: RevokeAnswer): JsonObject =>
  a._tag === "invalid"
    ? { error: a.reason }
    : a._tag === "unsaved" || a._tag === "limited"
    ? { error: a.code }
    : a.fwd.length > 0
    ? { tallies: a.tallies, ack: a.ack, res: a.res, fwd: a.fwd.map((f) => ({ ack: f.ack, res: f.res })) }
    : { tallies: a.tallies, ack: a.ack, res: a.res }
