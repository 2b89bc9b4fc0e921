// The tallies (section 6) and acks (section 9.4) the executor signs: the members section 7 fixes,
// written by the writ module's one builder per object (`unsignedTally`, `unsignedAck`) and signed
// by its one signing function (`signObject`, src/writ/sign.ts) with the executor's `Signer`.
import { Effect, Option, Schema } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import type { Signer } from "../../kernel/services.js"
import { unsignedAck } from "../issue.js"
import { hashOf, identity, signObject } from "../sign.js"
import { Tally, type TallyStatus, unsignedTally } from "../tally.js"
import { Writ } from "../writ.js"

export interface TallyFields {
  readonly call: string
  readonly writ: string
  readonly op: string
  readonly acc: number
  readonly st: TallyStatus
  readonly code: string | null
  readonly res: Option.Option<Json>
  readonly used: Readonly<Record<string, number>>
  readonly rev: number | null
  readonly sub: ReadonlyArray<JsonObject>
  readonly wrt: ReadonlyArray<JsonObject>
}

// The sub-tallies and writs of a tally are ones this executor verified or issued (section 7.5), so
// they decode under their Schemas; a failure is a defect of the executor, not of its input.
const decodeSub = Schema.decodeUnknown(Schema.Array(Tally))
const decodeWrt = Schema.decodeUnknown(Schema.Array(Writ))

/** The tally of an outcome (section 7 steps 10 to 12): every member section 6 requires; `out`
 * commits to the result body when there is one. */
export const signOutcome = (f: TallyFields): Effect.Effect<JsonObject, never, Signer> =>
  Effect.gen(function*() {
    const sub = f.sub.length === 0 ? [] : yield* Effect.orDie(decodeSub(f.sub))
    const wrt = f.wrt.length === 0 ? [] : yield* Effect.orDie(decodeWrt(f.wrt))
    return yield* signObject(unsignedTally({
      call: f.call,
      writ: f.writ,
      op: f.op,
      acc: f.acc,
      st: f.st,
      err: f.st === "ok" ? null : { code: f.code ?? "" },
      ...(Option.isSome(f.res) ? { body: f.res.value } : {}),
      used: f.used,
      rev: f.rev === null ? null : { until: f.rev },
      sub,
      wrt
    }))
  })

/** A refusal at section 7 steps 3 to 10: `failed`, the reason in `err.code`, `acc` the receipt time. */
export const signRefusal = (call: string, writ: string, op: string, now: number, code: string) =>
  signOutcome({ call, writ, op, acc: now, st: "failed", code, res: Option.none(), used: {}, rev: null, sub: [], wrt: [] })

/** The pending tally of section 6: `err.code` `pending`, empty `used`, `sub`, `wrt`, null `rev`, `out`. */
export const signPending = (call: string, writ: string, op: string, acc: number) =>
  signOutcome({ call, writ, op, acc, st: "pending", code: "pending", res: Option.none(), used: {}, rev: null, sub: [], wrt: [] })

/** The ack of section 9.4 for the revoke `revoke`, recorded at `rcv`, with its body. */
export const signAck = (revoke: string, iss: string, rcv: number, body: JsonObject): Effect.Effect<JsonObject, never, Signer> =>
  signObject(unsignedAck({ revoke, iss, rcv, body }))

export { hashOf, identity }
