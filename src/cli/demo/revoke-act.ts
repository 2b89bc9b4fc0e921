// The demo's act 7: a revoke cancels work in flight at B, is forwarded to C, and both acks come
// back (section 9.1, `fwd`); the canceled tree verifies and B's ack accounts for it (section 9.4).
import { FileSystem } from "@effect/platform"
import { Duration, Effect, Either, Fiber } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import { unixSeconds } from "../../kernel/clock.js"
import * as Writ from "../../writ/index.js"
import { checkRevokeAnswer, drawTree } from "../writ-check.js"
import { obj, post, type Stage, str } from "./stage.js"

/** Waits (bounded: 20 s) for C's payment handler to signal that a charge is being held open. */
const chargeHeld = (s: Stage) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    for (let i = 0; i < 200; i++) {
      const files = yield* Effect.orElseSucceed(fs.readDirectory(`${s.out}/signals`), () => [] as Array<string>)
      if (files.some((f) => f.startsWith("held-"))) return true
      yield* Effect.sleep(Duration.millis(100))
    }
    return false
  })

export const revokeInFlight = (s: Stage) =>
  Effect.gen(function*() {
    yield* s.t.step("7. A revoke cancels work in flight at B, is forwarded to C, and the acks come back")
    const now = yield* unixSeconds
    const w3 = yield* s.asA(Writ.issueRoot({ hld: s.B, bnd: s.bookingBounds, exp: now + 600 }))
    yield* s.t.save("writ_3", w3.json)
    const slowCall = yield* s.asA(Writ.makeCall({ chain: w3.chain, op: "travel/book", args: { ...s.bookArgs, hold: true } }))
    yield* s.t.log(`  A calls B under writ_3 (call ${slowCall.call.id}); C's charge stays in flight`)
    const inflight = yield* Effect.fork(post(s, s.bx, "call-A-B-inflight", slowCall.call.json))
    yield* s.t.expect("C's charge under writ_4 (B -> C) is running", yield* chargeHeld(s))
    const rv3 = yield* s.asA(Writ.makeRevoke({ chain: w3.chain }))
    const ra = yield* post(s, s.bx, "revoke-writ_3", rv3.revoke.json)
    const rav = yield* checkRevokeAnswer(rv3.revoke.json, ra.json)
    const tallies3 = rav.tallies
    yield* s.t.expect(
      "B answers with the tally of the call it held open (pending or final)",
      tallies3.length === 1 && tallies3[0].ok && tallies3[0].tally.call === slowCall.call.id,
      tallies3.map((x) => `${str(x.tally.st)}`).join(",")
    )
    const ownBody = obj(rav.own?.res)
    yield* s.t.expect("B's ack verifies and its body lists the open call", rav.own?.ok === true && Array.isArray(ownBody.open) && ownBody.open.includes(slowCall.call.id))
    const fwdC = rav.fwd.find((f) => f.iss === s.C)
    yield* s.t.expect("B forwarded the revoke to C: C's ack comes back in fwd and verifies", rav.fwd.length === 1 && fwdC !== undefined && fwdC.ok)
    yield* s.t.expect(
      "C's ack lists B's charge as open work it was told to stop",
      fwdC !== undefined && Array.isArray(obj(fwdC.res).open) && (obj(fwdC.res).open as ReadonlyArray<Json>).length === 1
    )
    const slow = yield* Fiber.join(inflight)
    const slowTally = obj(obj(slow.json).tally)
    const slowSub = Array.isArray(slowTally.sub) ? (slowTally.sub as ReadonlyArray<JsonObject>) : []
    yield* s.t.expect("A's in-flight call ends canceled", slowTally.st === "canceled", `st ${str(slowTally.st)}`)
    yield* s.t.expect("C's canceled tally is in B's sub", slowSub.length === 1 && slowSub[0].st === "canceled")
    const slowTree = yield* Writ.verifyTallyTree(slowTally, { callId: slowCall.call.id, op: "travel/book", chain: slowCall.chain })
    for (const line of yield* drawTree(slowTally, slowCall.call.json)) yield* s.t.log(`  ${line}`)
    yield* s.t.expect("the canceled tree verifies (section 6.2)", slowTree.verdict === "valid")
    const acked = yield* Effect.either(Writ.checkAck({
      revoke: rv3.revoke.json, ack: obj(rav.own?.ack), body: { value: rav.own?.res ?? null }, chain: w3.chain, tally: slowTally
    }))
    yield* s.t.expect("B's final tally is accounted for by B's ack (section 9.4)", Either.isRight(acked), Either.isLeft(acked) ? acked.left.reason : acked.right)
  })
