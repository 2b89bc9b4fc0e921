// Section 6.2 (tally trees and their verdicts), section 9.1 (revokes) and section 9.4 (acks):
// one test per rejection path.
import { Effect, Either } from "effect"
import { describe, expect, it } from "@effect/vitest"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { Signer } from "../../src/kernel/services.js"
import { delegate, holdChain, issueRoot, makeAck, makeCall, makeRevoke, signTally, type TallyParams } from "../../src/writ/issue.js"
import { checkTally, type TallyContext, verifyTallyTree } from "../../src/writ/tally.js"
import { verifyRevoke } from "../../src/writ/revoke.js"
import { checkAck } from "../../src/writ/ack.js"
import { verifyChain } from "../../src/writ/chain.js"
import { identity } from "../../src/writ/sign.js"
import { A, B, C, EXP, X, as, keyOf, resign, run, seed, tallyFor, world } from "./fixtures.js"

const reason = (eff: Effect.Effect<unknown, { reason: string }>) => {
  const r = Effect.runSync(Effect.either(eff))
  return Either.isLeft(r) ? r.left.reason : "accept"
}
const w = world()
const rootChain = run(verifyChain(w.root.chain))
const rootCall = run(as(A)(makeCall({ chain: w.root.chain, op: "travel/book", args: { amount: 60000, spend: 60000, currency: "USD", date: 20261016 } })))
const ctx: TallyContext = { callId: rootCall.call.id, op: "travel/book", chain: rootChain }
const tC = tallyFor(w)

const signAs = (n: number, p: TallyParams) => run(Effect.provide(signTally(p), Signer.fromSeed(seed(n))))
const bTally = (over: Partial<TallyParams> = {}, signer = B) =>
  signAs(signer, {
    call: rootCall.call.id,
    writ: w.root.id,
    op: "travel/book",
    acc: EXP - 2000,
    st: "ok",
    body: { pnr: "P1" },
    used: { amount: 58900, spend: 58900 },
    rev: null,
    sub: [tC.json],
    wrt: [w.child.writ],
    ...over
  }).json

const bRaw = (patch: Record<string, unknown>) => resign("tally", { ...bTally(), ...patch } as JsonObject, B)
const pendingPatch = { st: "pending", err: { code: "pending" }, used: {}, rev: null, out: null, sub: [], wrt: [] }

const verdict = (t: Json, body?: Json) => {
  const r = Effect.runSync(verifyTallyTree(t, ctx, body === undefined ? undefined : { value: body }))
  return r.verdict === "valid" ? "valid" : `${r.verdict} ${r.error.reason}`
}

describe("section 6.2: tally trees", () => {
  it("accepts a tree with its body and without it", () => {
    expect(verdict(bTally(), { pnr: "P1" })).toBe("valid")
    expect(verdict(bTally())).toBe("valid")
  })
  it.each([
    ["signed by another key", () => bTally({}, X), "unverifiable bad_signature"],
    ["typ writ", () => resign("tally", { ...bTally(), typ: "writ" }, B), "unverifiable wrong_type"],
    ["sub missing", () => resign("tally", Object.fromEntries(Object.entries(bTally()).filter(([k]) => k !== "sub")), B), "unverifiable malformed"],
    ["sub holds a non-object", () => resign("tally", { ...bTally(), sub: [1] }, B), "unverifiable malformed"],
    ["ok with err", () => bRaw({ err: { code: "x" } }), "unverifiable malformed"],
    ["failed without err", () => bRaw({ st: "failed" }), "unverifiable malformed"],
    ["err.code not a string", () => bRaw({ st: "failed", err: { code: 5 } }), "unverifiable malformed"],
    ["err.ref not a hash", () => bRaw({ st: "failed", err: { code: "x", ref: "AAAA" } }), "unverifiable malformed"],
    ["st unknown", () => bRaw({ st: "done" }), "unverifiable malformed"],
    ["used negative", () => bRaw({ used: { amount: -1 } }), "unverifiable malformed"],
    ["rev without until", () => bRaw({ rev: { until: "x" } }), "unverifiable malformed"],
    ["pending with another err code", () => bRaw({ ...pendingPatch, err: { code: "x" } }), "unverifiable malformed"],
    ["pending with wrt", () => bRaw({ ...pendingPatch, wrt: [w.child.writ] }), "unverifiable malformed"],
    ["pending with used", () => bRaw({ ...pendingPatch, used: { amount: 0 } }), "unverifiable malformed"],
    ["for another call", () => bTally({ call: w.call.call.id }), "signed_unauthorized tally_mismatch"],
    ["for another writ", () => bTally({ writ: w.child.id }), "signed_unauthorized tally_mismatch"],
    ["for another op", () => bTally({ op: "travel/charge" }), "signed_unauthorized tally_mismatch"],
    ["acc at exp", () => bTally({ acc: EXP }), "signed_unauthorized expired"],
    ["used over the writ's max", () => bTally({ used: { amount: 60001, spend: 60001 } }), "signed_unauthorized out_of_bounds"],
    ["used over the writ's total", () => bTally({ used: { amount: 58900, spend: 100001 } }), "signed_unauthorized out_of_bounds"],
    ["own used below its sub-tally", () => bTally({ used: { amount: 58899, spend: 58900 } }), "signed_unauthorized out_of_bounds"],
    ["sub without wrt", () => bTally({ wrt: [] }), "signed_unauthorized sub_unmatched"],
    // Issuing refuses to sign a sub that is not a tally (see "issuing refuses" below), so this one is re-signed.
    ["sub with no writ member", () => bRaw({ sub: [{ x: 1 }] }), "signed_unauthorized sub_unmatched"],
    ["a wrt writ that is not a child of W", () => bTally({ wrt: [w.root.writ] }), "signed_unauthorized chain_broken"],
    ["a tampered wrt writ", () => bTally({ wrt: [{ ...w.child.writ, exp: 1 }] }), "signed_unauthorized bad_signature"],
    ["a sub-tally signed by another key", () => bTally({ sub: [resign("tally", tC.json, X)] }), "signed_unauthorized bad_signature"],
    ["a sub-tally over its writ's max", () => bTally({ sub: [signAs(C, { ...subParams(), used: { amount: 58901 } }).json], used: { amount: 58901 } }), "signed_unauthorized out_of_bounds"],
    ["a sub-tally accepted at its writ's exp", () => bTally({ sub: [signAs(C, { ...subParams(), acc: EXP - 100 }).json] }), "signed_unauthorized expired"]
  ])("%s", (_n, make, expected) => {
    expect(verdict(make() as Json)).toBe(expected)
  })
  it("a body that does not hash to out, or a null out with a body", () => {
    expect(verdict(bTally(), { pnr: "P2" })).toBe("signed_unauthorized tally_mismatch")
    expect(verdict(bTally({ body: undefined }), { pnr: "P1" })).toBe("signed_unauthorized tally_mismatch")
  })
  it.effect("a standing operation's tally is not bound to exp", () =>
    Effect.gen(function* () {
      const undo = (yield* as(A)(makeCall({ chain: w.root.chain, op: "sys/undo", args: {} })))
      const t = signAs(B, { call: undo.call.id, writ: w.root.id, op: "sys/undo", acc: EXP + 50, st: "ok", used: {}, rev: null })
      const r = Effect.runSync(verifyTallyTree(t.json, { callId: undo.call.id, op: "sys/undo", chain: rootChain }))
      expect(r.verdict).toBe("valid")
    }))
  it.effect("depth applies to wrt, and the issuing API refuses such a child", () =>
    Effect.gen(function* () {
      const rootD = (yield* as(A)(issueRoot({ hld: keyOf(B), bnd: { act: { t: "prefix", v: "travel" }, depth: { t: "max", v: 0 } }, exp: EXP })))
      const held = (yield* as(B)(holdChain(rootD.chain)))
      expect(reason(as(B)(delegate(held, { hld: keyOf(C) })))).toBe("not_narrowed")
      // A child signed anyway (by B's key directly) and listed in wrt.
      const kid = resign("writ", { ...(w.child.writ as unknown as JsonObject), prv: rootD.id, bnd: { act: { t: "prefix", v: "travel" }, depth: { t: "max", v: 0 } } }, B)
      const call = (yield* as(A)(makeCall({ chain: rootD.chain, op: "travel/x", args: {} })))
      const t = signAs(B, { call: call.call.id, writ: rootD.id, op: "travel/x", acc: EXP - 5, st: "ok", used: {}, rev: null, wrt: [kid] })
      const r = Effect.runSync(verifyTallyTree(t.json, { callId: call.call.id, op: "travel/x", chain: (yield* verifyChain(rootD.chain)) }))
      expect(r.verdict === "valid" ? "valid" : `${r.verdict} ${r.error.reason}`).toBe("signed_unauthorized not_narrowed")
    }))
  it("issuing refuses to sign a sub that is not a tally or a wrt that is not a writ (malformed)", () => {
    const refused = (over: Partial<TallyParams>) =>
      Effect.runSync(Effect.flip(Effect.provide(signTally({ call: rootCall.call.id, writ: w.root.id, op: "travel/book", acc: EXP - 2000, st: "ok", ...over }), Signer.fromSeed(seed(B)))))
    expect(refused({ sub: [{ x: 1 }] })).toMatchObject({ reason: "malformed", path: "sub" })
    expect(refused({ wrt: [{ ...w.child.writ, bnd: {} }] })).toMatchObject({ reason: "malformed", path: "wrt" })
  })
  it("pending and failed tallies are valid in their shapes", () => {
    expect(verdict(bTally({ st: "pending", err: { code: "pending" }, used: {}, sub: [], wrt: [], body: undefined }))).toBe("valid")
    expect(verdict(bTally({ st: "failed", err: { code: "out_of_bounds" }, used: {}, sub: [], wrt: [], body: undefined }))).toBe("valid")
    expect(reason(checkTally(bTally()))).toBe("accept")
  })
})

function subParams(): TallyParams {
  return { call: w.call.call.id, writ: w.child.id, op: "travel/charge", acc: EXP - 1000, st: "ok", used: { amount: 58900 }, rev: null }
}

describe("section 9.1: revokes", () => {
  const rv = run(as(A)(makeRevoke({ chain: w.child.chain }))).revoke.json
  const rvWith = (patch: Record<string, unknown>, signer = A) => resign("revoke", { ...rv, ...patch } as JsonObject, signer)
  it.each([
    ["a revoke of the leaf by the root issuer", () => rv, "accept"],
    ["a key-wide revoke", () => rvWith({ writ: "*", chain: [] }), "accept"],
    ["by the leaf holder", () => rvWith({ iss: keyOf(C) }, C), "no_standing"],
    ["leaf mismatch", () => rvWith({ writ: w.root.id }), "chain_broken"],
    ["leaf mismatch before standing", () => rvWith({ writ: w.root.id, iss: keyOf(C) }, C), "chain_broken"],
    ["chain out of order", () => rvWith({ chain: [w.child.writ, w.root.writ] }), "chain_broken"],
    ["key-wide with a chain", () => rvWith({ writ: "*" }), "malformed"],
    ["a writ with an empty chain", () => rvWith({ chain: [] }), "malformed"],
    ["key-wide with a chain and a wrong signer", () => rvWith({ writ: "*" }, X), "malformed"],
    ["wrong signer", () => rvWith({}, X), "bad_signature"],
    ["a bad writ in the chain before the revoke signature", () => ({ ...rv, chain: [w.root.writ, { ...w.child.writ, nnc: 5 }] }), "malformed"],
    ["iss not a key", () => rvWith({ iss: "did:web:a" }), "bad_key"],
    ["iss before chain length", () => rvWith({ iss: "did:web:a", chain: Array(9).fill(w.root.writ) }), "bad_key"],
    ["writ not a hash", () => rvWith({ writ: "abc!" }), "noncanonical"],
    ["writ a short hash", () => rvWith({ writ: "AAAA" }), "malformed"],
    ["writ a number", () => rvWith({ writ: 5 }), "malformed"],
    ["chain of nine", () => rvWith({ chain: Array(9).fill(w.root.writ) }), "too_large"],
    ["typ ack", () => rvWith({ typ: "ack" }), "wrong_type"]
  ])("%s", (_n, make, expected) => expect(reason(verifyRevoke(JSON.parse(JSON.stringify(make()))))).toBe(expected))
})

describe("section 9.4: checking a tally against an ack", () => {
  const rv = run(as(A)(makeRevoke({ chain: w.child.chain }))).revoke
  const ackOf = (body: { held: Array<{ call: string; tally: string }>; open: Array<string> }, rcv = EXP - 500, signer = C) =>
    run(as(signer)(makeAck({ revoke: rv.id, rcv, body })))
  const check = (a: { ack: { json: JsonObject }; body: unknown }, tally: JsonObject, over: Record<string, unknown> = {}) =>
    reason(checkAck({ revoke: rv.json, ack: a.ack.json, body: { value: a.body as Json }, chain: w.child.chain, tally, ...over }))
  const empty = ackOf({ held: [], open: [] })
  it("accepts held, open, and pending-of-held tallies; rejects unaccounted work with revoked", () => {
    expect(check(ackOf({ held: [{ call: tC.value.call, tally: tC.id }], open: [] }), tC.json)).toBe("accept")
    expect(check(ackOf({ held: [], open: [tC.value.call] }), tC.json)).toBe("accept")
    const pending = signAs(C, { ...subParams(), st: "pending", err: { code: "pending" }, used: {} })
    expect(check(ackOf({ held: [{ call: tC.value.call, tally: tC.id }], open: [] }), pending.json)).toBe("accept")
    expect(check(empty, tC.json)).toBe("revoked")
    // held names the call with another tally: not accounted for.
    expect(check(ackOf({ held: [{ call: tC.value.call, tally: identity(w.root.writ as never) }], open: [] }), tC.json)).toBe("revoked")
  })
  it.effect("says nothing about refusals, standing work, other signers, writs expired before rcv, uncovered chains", () =>
    Effect.gen(function* () {
      const refusal = signAs(C, { ...subParams(), st: "failed", err: { code: "revoked" }, used: {} })
      expect(check(empty, refusal.json)).toBe("accept")
      const consumed = signAs(C, { ...subParams(), st: "failed", err: { code: "x" }, used: { amount: 1 } })
      expect(check(empty, consumed.json)).toBe("revoked")
      const standing = signAs(C, { ...subParams(), op: "sys/undo" })
      expect(check(empty, standing.json)).toBe("accept")
      expect(check(ackOf({ held: [], open: [] }, EXP - 100), tC.json)).toBe("accept")
      const other = ackOf({ held: [], open: [] }, EXP - 500, X)
      expect(check(other, tC.json)).toBe("accept")
      // A revoke of a sibling writ (another child of the root) does not cover the chain.
      const sib = (yield* as(B)(delegate(w.heldByB, { hld: keyOf(X) })))
      const rs = (yield* as(A)(makeRevoke({ chain: sib.chain }))).revoke
      const a = (yield* as(C)(makeAck({ revoke: rs.id, rcv: EXP - 500, body: { held: [], open: [] } })))
      expect(reason(checkAck({ revoke: rs.json, ack: a.ack.json, body: { value: a.body as unknown as Json }, chain: w.child.chain, tally: tC.json }))).toBe("accept")
    }))
  it.each([
    ["a bad revoke first", () => ({ revoke: { ...rv.json, iss: keyOf(X) } }), "bad_signature"],
    ["an ack of another typ", () => ({ ack: resign("ack", { ...empty.ack.json, typ: "tally" }, C) }), "wrong_type"],
    ["an ack with rcv a string", () => ({ ack: resign("ack", { ...empty.ack.json, rcv: "1" }, C) }), "malformed"],
    ["an ack signed by another key", () => ({ ack: resign("ack", empty.ack.json, X) }), "bad_signature"],
    ["an ack of another revoke", () => ({ ack: resign("ack", { ...empty.ack.json, revoke: w.root.id }, C) }), "ack_mismatch"],
    ["a substituted body", () => ({ body: { value: { held: [], open: [tC.value.call] } } }), "ack_mismatch"],
    ["no body", () => ({ body: undefined }), "ack_mismatch"],
    ["a body without arrays", () => ({ ack: resign("ack", { ...empty.ack.json, out: identity({ held: 1, open: [] } as never) }, C), body: { value: { held: 1, open: [] } } }), "malformed"],
    ["a broken chain", () => ({ chain: [w.child.writ] }), "chain_broken"],
    ["a tally signed by another key", () => ({ tally: resign("tally", tC.json, X) }), "bad_signature"],
    ["a tally for another writ", () => ({ tally: signAs(C, { ...subParams(), writ: w.root.id }).json }), "tally_mismatch"]
  ])("%s", (_n, over, expected) => expect(check(empty, tC.json, over())).toBe(expected))
  it.effect("a key-wide revoke covers the writs its key issued", () =>
    Effect.gen(function* () {
      const kw = (yield* as(B)(makeRevoke({ writ: "*" }))).revoke
      const a = (yield* as(C)(makeAck({ revoke: kw.id, rcv: EXP - 500, body: { held: [], open: [] } })))
      expect(reason(checkAck({ revoke: kw.json, ack: a.ack.json, body: { value: a.body as unknown as Json }, chain: w.child.chain, tally: tC.json }))).toBe("revoked")
      const ka = (yield* as(X)(makeRevoke({ writ: "*" }))).revoke
      const b = (yield* as(C)(makeAck({ revoke: ka.id, rcv: EXP - 500, body: { held: [], open: [] } })))
      expect(reason(checkAck({ revoke: ka.json, ack: b.ack.json, body: { value: b.body as unknown as Json }, chain: w.child.chain, tally: tC.json }))).toBe("accept")
    }))
})
