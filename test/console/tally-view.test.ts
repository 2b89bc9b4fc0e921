// The console's tally tree (src/console/tally-view.ts) on trees built from fixed keys: every hop's
// section 6.2 verdict, the failing hop marked where section 6.2 says the tree first fails, the
// narrowing of each chain, and the refusals (not a tally, a call that does not verify).
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { treeView } from "../../src/console/tally-view.js"
import type { Json } from "../../src/kernel/json.js"
import { call, child, hashOf, key, type Obj, T0, tally, writ } from "../support/writ-builders.js"

const A = key("console-A")
const B = key("console-B")
const C = key("console-C")
const w1 = writ("console-w1", { iss: A, hld: B.did })
const w2 = child("console-w2", w1, B, C.did, { amount: { t: "max", v: 30000 }, act: { t: "prefix", v: "shop/pay" } })
const K = call("console-K", A, [w1], "shop/buy", { amount: 20000, currency: "EUR", date: 20270110, spend: 20000 })
const subCall = hashOf({ sub: "call" })
const S = (used: number, writId = hashOf(w2)) => tally(C, { call: subCall, writ: writId, op: "shop/pay", acc: T0 + 10, used: { amount: used } })
const T = (sub: Obj) => tally(B, { call: hashOf(K), writ: hashOf(w1), op: "shop/buy", acc: T0 + 20, used: { amount: 20000 }, sub: [sub], wrt: [w2] })
const view = (t: Obj, c: Obj | null = K) => treeView("test", t as unknown as Json, c === null ? undefined : (c as unknown as Json))

describe("tally tree view", () => {
  it.effect("draws both hops valid, with the chain under each and what the delegation narrowed", () =>
    Effect.gen(function*() {
      const v = yield* view(T(S(20000)))
      expect(v.verdict).toBe("valid")
      expect([v.root.verdict, v.root.sub[0].verdict]).toEqual(["valid", "valid"])
      expect(v.root.signer).toBe(B.did)
      expect(v.root.sub[0].signer).toBe(C.did)
      expect(v.root.sub[0].chain.map((w) => w.id)).toEqual([hashOf(w1), hashOf(w2)])
      const amount = v.root.sub[0].narrowing.find((r) => r.name === "amount")!
      expect(amount).toEqual({ name: "amount", values: ["at most 50000", "at most 30000"], narrowedAt: [1] })
      expect(v.root.sub[0].narrowing.find((r) => r.name === "currency")!.narrowedAt).toEqual([])
      expect([v.root.failsHere, v.root.sub[0].failsHere]).toEqual([false, false])
    }))

  it.effect("marks the hop whose used is over its writ's bound (out_of_bounds)", () =>
    Effect.gen(function*() {
      const v = yield* view(T(S(40000)))
      expect(v.verdict).toBe("signed_unauthorized")
      expect(v.reason).toBe("out_of_bounds")
      expect(v.path).toBe("sub[0].used.amount")
      expect([v.root.failsHere, v.root.sub[0].failsHere]).toEqual([false, true])
      expect(v.root.sub[0].verdict).toBe("signed_unauthorized")
      expect(v.root.sub[0].reason).toBe("out_of_bounds")
    }))

  it.effect("marks a sub-tally that names no writ of its parent's wrt (sub_unmatched)", () =>
    Effect.gen(function*() {
      const v = yield* view(T(S(20000, hashOf({ not: "a writ" }))))
      expect(v.reason).toBe("sub_unmatched")
      expect(v.root.sub[0].failsHere).toBe(true)
      expect(v.root.sub[0].reason).toBe("sub_unmatched")
      expect(v.root.sub[0].chain).toEqual([])
    }))

  it.effect("without the call the top is unchecked; sub-hops are checked under their writs", () =>
    Effect.gen(function*() {
      const v = yield* view(T(S(20000)), null)
      expect(v.verdict).toBe("unchecked")
      expect(v.root.verdict).toBe("unchecked")
      expect(v.root.sub[0].verdict).toBe("valid")
    }))

  it.effect("refuses what is not a tally, and a call that does not verify (console/wrong_type)", () =>
    Effect.gen(function*() {
      const notTally = yield* Effect.flip(view(w1))
      expect(notTally.reason).toBe("console/wrong_type")
      const badCall = yield* Effect.flip(view(T(S(20000)), { ...K, sig: "AAAA" }))
      expect(badCall.reason).toBe("console/wrong_type")
      expect(badCall.detail).toContain("the call does not verify")
    }))
})
