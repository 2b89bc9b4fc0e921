// The wire Schemas and the section 6.1 checks describe the same objects: everything the checks
// accept decodes under the Schema, and encodes back to the same canonical bytes.
import { Effect, Either, Schema } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { Ack, AckBody } from "../../src/writ/ack.js"
import { Call } from "../../src/writ/call.js"
import { Revoke } from "../../src/writ/revoke.js"
import { Tally } from "../../src/writ/tally.js"
import { Writ } from "../../src/writ/writ.js"
import { canonicalText } from "../../src/writ/sign.js"
import { makeAck, makeRevoke } from "../../src/writ/issue.js"
import { A, C, EXP, as, run, tallyFor, world } from "./fixtures.js"

const roundTrip = <A, I>(s: Schema.Schema<A, I>, json: unknown) => {
  const d = Schema.decodeUnknownEither(s)(json)
  if (Either.isLeft(d)) throw new Error(String(d.left))
  const e = Schema.encodeSync(s)(d.right)
  expect(canonicalText(e as never)).toBe(canonicalText(json as never))
}

describe("wire Schemas", () => {
  const w = world()
  it.effect("decode and re-encode every issued object unchanged", () =>
    Effect.gen(function* () {
      roundTrip(Writ, w.root.writ)
      roundTrip(Writ, w.child.writ)
      roundTrip(Call, w.call.call.json)
      roundTrip(Tally, tallyFor(w).json)
      const rv = (yield* as(A)(makeRevoke({ chain: w.child.chain }))).revoke
      roundTrip(Revoke, rv.json)
      const a = (yield* as(C)(makeAck({ revoke: rv.id, rcv: EXP - 1, body: { held: [], open: [] } })))
      roundTrip(Ack, a.ack.json)
      roundTrip(AckBody, a.body)
    }))
  it("reject what the checks reject", () => {
    expect(Either.isLeft(Schema.decodeUnknownEither(Writ)({ ...w.root.writ, hld: "did:web:x" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(Writ)({ ...w.root.writ, bnd: { act: { t: "glob", v: 1 } } }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(Call)({ ...w.call.call.json, chain: [] }))).toBe(true)
  })
})
