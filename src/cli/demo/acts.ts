// The demo's acts 1 to 5 and 8, one function each: discovery, issuing writ_1, the booking that B
// delegates to C, the offline tree check, the reversal, and recovering tallies. Acts 6 and 7 are in
// refusals.ts and revoke-act.ts, act 9 in audit-act.ts.
import { Effect, Either } from "effect"
import { fetchWellKnown } from "../../bind/writ-http/client.js"
import type { JsonObject } from "../../kernel/json.js"
import { unixSeconds } from "../../kernel/clock.js"
import * as Writ from "../../writ/index.js"
import { checkCallAnswer, drawTree } from "../writ-check.js"
import { cliError } from "../writ-io.js"
import { type Answer, obj, post, reasonOf, type Stage, str } from "./stage.js"

/** 1. A reads B's /.well-known/writ (Appendix B). */
export const discover = (s: Stage) =>
  Effect.gen(function*() {
    yield* s.t.step("1. Discovery: A reads B's well-known document (Appendix B)")
    const wk = yield* fetchWellKnown(new URL(s.bx.url).origin).pipe(Effect.mapError((e) => cliError("mandate/unreachable", e.message)))
    yield* s.t.save("well-known-B", wk)
    yield* s.t.expect("B's document names B's key", obj(wk).did === s.B)
  })

/** 2. A issues writ_1 to B (section 2). */
export const issueWrit1 = (s: Stage) =>
  Effect.gen(function*() {
    yield* s.t.step("2. A issues writ_1 to B (section 2)")
    const now0 = yield* unixSeconds
    const w1 = yield* s.asA(Writ.issueRoot({ hld: s.B, bnd: s.bookingBounds, exp: now0 + 3600 }))
    yield* s.t.log(`  writ_1 ${w1.id}: act travel, amount <= 60000 per call, uses 1, USD, refundable, dates 20261015..20261019`)
    yield* s.t.save("writ_1", w1.json)
    return w1
  })

export type Writ1 = Effect.Effect.Success<ReturnType<typeof issueWrit1>>

/** 3. A calls B `travel/book`; B delegates the charge to C (writ_2) and reports C's tally in sub. */
export const book = (s: Stage, w1: Writ1) =>
  Effect.gen(function*() {
    yield* s.t.step("3. A calls B travel/book; B delegates the charge to C")
    const call1 = yield* s.asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: s.bookArgs }))
    const a1 = yield* post(s, s.bx, "call-A-B-book", call1.call.json)
    const tallyB = obj(obj(a1.json).tally)
    const resB = obj(a1.json).res
    yield* s.t.expect("B answers with an ok tally", a1.status === 200 && tallyB.st === "ok", `st ${str(tallyB.st)} ${str(reasonOf(tallyB))}`)
    const wrt = Array.isArray(tallyB.wrt) ? (tallyB.wrt as ReadonlyArray<JsonObject>) : []
    const sub = Array.isArray(tallyB.sub) ? (tallyB.sub as ReadonlyArray<JsonObject>) : []
    const writ2 = wrt[0] ?? {}
    const tallyC = sub[0] ?? {}
    yield* s.t.expect("B's tally lists writ_2 in wrt (B -> C, a child of writ_1)", wrt.length === 1 && writ2.iss === s.B && writ2.hld === s.C && writ2.prv === w1.id)
    yield* s.t.expect("B's tally embeds C's tally in sub", sub.length === 1 && tallyC.writ === Writ.identity(writ2) && tallyC.st === "ok")
    yield* s.t.save("writ_2-from-B-wrt", writ2)
    yield* s.t.save("tally_C-from-B-sub", tallyC)
    const ctx1 = { callId: call1.call.id, op: "travel/book", chain: call1.chain }
    // The chain A may use to reach C directly: writ_1 and the writ_2 that B reported.
    const undoChain = [w1.json, writ2]
    return { call1, tallyB, resB, writ2, tallyC, ctx1, undoChain }
  })

export type Booking = Effect.Effect.Success<ReturnType<typeof book>>

/** 4. A checks the whole tally tree offline (section 6.2) with nothing but writ_1 and its call. */
export const checkTreeOffline = (s: Stage, b: Booking) =>
  Effect.gen(function*() {
    yield* s.t.step("4. A checks the whole tally tree offline (section 6.2)")
    const tree = yield* Writ.verifyTallyTree(b.tallyB, b.ctx1, b.resB === undefined ? undefined : { value: b.resB })
    for (const line of yield* drawTree(b.tallyB, b.call1.call.json, b.resB)) yield* s.t.log(`  ${line}`)
    yield* s.t.expect("the tree is valid with nothing but writ_1, A's call and the keys inside", tree.verdict === "valid", tree.verdict === "valid" ? "" : `${tree.verdict}: ${tree.error.reason} ${tree.error.message}`)
    const subSig = yield* Effect.either(Writ.verifyTallyObject(b.tallyC, s.C))
    yield* s.t.expect("C's tally is signed by C, the holder of writ_2", Either.isRight(subSig))
    yield* s.t.expect(
      "used counts the charge once at each level: 58900 at B and at C",
      obj(b.tallyB.used).amount === 58900 && obj(b.tallyC.used).amount === 58900
    )
  })

/** 5. A reverses C's charge directly with `sys/undo` (section 8.1); repeating it is safe. */
export const reverseCharge = (s: Stage, b: Booking) =>
  Effect.gen(function*() {
    yield* s.t.step("5. A reverses C's charge directly with sys/undo (section 8.1)")
    const undo = yield* s.asA(Writ.makeCall({ chain: b.undoChain, op: "sys/undo", args: { tally: b.tallyC } }))
    const u1 = yield* post(s, s.cx, "call-A-C-undo", undo.call.json)
    const uv = yield* checkCallAnswer(undo.call.json, u1.json)
    yield* s.t.expect("C reverses the charge: ok, and the undo tally verifies", uv._tag === "tally" && uv.st === "ok" && uv.verdict === "valid", uv._tag === "tally" ? `${uv.st} ${uv.verdict}` : uv._tag)
    const u2 = yield* post(s, s.cx, "call-A-C-undo-retry", undo.call.json)
    yield* s.t.expect("the same signed undo again: answered from the store, byte for byte", Buffer.from(u1.bytes).equals(Buffer.from(u2.bytes)))
    const undoAgain = yield* s.asA(Writ.makeCall({ chain: b.undoChain, op: "sys/undo", args: { tally: b.tallyC } }))
    const u3 = yield* post(s, s.cx, "call-A-C-undo-again", undoAgain.call.json)
    const t3 = obj(obj(u3.json).tally)
    yield* s.t.expect(
      "a new undo of the same charge performs nothing: ok with the first reversal's body",
      t3.st === "ok" && JSON.stringify(obj(u3.json).res) === JSON.stringify(obj(u1.json).res)
    )
  })

/** The identities of the tallies a `sys/tallies` answer lists. */
const listed = (a: Answer): ReadonlyArray<string> => {
  const list = obj(obj(a.json).res).tallies
  return Array.isArray(list) ? list.map((x) => Writ.identity(obj(x))) : []
}

/** 8. A recovers tallies through `sys/tallies` (section 8.2), from B and directly from C. */
export const recoverTallies = (s: Stage, w1: Writ1, b: Booking) =>
  Effect.gen(function*() {
    yield* s.t.step("8. A recovers tallies through sys/tallies (section 8.2)")
    const q1 = yield* s.asA(Writ.makeCall({ chain: w1.chain, op: "sys/tallies", args: { writ: w1.id } }))
    const s1 = yield* post(s, s.bx, "call-A-B-tallies", q1.call.json)
    const ids1 = listed(s1)
    const q1v = yield* checkCallAnswer(q1.call.json, s1.json)
    yield* s.t.expect("B returns a signed list under writ_1 that holds B's booking tally", q1v._tag === "tally" && q1v.verdict === "valid" && ids1.includes(Writ.identity(b.tallyB)), `${ids1.length} tallies`)
    const q2 = yield* s.asA(Writ.makeCall({ chain: b.undoChain, op: "sys/tallies", args: { writ: w1.id } }))
    const s2 = yield* post(s, s.cx, "call-A-C-tallies", q2.call.json)
    const ids2 = listed(s2)
    yield* s.t.expect("C, asked directly, returns C's charge tally without B's help", ids2.includes(Writ.identity(b.tallyC)), `${ids2.length} tallies`)
  })
