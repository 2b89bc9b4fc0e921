// Strict reading (section 1.1) on every path. A repeated member or a lone
// surrogate inside an object embedded in an ack body, a chain or a tally is `noncanonical` for the
// object that holds it, on the ack-checking path (section 9.4 steps 2 to 5) and in the conformance
// runner, never a semantic reason found later. The bodies below are built so that a lenient reader
// (JSON.parse keeps the last repeated member and any lone surrogate) would see exactly the value
// that was signed: only the strict reader can tell.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { checkAck } from "../../src/writ/ack.js"
import { runVectorText } from "../../src/writ/conformance.js"
import { makeAck, makeRevoke } from "../../src/writ/issue.js"
import { verifyTally } from "../../src/writ/tally.js"
import { Received } from "../../src/writ/verify.js"
import { A, as, C, EXP, run, tallyFor, world } from "./fixtures.js"

const w = world()
const revoke = run(as(A)(makeRevoke({ chain: w.child.chain })))
const tally = tallyFor(w)
// The ack's body holds the tally, so a valid check accounts for it (section 9.4 step 7).
const ack = (open: ReadonlyArray<string>) =>
  run(as(C)(makeAck({ revoke: revoke.revoke.id, rcv: EXP - 500, body: { held: [{ call: w.call.call.id, tally: tally.id }], open } })))
const plain = ack([])
const surrogate = ack(["\ud800"])

/** The canonical text of `body` with the first member of its first `held` element written twice. */
const repeatedInHeld = (): string =>
  `{"held":[{"call":${JSON.stringify(w.call.call.id)},"call":${JSON.stringify(w.call.call.id)},"tally":${JSON.stringify(tally.id)}}],"open":[]}`
const loneSurrogate = (): string =>
  `{"held":[{"call":${JSON.stringify(w.call.call.id)},"tally":${JSON.stringify(tally.id)}}],"open":["\\ud800"]}`

const outcome = <A>(e: Effect.Effect<A, { reason: string; path?: string }>) =>
  Effect.match(e, { onFailure: (f) => `${f.reason} at ${f.path}`, onSuccess: (a) => `accepted ${String(a)}` })

const check = (over: { ack?: JsonObject; body: Received | { value: Json }; chain?: unknown; tally?: Received | JsonObject }) =>
  checkAck({
    revoke: revoke.revoke.json,
    ack: over.ack ?? plain.ack.json,
    body: over.body,
    chain: over.chain ?? w.child.chain,
    tally: over.tally ?? tally.json
  })

describe("the ack-checking path reads every embedded object strictly (section 9.4)", () => {
  it.effect("a well-formed body, as received, is accounted for", () =>
    Effect.gen(function* () {
      expect(yield* outcome(check({ body: new Received(JSON.stringify(plain.body)) }))).toBe("accepted accounted")
    }))

  it.effect("a repeated member inside the ack body: noncanonical at res, not a later semantic reason", () =>
    Effect.gen(function* () {
      expect(JSON.parse(repeatedInHeld())).toEqual(plain.body) // what a lenient reader would accept
      expect(yield* outcome(check({ body: new Received(repeatedInHeld()) }))).toBe("noncanonical at res")
    }))

  it.effect("a lone surrogate inside the ack body: noncanonical at res", () =>
    Effect.gen(function* () {
      expect(JSON.parse(loneSurrogate())).toEqual(surrogate.body)
      expect(yield* outcome(check({ ack: surrogate.ack.json, body: new Received(loneSurrogate()) }))).toBe("noncanonical at res")
    }))

  it.effect("a repeated member inside a chain's writ or inside the tally: noncanonical at that object", () =>
    Effect.gen(function* () {
      const body = { value: plain.body as unknown as Json }
      const writText = JSON.stringify(w.child.chain[0]).replace(/^\{/, `{"exp":${(w.child.chain[0] as JsonObject).exp},`)
      const chain = [new Received(writText), w.child.chain[1]]
      expect(yield* outcome(check({ body, chain }))).toBe("noncanonical at chain[0]")
      const tallyText = JSON.stringify(tally.json).replace(/^\{/, `{"op":${JSON.stringify(tally.json.op)},`)
      expect(yield* outcome(check({ body, tally: new Received(tallyText) }))).toBe("noncanonical at tally")
    }))

  it.effect("a tally's result body with a repeated member: noncanonical at res (section 6.2 step 6)", () =>
    Effect.gen(function* () {
      const ctx = { callId: w.call.call.id, op: "travel/charge", chain: w.call.chain }
      expect(yield* outcome(Effect.as(verifyTally(tally.json, ctx, new Received('{"charge":"ch_1"}')), "valid"))).toBe("accepted valid")
      expect(yield* outcome(verifyTally(tally.json, ctx, new Received('{"charge":"ch_1","charge":"ch_1"}')))).toBe("noncanonical at res")
    }))
})

describe("the conformance runner reads an embedded body strictly (section 14)", () => {
  const vector = (res: string) =>
    `{"name":"strict body","op":"check_ack","expect":"reject","reason":"noncanonical","input":{` +
    `"revoke":${JSON.stringify(revoke.revoke.json)},"ack":${JSON.stringify(plain.ack.json)},"res":${res},` +
    `"chain":${JSON.stringify(w.child.chain)},"tally":${JSON.stringify(tally.json)}}}`

  it.effect("refuses a check_ack vector whose body repeats a member, blaming the body", () =>
    Effect.gen(function* () {
      const r = yield* runVectorText("strict.json", vector(repeatedInHeld()))
      expect([r.actual, r.actualReason, r.detail?.split(" ")[0]]).toEqual(["reject", "noncanonical", "res"])
      expect(r.pass).toBe(true)
      // The same vector with a well-formed body is accepted (so the refusal is the body's).
      const ok = yield* runVectorText("ok.json", vector(JSON.stringify(plain.body)))
      expect(ok.actual).toBe("accept")
    }))
})
