// Appendix E and docs/approval.md: approval as an ordinary delegation. A person P grants a manager
// M 10000; M grants the agent G 100; G grants the executor E. G's call to pay 500 is refused at E;
// the approver is M, who issues the pinned approval under P's writ; G re-issues its writ under it;
// the call runs once at a real executor, which knows nothing of approval.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import { type Action, admits, approvalPoint, approveAt } from "../../src/writ/approval.js"
import { verifyCall } from "../../src/writ/call.js"
import { verifyChain } from "../../src/writ/chain.js"
import { delegate, holdChain, issueRoot, makeCall } from "../../src/writ/issue.js"
import { as, keyOf, run, seed } from "../writ/fixtures.js"
import { memoryExecutor } from "./executor.js"

const P = 11, M = 12, G = 13, E = 14
const EXP = 1_800_000_000

const world = () => {
  const w1 = run(as(P)(issueRoot({
    hld: keyOf(M),
    exp: EXP,
    bnd: {
      act: { t: "prefix", v: "pay" },
      amount: { t: "max", v: 10000 },
      pay_to: { t: "set", v: ["v1", "v2"] },
      uses: { t: "count", v: 100 }
    }
  })))
  const w2 = run(as(M)(Effect.flatMap(holdChain(w1.chain), (h) => delegate(h, { hld: keyOf(G), exp: EXP - 10, bnd: { amount: { t: "max", v: 100 } } }))))
  const w3 = run(as(G)(Effect.flatMap(holdChain(w2.chain), (h) => delegate(h, { hld: keyOf(E) }))))
  return { w1, w2, w3, chain: w3.chain as unknown as ReadonlyArray<JsonObject> }
}

const action: Action = { op: "pay", args: { amount: 500, pay_to: "v1", memo: "invoice 7" } }
const reasonOf = <A>(eff: Effect.Effect<A, { reason: string }>) =>
  Effect.map(Effect.either(eff), (r) => (Either.isLeft(r) ? r.left.reason : "accept"))

/** The approval and the re-issued chain below it, as M and then G make them. */
const approved = (w: ReturnType<typeof world>, a: Action = action) => {
  const a2 = run(as(M, 40)(approveAt({ above: [w.chain[0]], replaced: w.chain[1], action: a })))
  const a3 = run(as(G, 41)(approveAt({ above: a2.chain, replaced: w.chain[2], action: a })))
  return { a2, a3, chain: a3.chain as unknown as ReadonlyArray<JsonObject> }
}

describe("approval as delegation (Appendix E)", () => {
  it.effect("names the approver: the issuer of the first writ, root first, that does not admit the call", () =>
    Effect.gen(function*() {
      const w = world()
      // The call as made is refused at the leaf for its amount (section 7.2).
      const refused = yield* as(G)(makeCall({ chain: w.chain, ...action }).pipe(Effect.either))
      expect(Either.isLeft(refused) && refused.left.reason).toBe("out_of_bounds")
      const point = yield* approvalPoint(w.chain, action)
      expect(point.index).toBe(1)
      expect(point.approver).toBe(keyOf(M))
      // 20000 is above M's own writ: the approver is P, who holds more.
      const big = yield* approvalPoint(w.chain, { ...action, args: { ...action.args, amount: 20000 } })
      expect([big.index, big.approver]).toEqual([0, keyOf(P)])
      // A recipient outside P's set, an operation outside every act, a missing argument.
      expect((yield* approvalPoint(w.chain, { ...action, args: { ...action.args, pay_to: "v9" } })).index).toBe(0)
      expect((yield* approvalPoint(w.chain, { op: "refund", args: action.args })).index).toBe(0)
      expect((yield* approvalPoint(w.chain, { op: "pay", args: { amount: 5 } })).index).toBe(0)
    }))

  it.scoped("builds the pinned approval and the re-issued chain, which runs once at an executor", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime((EXP - 3600) * 1000)
      const w = world()
      const { a2, chain } = approved(w)
      // The approval: a child of P's writ, to G, act the op, every bound pinned, a count of 1.
      expect(a2.writ.prv).toBe(w.w1.id)
      expect(a2.writ.iss).toBe(keyOf(M))
      expect(a2.writ.hld).toBe(keyOf(G))
      expect(a2.writ.exp).toBe(EXP)
      expect(a2.writ.bnd).toEqual({
        act: { t: "prefix", v: "pay" },
        amount: { t: "max", v: 500 },
        pay_to: { t: "set", v: ["v1"] },
        uses: { t: "count", v: 1 },
        memo: { t: "set", v: ["invoice 7"] }
      })
      expect((yield* verifyChain(chain)).length).toBe(3)
      expect(chain[0]).toEqual(w.chain[0])
      const executor = yield* memoryExecutor(seed(E), [keyOf(P)])
      const first = yield* as(G, 50)(makeCall({ chain, ...action }))
      const a = yield* executor.call(first.call.json)
      expect(a._tag === "tally" && a.tally.st).toBe("ok")
      // Once means once: a second call (another id) under the approval is count_exhausted.
      const second = yield* as(G, 51)(makeCall({ chain, ...action }))
      const b = yield* executor.call(second.call.json)
      expect(b._tag === "tally" && (b.tally.err as JsonObject | null)?.code).toBe("count_exhausted")
    }))

  it.effect("two pins are ceilings (a smaller amount, an op below), and every other value is refused", () =>
    Effect.gen(function*() {
      const w = world()
      const { chain } = approved(w)
      const call = (a: Action) => reasonOf(Effect.flatMap(as(G, 60)(makeCall({ chain, ...a })), (c) => verifyCall(c.call.json)))
      expect(yield* call(action)).toBe("accept")
      expect(yield* call({ ...action, args: { ...action.args, amount: 400 } })).toBe("accept")
      expect(yield* call({ op: "pay/extra", args: action.args })).toBe("accept")
      expect(yield* call({ ...action, args: { ...action.args, amount: 501 } })).toBe("out_of_bounds")
      expect(yield* call({ ...action, args: { ...action.args, pay_to: "v2" } })).toBe("out_of_bounds")
      expect(yield* call({ ...action, args: { ...action.args, memo: "invoice 8" } })).toBe("out_of_bounds")
      expect(yield* call({ op: "payment", args: action.args })).toBe("forbidden_op")
    }))

  it.effect("no one approves more than they hold, or in another's place", () =>
    Effect.gen(function*() {
      const w = world()
      const big: Action = { ...action, args: { ...action.args, amount: 20000 } }
      // M under P's writ of 10000: the writ above does not admit 20000 (P must approve).
      expect(yield* reasonOf(as(M)(approveAt({ above: [w.chain[0]], replaced: w.chain[1], action: big })))).toBe("not_narrowed")
      // M cannot replace P's root, nor G M's writ.
      expect(yield* reasonOf(as(M)(approveAt({ above: [], replaced: w.chain[0], action: big })))).toBe("approval/not_approver")
      expect(yield* reasonOf(as(G)(approveAt({ above: [w.chain[0]], replaced: w.chain[1], action })))).toBe("approval/not_approver")
      // P approves 20000 by re-issuing its root to M; M and G re-issue below it.
      const r1 = yield* as(P, 70)(approveAt({ above: [], replaced: w.chain[0], action: big, exp: EXP - 100 }))
      expect(r1.writ.prv).toBeNull()
      const r2 = yield* as(M, 71)(approveAt({ above: r1.chain, replaced: w.chain[1], action: big }))
      const r3 = yield* as(G, 72)(approveAt({ above: r2.chain, replaced: w.chain[2], action: big }))
      expect(yield* reasonOf(Effect.flatMap(as(G, 73)(makeCall({ chain: r3.chain, ...big })), (c) => verifyCall(c.call.json)))).toBe("accept")
      // An approval cannot outlive the writ above (section 4 step 3).
      expect(yield* reasonOf(as(M)(approveAt({ above: [w.chain[0]], replaced: w.chain[1], action, exp: EXP + 1 })))).toBe("not_narrowed")
    }))

  it.effect("refuses what approval cannot lift: nothing refused, a standing op, an unpinnable argument, a broken chain", () =>
    Effect.gen(function*() {
      const w = world()
      expect(yield* reasonOf(approvalPoint(w.chain, { ...action, args: { ...action.args, amount: 50 } }))).toBe("approval/admitted")
      expect(yield* reasonOf(approvalPoint(w.chain, { op: "sys/undo", args: {} }))).toBe("forbidden_op")
      const nested: Action = { op: "pay", args: { ...action.args, detail: { line: 1 } } }
      expect(yield* reasonOf(as(M)(approveAt({ above: [w.chain[0]], replaced: w.chain[1], action: nested })))).toBe("approval/unpinnable")
      expect(yield* reasonOf(approvalPoint([w.chain[0], w.chain[2]], action))).toBe("chain_broken")
      expect(yield* reasonOf(approvalPoint([], action))).toBe("malformed")
      // `admits` is the section 3.1 and 7.2 rule: the root admits the call, the agent's writ not.
      const writs = yield* verifyChain(w.chain)
      expect(writs.map((x) => admits(x, action))).toEqual([true, false, false])
    }))
})
