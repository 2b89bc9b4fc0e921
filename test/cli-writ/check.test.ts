// In-process tests of what the CLI commands and the demo share: the bound flags (section 3 values
// from `--max N=V` and friends), expiry from `--ttl` on Effect's Clock, and the checks `writ send`,
// `writ verify` and `writ inspect` print: a call's answer (unsigned error, signed refusal, tally
// tree), a revoke's answer (acks, section 9.4 steps 2 to 4), and the tree drawn hop by hop.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { publicKeyFromSeed } from "../../src/kernel/ed25519.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { delegate, holdChain, issueRoot, makeAck, makeCall, makeRevoke, signTally } from "../../src/writ/issue.js"
import { identity, withoutSig } from "../../src/writ/sign.js"
import { type BoundFlags, boundsFromFlags, expiryFromFlags, ROOT_MAX_TTL, seconds } from "../../src/cli/writ-bounds.js"
import { checkCallAnswer, checkRevokeAnswer, drawTreeChecked, verifyAny } from "../../src/cli/writ-check.js"
import { signAnything } from "../../src/cli/demo/forge.js"

const seed = (n: number) => new Uint8Array(32).fill(n)
const A = seed(1)
const B = seed(2)
const C = seed(3)
const did = (s: Uint8Array) => didKeyFromPublicKey(publicKeyFromSeed(s))
const as = (s: Uint8Array) => <X, E>(e: Effect.Effect<X, E, Signer | RandomBytes>) =>
  Effect.runSync(Effect.provide(e, Layer.merge(Signer.fromSeed(s), RandomBytes.seeded(s))))
const reasonOf = <X>(e: Effect.Effect<X, { reason: string }>) =>
  Effect.match(e, { onFailure: (x) => x.reason, onSuccess: () => "ok" })
const EXP = 2_000_000_000

const flags = (f: Partial<BoundFlags>): BoundFlags => ({
  act: Option.none(), max: [], count: [], total: [], set: [], window: [], prefix: [], holders: Option.none(),
  depth: Option.none(), bound: [], exp: Option.none(), ttl: Option.none(), ...f
})

describe("bound flags (section 3)", () => {
  it.effect("builds every bound type from its flag", () =>
    Effect.gen(function*() {
      const b = (yield* boundsFromFlags(flags({
        act: Option.some("travel"), max: ["amount=60000"], count: ["uses=1"], total: ["spend=9"], set: ["currency=USD,7"],
        window: ["date=1,2"], prefix: ["path=/srv/"], holders: Option.some(did(C)), depth: Option.some(2),
        bound: ['fare={"t":"set","v":["refundable"]}']
      })))
      expect(b).toEqual({
        act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 }, uses: { t: "count", v: 1 }, spend: { t: "total", v: 9 },
        currency: { t: "set", v: ["USD", 7] }, date: { t: "window", v: [1, 2] }, path: { t: "prefix", v: "/srv/" },
        hld: { t: "set", v: [did(C)] }, depth: { t: "max", v: 2 }, fare: { t: "set", v: ["refundable"] }
      })
      expect((yield* boundsFromFlags(flags({ holders: Option.some("") })))).toEqual({ hld: { t: "set", v: [] } })
    }))

  it.effect("refuses malformed flags with a reason", () =>
    Effect.gen(function*() {
      expect(yield* reasonOf(boundsFromFlags(flags({ max: ["amount"] })))).toBe("mandate/usage")
      expect(yield* reasonOf(boundsFromFlags(flags({ max: ["amount=1.5"] })))).toBe("mandate/usage")
      expect(yield* reasonOf(boundsFromFlags(flags({ window: ["date=1,2,3"] })))).toBe("mandate/usage")
      expect(yield* reasonOf(boundsFromFlags(flags({ bound: ['x={"t":"max","t":"max"}'] })))).toBe("noncanonical")
    }))

  it.effect("--ttl counts from Effect's Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_500)
      expect(yield* expiryFromFlags(flags({ ttl: Option.some("60") }))).toBe(1_700_000_060)
      expect(yield* expiryFromFlags(flags({ exp: Option.some("1700000001") }))).toBe(1_700_000_001)
      expect(yield* expiryFromFlags(flags({}))).toBeUndefined()
      expect(yield* reasonOf(expiryFromFlags(flags({ exp: Option.some("1800000000"), ttl: Option.some("1") })))).toBe("mandate/usage")
    }))

  it.effect("nonsense TTLs are refused (negative, zero, fractions, exponents, hex, spaces, overflow)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      for (const ttl of ["-5", "0", "1.5", "1e3", "0x10", " 7", "", "99999999999999999999", "9007199254740991"]) {
        const e = yield* Effect.flip(expiryFromFlags(flags({ ttl: Option.some(ttl) })))
        expect([ttl, e.reason, e.path]).toEqual([ttl, "mandate/usage", "--ttl"])
      }
      // An absolute expiry at or before now: the writ would be born expired (section 2).
      for (const exp of ["1700000000", "1000", "-1"]) {
        expect([exp, yield* reasonOf(expiryFromFlags(flags({ exp: Option.some(exp) })))]).toEqual([exp, "mandate/usage"])
      }
    }))

  it.effect("a root expiring more than 24 hours ahead is refused unless --max-ttl allows it (section 12)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      expect(ROOT_MAX_TTL).toBe(86_400)
      expect(yield* expiryFromFlags(flags({ ttl: Option.some("86400") }), ROOT_MAX_TTL)).toBe(1_700_086_400)
      const far = yield* Effect.flip(expiryFromFlags(flags({ ttl: Option.some("86401") }), ROOT_MAX_TTL))
      expect(far.reason).toBe("mandate/usage")
      expect(far.message).toContain("--max-ttl")
      expect(yield* reasonOf(expiryFromFlags(flags({ exp: Option.some("1800000000") }), ROOT_MAX_TTL))).toBe("mandate/usage")
      // Allowed by a larger --max-ttl, and a child (no root limit) is not held to it.
      expect(yield* expiryFromFlags(flags({ ttl: Option.some("604800") }), 604_800)).toBe(1_700_604_800)
      expect(yield* expiryFromFlags(flags({ exp: Option.some("1800000000") }))).toBe(1_800_000_000)
      expect(yield* reasonOf(seconds("max-ttl", "-1"))).toBe("mandate/usage")
    }))
})

// A -> B (writ_1), B -> C (writ_2); B's booking tally embeds C's charge tally.
const w1 = as(A)(issueRoot({ hld: did(B), bnd: { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 100 } }, exp: EXP }))
const held = as(B)(holdChain(w1.chain))
const w2 = as(B)(delegate(held, { hld: did(C), bnd: { act: { t: "prefix", v: "travel/charge" } } }))
const callB = as(A)(makeCall({ chain: w1.chain, op: "travel/book", args: { amount: 50 } }))
const callC = as(B)(makeCall({ chain: w2.chain, op: "travel/charge", args: { amount: 50 } }))
const tallyC = as(C)(signTally({ call: callC.call.id, writ: w2.id, op: "travel/charge", acc: 10, st: "ok", body: { ch: 1 }, used: { amount: 50 } })).json
const tallyB = as(B)(signTally({
  call: callB.call.id, writ: w1.id, op: "travel/book", acc: 10, st: "ok", body: { bk: 1 }, used: { amount: 50 },
  sub: [tallyC], wrt: [w2.writ]
})).json

describe("the answer to a call (section 10)", () => {
  it.effect("a tally tree is checked by section 6.2 against the call sent", () =>
    Effect.gen(function*() {
      const v = (yield* checkCallAnswer(callB.call.json, { tally: tallyB, res: { bk: 1 } }))
      expect(v).toMatchObject({ _tag: "tally", st: "ok", verdict: "valid" })
      const wrongBody = (yield* checkCallAnswer(callB.call.json, { tally: tallyB, res: { bk: 2 } }))
      expect(wrongBody).toMatchObject({ verdict: "signed_unauthorized" })
      if (wrongBody._tag === "tally") expect(wrongBody.error?.reason).toBe("tally_mismatch")
      const otherCall = (yield* checkCallAnswer(callC.call.json, { tally: tallyB }))
      expect(otherCall).toMatchObject({ verdict: "unverifiable" })
    }))

  it.effect("an unsigned error is reported as one; a malformed answer as malformed", () =>
    Effect.gen(function*() {
      expect((yield* checkCallAnswer(callB.call.json, { error: "bad_signature" }))).toEqual({ _tag: "error", reason: "bad_signature" })
      expect((yield* checkCallAnswer(callB.call.json, [1, 2]))._tag).toBe("malformed")
      expect((yield* checkCallAnswer(callB.call.json, { neither: true }))._tag).toBe("malformed")
    }))

  it.effect("a signed refusal is evidence: signed by the receiver and naming this call, even when 6.2 step 5 cannot hold", () =>
    Effect.gen(function*() {
      // A refusal of an expired call has acc at or after exp: section 6.2 step 5 would fail it.
      const refusal = as(B)(signTally({ call: callB.call.id, writ: w1.id, op: "travel/book", acc: EXP + 5, st: "failed", err: { code: "expired" } })).json
      expect((yield* checkCallAnswer(callB.call.json, { tally: refusal }))).toMatchObject({ verdict: "valid", st: "failed", code: "expired" })
      // Signed by someone else than the receiver: unverifiable.
      const forged = as(C)(signTally({ call: callB.call.id, writ: w1.id, op: "travel/book", acc: 5, st: "failed", err: { code: "out_of_bounds" } })).json
      const f = (yield* checkCallAnswer(callB.call.json, { tally: forged }))
      expect(f).toMatchObject({ verdict: "unverifiable" })
      if (f._tag === "tally") expect(f.error?.reason).toBe("bad_signature")
      // A wrong_executor refusal is signed by the receiver, named explicitly.
      const wrong = as(C)(signTally({ call: callB.call.id, writ: w1.id, op: "travel/book", acc: 5, st: "failed", err: { code: "wrong_executor" } })).json
      expect((yield* checkCallAnswer(callB.call.json, { tally: wrong }, did(C)))).toMatchObject({ verdict: "valid", code: "wrong_executor" })
      // A refusal naming another call.
      const other = as(B)(signTally({ call: callC.call.id, writ: w1.id, op: "travel/book", acc: 5, st: "failed", err: { code: "revoked" } })).json
      const o = (yield* checkCallAnswer(callB.call.json, { tally: other }))
      if (o._tag === "tally") expect(o.error?.reason).toBe("tally_mismatch")
      else expect.fail("expected a tally verdict")
    }))
})

describe("the answer to a revoke (section 9.4 steps 2 to 4)", () => {
  const rv = as(A)(makeRevoke({ chain: w1.chain }))
  const body = { held: [], open: [callB.call.id] }
  const ownAck = as(B)(makeAck({ revoke: rv.revoke.id, rcv: 20, body })).ack.json
  const cAck = as(C)(makeAck({ revoke: rv.revoke.id, rcv: 21, body: { held: [], open: [] } })).ack.json
  const pending = as(B)(signTally({ call: callB.call.id, writ: w1.id, op: "travel/book", acc: 10, st: "pending", err: { code: "pending" } })).json

  it.effect("checks the executor's ack, the relayed acks and the open tallies", () =>
    Effect.gen(function*() {
      const v = (yield* checkRevokeAnswer(rv.revoke.json, { tallies: [pending], ack: ownAck, res: body, fwd: [{ ack: cAck, res: { held: [], open: [] } }] }))
      expect(v.own).toMatchObject({ ok: true, iss: did(B) })
      expect(v.fwd.map((f) => [f.ok, f.iss])).toEqual([[true, did(C)]])
      expect(v.tallies.map((t) => t.ok)).toEqual([true])
    }))

  it.effect("a body that does not hash to out, an ack of another revoke, a tally by another key", () =>
    Effect.gen(function*() {
      const v = (yield* checkRevokeAnswer(rv.revoke.json, { tallies: [tallyC], ack: ownAck, res: { held: [], open: [] }, fwd: [{ ack: cAck, res: body }] }))
      expect(v.own?.error?.reason).toBe("ack_mismatch")
      expect(v.fwd[0].error?.reason).toBe("ack_mismatch")
      expect(v.tallies[0].error?.reason).toBe("bad_signature")
      const rv2 = as(A)(makeRevoke({ writ: "*" }))
      expect((yield* checkRevokeAnswer(rv2.revoke.json, { tallies: [], ack: ownAck, res: body })).own?.error?.reason).toBe("ack_mismatch")
      expect((yield* checkRevokeAnswer(rv.revoke.json, { error: "bad_signature" })).error).toBe("bad_signature")
    }))
})

describe("verify any object, and the tree drawn hop by hop", () => {
  it.effect("verifies each object type and names the reason of a failure", () =>
    Effect.gen(function*() {
      const verdict = (v: Json, opts = {}) => verifyAny(v, undefined, opts)
      expect(yield* verdict(w1.writ as unknown as Json)).toMatchObject({ kind: "writ", verdict: "valid" })
      expect(yield* verdict(w2.chain as unknown as Json)).toMatchObject({ kind: "chain", verdict: "valid" })
      expect((yield* verdict(w2.chain as unknown as Json, { now: EXP })).error?.reason).toBe("expired")
      expect(yield* verdict(callC.call.json)).toMatchObject({ kind: "call", verdict: "valid" })
      expect(yield* verdict(tallyB, { call: callB.call.json, res: { bk: 1 } })).toMatchObject({ kind: "tally", verdict: "valid" })
      expect((yield* verdict({ tally: tallyB, res: { bk: 9 } }, { call: callB.call.json })).verdict).toBe("signed_unauthorized")
      expect((yield* verdict({ ...(w1.writ as unknown as JsonObject), exp: 5 })).error?.reason).toBe("bad_signature")
      expect((yield* verdict({ typ: "receipt" })).error?.reason).toBe("wrong_type")
      expect((yield* verdict("text")).error?.reason).toBe("malformed")
    }))

  it.effect("marks the hop where the tree first fails: a receipt B forged for C and wrapped in its own signature", () =>
    Effect.gen(function*() {
      const forgedC = as(B)(signAnything("tally", { ...withoutSig(tallyC), used: { amount: 1 } }))
      const wrapped = as(B)(signAnything("tally", { ...withoutSig(tallyB), sub: [forgedC] }))
      const d = (yield* drawTreeChecked(wrapped, callB.call.json))
      expect(d.verdict).toBe("signed_unauthorized")
      expect(d.lines[0]).toContain("bad_signature at sub[0].sig")
      const top = d.lines.find((l) => l.startsWith("travel/book"))!
      const hop = d.lines.find((l) => l.includes("travel/charge"))!
      expect(top).toContain("[signature ok]")
      expect(top).not.toContain("fails here")
      expect(hop).toContain("used amount 1")
      expect(hop).toContain("fails here: sub[0].sig")
      const good = (yield* drawTreeChecked(tallyB, callB.call.json))
      expect(good.verdict).toBe("valid")
      expect(good.lines.filter((l) => l.includes("[signature ok]"))).toHaveLength(2)
      expect((yield* drawTreeChecked(tallyB)).verdict).toBe("unchecked")
      expect(identity(tallyB)).toBe(identity(JSON.parse(JSON.stringify(tallyB))))
    }))
})
