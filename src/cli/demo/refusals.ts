// The demo's act 6: seven things A (or a dishonest B) may not do, each refused with its reason: a
// signed refusal (section 7 steps 3 to 10, or a failed `sys/undo` check, section 8.1), or an
// unsigned error where section 7 steps 1 and 2 say so (shown separately). One function per case.
import { Effect, Either } from "effect"
import { unixSeconds } from "../../kernel/clock.js"
import * as Writ from "../../writ/index.js"
import { checkRevokeAnswer, drawTree } from "../writ-check.js"
import type { Booking, Writ1 } from "./acts.js"
import { freshId, signAnything } from "./forge.js"
import { expectSignedRefusal, obj, post, type Stage, str } from "./stage.js"

/** 6.1 B tries to give C more than B holds: the API refuses to sign, C refuses a self-signed one. */
const widenSlip = (s: Stage, w1: Writ1) =>
  Effect.gen(function*() {
    yield* s.t.log("  6.1 widen a slip: B tries to give C more than B holds (amount 65000 > 60000)")
    const heldB = yield* s.asB(Writ.holdChain(w1.chain))
    const widened = yield* Effect.either(s.asB(Writ.delegate(heldB, { hld: s.C, bnd: { amount: { t: "max", v: 65000 } } })))
    yield* s.t.expect(
      "the issuing API refuses to sign it: not_narrowed (nothing signed)",
      Either.isLeft(widened) && widened.left.reason === "not_narrowed"
    )
    const forgedWrit = yield* s.asB(Effect.gen(function*() {
      return yield* signAnything("writ", {
        v: 1, typ: "writ", iss: s.B, hld: s.C,
        bnd: { ...s.bookingBounds, act: { t: "prefix", v: "travel/charge" }, amount: { t: "max", v: 65000 } },
        prv: w1.id, exp: w1.writ.exp, nnc: yield* freshId
      })
    }))
    const widenCall = yield* s.asB(Effect.gen(function*() {
      return yield* signAnything("call", {
        v: 1, typ: "call", id: yield* freshId, chain: [w1.json, forgedWrit], from: s.B,
        op: "travel/charge", args: { ...s.bookArgs, amount: 64000 }
      })
    }))
    const r61 = yield* post(s, s.cx, "refuse-widen", widenCall)
    yield* expectSignedRefusal(s, "a dishonest B signs the wider writ itself and calls C; C", widenCall, r61, "not_narrowed", s.C)
  })

/** 6.2 A asks B to book 61000 under writ_1 (max 60000). */
const overcharge = (s: Stage, w1: Writ1) =>
  Effect.gen(function*() {
    yield* s.t.log("  6.2 overcharge: A asks B to book 61000 under writ_1 (max 60000)")
    const local = yield* Effect.either(s.asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: { ...s.bookArgs, amount: 61000 } })))
    yield* s.t.expect("A's own issuing API refuses to sign it: out_of_bounds", Either.isLeft(local) && local.left.reason === "out_of_bounds")
    const overCall = yield* s.asA(Effect.gen(function*() {
      return yield* signAnything("call", {
        v: 1, typ: "call", id: yield* freshId, chain: w1.chainJson, from: s.A, op: "travel/book", args: { ...s.bookArgs, amount: 61000 }
      })
    }))
    const r62 = yield* post(s, s.bx, "refuse-overcharge", overCall)
    yield* expectSignedRefusal(s, "signed anyway and sent; B", overCall, r62, "out_of_bounds", s.B)
  })

/** 6.3 A second charge under writ_2 and a second booking under writ_1 (uses 1 each). */
const chargeTwice = (s: Stage, w1: Writ1, b: Booking) =>
  Effect.gen(function*() {
    yield* s.t.log("  6.3 charge twice: B sends C a second charge under writ_2 (uses 1)")
    const twice = yield* s.asB(Writ.makeCall({ chain: b.undoChain, op: "travel/charge", args: s.bookArgs }))
    const r63 = yield* post(s, s.cx, "refuse-charge-twice", twice.call.json)
    yield* expectSignedRefusal(s, "C", twice.call.json, r63, "count_exhausted", s.C)
    const again = yield* s.asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: s.bookArgs }))
    const r63b = yield* post(s, s.bx, "refuse-book-twice", again.call.json)
    yield* expectSignedRefusal(s, "and A's second booking under writ_1 (uses 1); B", again.call.json, r63b, "count_exhausted", s.B)
  })

/** 6.4 B rewrites C's tally and re-signs its own around it: found offline, and C will not reverse it. */
const fakeReceipt = (s: Stage, b: Booking) =>
  Effect.gen(function*() {
    yield* s.t.log("  6.4 fake a receipt: B rewrites C's tally (used 1), signs it itself, and re-signs its own tally around it")
    const forgedTally = yield* s.asB(signAnything("tally", { ...Writ.withoutSig(b.tallyC), used: { amount: 1 } }))
    yield* s.t.save("forged-tally-C", forgedTally)
    // B re-signs its own tally around the doctored receipt, so B's signature holds and the
    // forgery is caught at C's hop: a signed admission by B (section 6.2, signed_unauthorized).
    const doctored = yield* s.asB(signAnything("tally", { ...Writ.withoutSig(b.tallyB), sub: [forgedTally] }))
    yield* s.t.save("forged-tally-B", doctored)
    const offline = yield* Writ.verifyTallyTree(doctored, b.ctx1, b.resB === undefined ? undefined : { value: b.resB })
    for (const line of yield* drawTree(doctored, b.call1.call.json, b.resB)) yield* s.t.log(`  ${line}`)
    yield* s.t.expect(
      "offline, A finds it: signed_unauthorized, bad_signature at C's hop (sub[0])",
      offline.verdict === "signed_unauthorized" && offline.error.reason === "bad_signature" && (offline.error.path ?? "").startsWith("sub[0]"),
      offline.verdict === "valid" ? "valid?" : `${offline.verdict}: ${offline.error.reason} at ${offline.error.path ?? ""}`
    )
    const fakeUndo = yield* s.asA(Writ.makeCall({ chain: b.undoChain, op: "sys/undo", args: { tally: forgedTally } }))
    const r64 = yield* post(s, s.cx, "refuse-fake-receipt", fakeUndo.call.json)
    yield* expectSignedRefusal(s, "A asks C to reverse the fake receipt; C (its own signature is missing)", fakeUndo.call.json, r64, "not_reversible", s.C)
  })

/** 6.5 A sends a booking under writ_1 (held by B) to C. */
const wrongExecutor = (s: Stage, w1: Writ1) =>
  Effect.gen(function*() {
    yield* s.t.log("  6.5 call the wrong executor: A sends a booking under writ_1 (held by B) to C")
    const wrongCall = yield* s.asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: s.bookArgs }))
    const r65 = yield* post(s, s.cx, "refuse-wrong-executor", wrongCall.call.json)
    yield* expectSignedRefusal(s, "C, signing as the party that received it", wrongCall.call.json, r65, "wrong_executor", s.C)
  })

/** 6.6 A call under writ_e, whose `exp` is already past (nothing sleeps). */
const expiredWrit = (s: Stage) =>
  Effect.gen(function*() {
    yield* s.t.log("  6.6 use an expired writ: writ_e expired ten seconds ago")
    const nowE = yield* unixSeconds
    const we = yield* s.asA(Writ.issueRoot({ hld: s.B, bnd: s.bookingBounds, exp: nowE - 10 }))
    yield* s.t.save("writ_e", we.json)
    const expCall = yield* s.asA(Writ.makeCall({ chain: we.chain, op: "travel/book", args: s.bookArgs }))
    const r66 = yield* post(s, s.bx, "refuse-expired", expCall.call.json)
    yield* expectSignedRefusal(s, "B", expCall.call.json, r66, "expired", s.B)
  })

/** 6.7 A revokes writ_r at B, then calls under it. */
const revokedWrit = (s: Stage) =>
  Effect.gen(function*() {
    yield* s.t.log("  6.7 use a revoked writ: A revokes writ_r at B, then calls under it")
    const nowR = yield* unixSeconds
    const wr = yield* s.asA(Writ.issueRoot({ hld: s.B, bnd: s.bookingBounds, exp: nowR + 600 }))
    yield* s.t.save("writ_r", wr.json)
    const rvk = yield* s.asA(Writ.makeRevoke({ chain: wr.chain }))
    const rr = yield* post(s, s.bx, "revoke-writ_r", rvk.revoke.json)
    const rrv = yield* checkRevokeAnswer(rvk.revoke.json, rr.json)
    yield* s.t.expect("B records the revoke and answers with its signed ack", rrv.error === undefined && rrv.own?.ok === true && rrv.own.iss === s.B)
    const revCall = yield* s.asA(Writ.makeCall({ chain: wr.chain, op: "travel/book", args: s.bookArgs }))
    const r67 = yield* post(s, s.bx, "refuse-revoked", revCall.call.json)
    yield* expectSignedRefusal(s, "B", revCall.call.json, r67, "revoked", s.B)
  })

/** Section 7 steps 1 and 2: a call altered after signing gets an unsigned error, not a tally. */
const tamperedCall = (s: Stage, b: Booking) =>
  Effect.gen(function*() {
    yield* s.t.log("  and where section 7 steps 1-2 apply, the refusal is an unsigned error:")
    const tampered = { ...b.call1.call.json, args: { ...s.bookArgs, amount: 100 } }
    const r68 = yield* post(s, s.bx, "refuse-tampered", tampered)
    yield* s.t.expect(
      "a call altered after signing: status 400, unsigned error bad_signature (section 7 step 2)",
      r68.status === 400 && obj(r68.json).error === "bad_signature" && obj(r68.json).tally === undefined,
      `status ${r68.status} ${str(r68.json).slice(0, 80)}`
    )
  })

/** 6. Seven refusals, in order, then the unsigned error. */
export const refusals = (s: Stage, w1: Writ1, b: Booking) =>
  Effect.gen(function*() {
    yield* s.t.step("6. Seven things that are not allowed")
    yield* widenSlip(s, w1)
    yield* overcharge(s, w1)
    yield* chargeTwice(s, w1, b)
    yield* fakeReceipt(s, b)
    yield* wrongExecutor(s, w1)
    yield* expiredWrit(s)
    yield* revokedWrit(s)
    yield* tamperedCall(s, b)
  })
