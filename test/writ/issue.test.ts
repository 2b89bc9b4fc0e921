import { Effect, Either } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { HeldWrit, delegate, holdChain, issueRoot, makeAck, makeCall, makeRevoke } from "../../src/writ/issue.js"
import { verifyCall } from "../../src/writ/call.js"
import { verifyChain } from "../../src/writ/chain.js"
import { checkAck } from "../../src/writ/ack.js"
import { A, B, C, EXP, X, as, keyOf, rootBnd, run, tallyFor, world } from "./fixtures.js"

const reasonOf = <A>(eff: Effect.Effect<A, { reason: string }>) => {
  const r = Effect.runSync(Effect.either(eff))
  return Either.isLeft(r) ? r.left.reason : "accept"
}

describe("issuing (section 7.5 and the signing functions)", () => {
  it("is deterministic from seeds and produces objects that verify", () => {
    const w1 = world()
    const w2 = world()
    expect(w1.child.writ).toEqual(w2.child.writ)
    expect(w1.call.call.json).toEqual(w2.call.call.json)
    expect(run(verifyChain(w1.child.chain)).length).toBe(2)
    expect(run(verifyCall(w1.call.call.json, { now: EXP - 1000 })).chain.length).toBe(2)
  })

  it("gives a HeldWrit for a root issued to oneself, and none for a root issued to another", () => {
    const self = run(as(A)(issueRoot({ hld: keyOf(A), bnd: rootBnd, exp: EXP })))
    expect(self.held).toBeInstanceOf(HeldWrit)
    expect(world().root.held).toBeUndefined()
  })

  it("HeldWrit cannot be constructed outside the module", () => {
    const H = HeldWrit as unknown as new (...a: Array<unknown>) => unknown
    expect(() => new H(Symbol("HeldWrit"), [])).toThrow(TypeError)
  })

  it("holdChain refuses a chain whose leaf another key holds (wrong_executor) and a broken chain", () => {
    const w = world()
    expect(reasonOf(as(X)(holdChain(w.root.chain)))).toBe("wrong_executor")
    expect(reasonOf(as(B)(holdChain([w.child.writ])))).toBe("chain_broken")
    expect(reasonOf(as(B)(holdChain("not a chain")))).toBe("malformed")
  })

  it("delegate refuses widening, outliving, a bad holder, and depth before signing", () => {
    const { heldByB } = world()
    expect(reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), bnd: { amount: { t: "max", v: 60001 } } })))).toBe("not_narrowed")
    expect(reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), bnd: { amount: { t: "total", v: 1 } } })))).toBe("not_narrowed")
    expect(reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), exp: EXP + 1 })))).toBe("not_narrowed")
    expect(reasonOf(as(B)(delegate(heldByB, { hld: "did:web:x" })))).toBe("bad_key")
    expect(reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), bnd: { spend: { t: "total", v: -1 } } })))).toBe("noncanonical")
    // A holder that may not delegate further (depth 0) cannot issue a child.
    const root = run(as(A)(issueRoot({ hld: keyOf(B), bnd: { ...rootBnd, depth: { t: "max", v: 0 } }, exp: EXP })))
    const held = run(as(B)(holdChain(root.chain)))
    expect(reasonOf(as(B)(delegate(held, { hld: keyOf(C) })))).toBe("not_narrowed")
    // A HeldWrit held by B is useless to another signer.
    expect(reasonOf(as(X)(delegate(heldByB, { hld: keyOf(C) })))).toBe("chain_broken")
  })

  it("delegate narrows and inherits, and the child verifies in its chain", () => {
    const { child } = world()
    expect(child.writ.bnd.amount).toEqual({ t: "max", v: 58900 })
    expect(child.writ.bnd.currency).toEqual(rootBnd.currency)
    expect(child.writ.iss).toBe(keyOf(B))
    expect(child.writ.prv).toBe(world().root.id)
  })

  it("makeCall refuses calls a verifier would reject", () => {
    const { child, args } = world()
    expect(reasonOf(as(B)(makeCall({ chain: child.chain, op: "travel/charge", args: { ...args, amount: 58901 } })))).toBe("out_of_bounds")
    expect(reasonOf(as(B)(makeCall({ chain: child.chain, op: "travel/book", args })))).toBe("forbidden_op")
    expect(reasonOf(as(C)(makeCall({ chain: child.chain, op: "travel/charge", args })))).toBe("no_standing")
    // A standing call by the root issuer is fine.
    expect(reasonOf(as(A)(makeCall({ chain: child.chain, op: "sys/tallies", args: { writ: child.id } })))).toBe("accept")
  })

  it("makeRevoke and makeAck produce objects that pass sections 9.1 and 9.4", () => {
    const w = world()
    const rv = run(as(A)(makeRevoke({ chain: w.child.chain })))
    expect(rv.revoke.value.writ).toBe(w.child.id)
    expect(reasonOf(as(C)(makeRevoke({ chain: w.child.chain })))).toBe("no_standing")
    const keyWide = run(as(X)(makeRevoke({ writ: "*" })))
    expect(keyWide.chain).toEqual([])
    const { ack, body } = run(as(C)(makeAck({ revoke: rv.revoke.id, rcv: EXP - 500, body: { held: [], open: [] } })))
    expect(
      run(checkAck({ revoke: rv.revoke.json, ack: ack.json, body: { value: body as never }, chain: w.child.chain, tally: tallyJson(w) }))
    ).toBe("silent")
  })
})

const tallyJson = (w: ReturnType<typeof world>) => tallyFor(w, { st: "failed", err: { code: "x:refused" }, used: {}, body: undefined, rev: null }).json
