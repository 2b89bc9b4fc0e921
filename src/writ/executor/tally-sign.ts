// Building and signing what the executor says: tallies (section 6) and acks (section 9.4). The
// signing input and identity are the verifier's (src/writ/sign.ts); the executor only fills in the
// members that section 7 fixes and signs with its own key (the `Signer` service).
import { Effect, Option } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import type { Json, JsonObject } from "../../kernel/json.js"
import { Signer } from "../../kernel/services.js"
import { hashOf, identity, type ObjectType, signingInput } from "../sign.js"

/** Signs `unsigned` as an object of type `typ` (section 1.4) and returns it with `sig`. */
export const signObject = (typ: ObjectType, unsigned: JsonObject): Effect.Effect<JsonObject, never, Signer> =>
  Effect.gen(function*() {
    const signer = yield* Signer
    const sig = yield* signer.sign(signingInput(typ, 1, unsigned))
    return { ...unsigned, sig: encodeBase64url(sig) }
  })

export interface TallyFields {
  readonly call: string
  readonly writ: string
  readonly op: string
  readonly acc: number
  readonly st: "ok" | "failed" | "canceled" | "pending"
  readonly code: string | null
  readonly res: Option.Option<Json>
  readonly used: Readonly<Record<string, number>>
  readonly rev: number | null
  readonly sub: ReadonlyArray<JsonObject>
  readonly wrt: ReadonlyArray<JsonObject>
}

/** A tally with every member section 6 requires; `out` commits to the result body when there is one. */
export const signTally = (f: TallyFields): Effect.Effect<JsonObject, never, Signer> =>
  signObject("tally", {
    v: 1,
    typ: "tally",
    call: f.call,
    writ: f.writ,
    op: f.op,
    acc: f.acc,
    st: f.st,
    err: f.st === "ok" ? null : { code: f.code ?? "" },
    out: Option.isSome(f.res) ? hashOf(f.res.value) : null,
    used: f.used,
    rev: f.rev === null ? null : { until: f.rev },
    sub: f.sub,
    wrt: f.wrt
  })

/** A refusal at section 7 steps 3 to 10: `failed`, the reason in `err.code`, `acc` the receipt time. */
export const signRefusal = (call: string, writ: string, op: string, now: number, code: string) =>
  signTally({ call, writ, op, acc: now, st: "failed", code, res: Option.none(), used: {}, rev: null, sub: [], wrt: [] })

/** The pending tally of section 6: `err.code` `pending`, empty `used`, `sub`, `wrt`, null `rev`, `out`. */
export const signPending = (call: string, writ: string, op: string, acc: number) =>
  signTally({ call, writ, op, acc, st: "pending", code: "pending", res: Option.none(), used: {}, rev: null, sub: [], wrt: [] })

/** The ack of section 9.4 for the revoke `revoke`, recorded at `rcv`, with its body. */
export const signAck = (revoke: string, iss: string, rcv: number, body: JsonObject) =>
  signObject("ack", { v: 1, typ: "ack", revoke, iss, rcv, out: hashOf(body) })

export { hashOf, identity }
