import { Effect, Either } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { HeldWrit, delegate, holdChain, issueRoot, makeAck, makeCall, makeRevoke } from "../../src/writ/issue.js"
import { verifyCall } from "../../src/writ/call.js"
import { verifyChain } from "../../src/writ/chain.js"
import { checkAck } from "../../src/writ/ack.js"
import { A, B, C, EXP, X, as, keyOf, rootBnd, tallyFor, world } from "./fixtures.js"

/** The reason `eff` fails with, or "accept". */
const reasonOf = <A>(eff: Effect.Effect<A, { reason: string }>): Effect.Effect<string> =>
  Effect.map(Effect.either(eff), (r) => (Either.isLeft(r) ? r.left.reason : "accept"))

describe("issuing (section 7.5 and the signing functions)", () => {
  it.effect("is deterministic from seeds and produces objects that verify", () =>
    Effect.gen(function* () {
      const w1 = world()
      const w2 = world()
      expect(w1.child.writ).toEqual(w2.child.writ)
      expect(w1.call.call.json).toEqual(w2.call.call.json)
      expect((yield* verifyChain(w1.child.chain)).length).toBe(2)
      expect((yield* verifyCall(w1.call.call.json, { now: EXP - 1000 })).chain.length).toBe(2)
    }))

  it.effect("gives a HeldWrit for a root issued to oneself, and none for a root issued to another", () =>
    Effect.gen(function* () {
      const self = (yield* as(A)(issueRoot({ hld: keyOf(A), bnd: rootBnd, exp: EXP })))
      expect(self.held).toBeInstanceOf(HeldWrit)
      expect(world().root.held).toBeUndefined()
    }))

  it("HeldWrit cannot be constructed outside the module", () => {
    const H = HeldWrit as unknown as new (...a: Array<unknown>) => unknown
    expect(() => new H(Symbol("HeldWrit"), [])).toThrow(TypeError)
  })

  it.effect("holdChain refuses a chain whose leaf another key holds (wrong_executor) and a broken chain", () =>
    Effect.gen(function* () {
      const w = world()
      expect(yield* reasonOf(as(X)(holdChain(w.root.chain)))).toBe("wrong_executor")
      expect(yield* reasonOf(as(B)(holdChain([w.child.writ])))).toBe("chain_broken")
      expect(yield* reasonOf(as(B)(holdChain("not a chain")))).toBe("malformed")
    }))

  it.effect("delegate refuses widening, outliving, a bad holder, and depth before signing", () =>
    Effect.gen(function* () {
      const { heldByB } = world()
      expect(yield* reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), bnd: { amount: { t: "max", v: 60001 } } })))).toBe("not_narrowed")
      expect(yield* reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), bnd: { amount: { t: "total", v: 1 } } })))).toBe("not_narrowed")
      expect(yield* reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), exp: EXP + 1 })))).toBe("not_narrowed")
      expect(yield* reasonOf(as(B)(delegate(heldByB, { hld: "did:web:x" })))).toBe("bad_key")
      expect(yield* reasonOf(as(B)(delegate(heldByB, { hld: keyOf(C), bnd: { spend: { t: "total", v: -1 } } })))).toBe("noncanonical")
      // A holder that may not delegate further (depth 0) cannot issue a child.
      const root = (yield* as(A)(issueRoot({ hld: keyOf(B), bnd: { ...rootBnd, depth: { t: "max", v: 0 } }, exp: EXP })))
      const held = (yield* as(B)(holdChain(root.chain)))
      expect(yield* reasonOf(as(B)(delegate(held, { hld: keyOf(C) })))).toBe("not_narrowed")
      // A HeldWrit held by B is useless to another signer.
      expect(yield* reasonOf(as(X)(delegate(heldByB, { hld: keyOf(C) })))).toBe("chain_broken")
    }))

  it("delegate narrows and inherits, and the child verifies in its chain", () => {
    const { child } = world()
    expect(child.writ.bnd.amount).toEqual({ t: "max", v: 58900 })
    expect(child.writ.bnd.currency).toEqual(rootBnd.currency)
    expect(child.writ.iss).toBe(keyOf(B))
    expect(child.writ.prv).toBe(world().root.id)
  })

  it.effect("makeCall refuses calls a verifier would reject", () =>
    Effect.gen(function* () {
      const { child, args } = world()
      expect(yield* reasonOf(as(B)(makeCall({ chain: child.chain, op: "travel/charge", args: { ...args, amount: 58901 } })))).toBe("out_of_bounds")
      expect(yield* reasonOf(as(B)(makeCall({ chain: child.chain, op: "travel/book", args })))).toBe("forbidden_op")
      expect(yield* reasonOf(as(C)(makeCall({ chain: child.chain, op: "travel/charge", args })))).toBe("no_standing")
      // A standing call by the root issuer is fine.
      expect(yield* reasonOf(as(A)(makeCall({ chain: child.chain, op: "sys/tallies", args: { writ: child.id } })))).toBe("accept")
    }))

  it.effect("makeRevoke and makeAck produce objects that pass sections 9.1 and 9.4", () =>
    Effect.gen(function* () {
      const w = world()
      const rv = (yield* as(A)(makeRevoke({ chain: w.child.chain })))
      expect(rv.revoke.value.writ).toBe(w.child.id)
      expect(yield* reasonOf(as(C)(makeRevoke({ chain: w.child.chain })))).toBe("no_standing")
      const keyWide = (yield* as(X)(makeRevoke({ writ: "*" })))
      expect(keyWide.chain).toEqual([])
      const { ack, body } = (yield* as(C)(makeAck({ revoke: rv.revoke.id, rcv: EXP - 500, body: { held: [], open: [] } })))
      expect(
        (yield* checkAck({ revoke: rv.revoke.json, ack: ack.json, body: { value: body }, chain: w.child.chain, tally: tallyJson(w) }))
      ).toBe("silent")
    }))
})

const tallyJson = (w: ReturnType<typeof world>) => tallyFor(w, { st: "failed", err: { code: "x:refused" }, used: {}, body: undefined, rev: null }).json
