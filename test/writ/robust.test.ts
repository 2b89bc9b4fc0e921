// Bad input of any shape gets a section 11 reason code, never an exception escaping the Effect:
// truncated bytes, huge and deeply nested input, random values, and wrong types in every member.
import { Cause, Effect, Exit } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "@effect/vitest"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { reasonCodes, WritError } from "../../src/writ/reason.js"
import { verifyWrit } from "../../src/writ/writ.js"
import { verifyCall } from "../../src/writ/call.js"
import { verifyChain } from "../../src/writ/chain.js"
import { verifyRevoke } from "../../src/writ/revoke.js"
import { checkAck } from "../../src/writ/ack.js"
import { verifyTallyTree } from "../../src/writ/tally.js"
import { checkBounds, checkBound } from "../../src/writ/bound.js"
import { Received } from "../../src/writ/verify.js"
import { canonicalText } from "../../src/writ/sign.js"
import { EXP, run, tallyFor, world } from "./fixtures.js"

const w = world()
const callText = canonicalText(w.call.call.json)
const ctx = { callId: w.call.call.id, op: "travel/charge", chain: w.call.chain }
const tally = tallyFor(w).json

/** The Effect ends in success or in a WritError with a section 11 code; never a defect. */
const outcome = (eff: Effect.Effect<unknown, unknown>): string => {
  const exit = Effect.runSyncExit(eff)
  if (Exit.isSuccess(exit)) return "accept"
  const f = Cause.failureOption(exit.cause)
  if (f._tag === "None") throw new Error(`defect: ${Cause.pretty(exit.cause)}`)
  const e = f.value
  if (!(e instanceof WritError) || !(reasonCodes as ReadonlyArray<string>).includes(e.reason)) throw new Error(`not a WritError: ${String(e)}`)
  return e.reason
}

const everyVerifier = (v: unknown): Array<string> => [
  outcome(verifyWrit(v as Json)),
  outcome(verifyCall(v as Json, { now: 1 })),
  outcome(verifyChain(v)),
  outcome(verifyRevoke(v as Json)),
  outcome(Effect.flatMap(verifyTallyTree(v as Json, ctx), (r) => (r.verdict === "valid" ? Effect.void : Effect.fail(r.error)))),
  outcome(checkAck({ revoke: v as Json, ack: v as Json, body: { value: v as Json }, chain: v, tally: v as Json })),
  outcome(checkBound(v)),
  outcome(checkBounds(v))
]

describe("bad input of any shape", () => {
  it("every truncation of a valid call is a rejection with a reason", () => {
    expect(outcome(verifyCall(new Received(callText), { now: EXP - 1000 }))).toBe("accept") // within section 12's 24 hours of the root's exp
    const seen = new Set<string>()
    for (let n = 0; n < callText.length; n += 7) seen.add(outcome(verifyCall(new Received(callText.slice(0, n)))))
    expect([...seen]).toEqual(["noncanonical"])
    // truncated as bytes, mid UTF-8 sequence
    const bytes = new TextEncoder().encode(callText.replace("travel/charge", "travel/chargé"))
    expect(outcome(verifyCall(new Received(bytes.subarray(0, bytes.length - 3))))).toBe("noncanonical")
  })

  it("huge and deeply nested input is too_large, without building it", () => {
    expect(outcome(verifyCall(new Received("[".repeat(100_000) + "]".repeat(100_000))))).toBe("too_large")
    expect(outcome(verifyWrit(new Received(" ".repeat(5000) + "{}")))).toBe("too_large")
    expect(outcome(verifyCall(new Received(`{"x":"${"a".repeat(10_000_000)}"}`)))).toBe("too_large")
    expect(outcome(verifyTallyTree(new Received(`{"x":${"[".repeat(65)}${"]".repeat(65)}}`), ctx).pipe(Effect.flatMap((r) => (r.verdict === "valid" ? Effect.void : Effect.fail(r.error)))))).toBe("too_large")
    let deep: Json = []
    for (let i = 0; i < 70; i++) deep = [deep]
    expect(outcome(verifyWrit({ ...(w.root.writ as unknown as JsonObject), x: deep }))).toBe("too_large")
  })

  it("random JSON values and random text never escape", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        everyVerifier(v)
      }),
      { numRuns: 300 }
    )
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        for (const f of [verifyWrit, verifyRevoke]) outcome(f(new Received(s)))
        outcome(verifyCall(new Received(s)))
      }),
      { numRuns: 300 }
    )
  })

  it("a wrong type in any member of any object is a reason code", () => {
    const objects: Array<[string, JsonObject]> = [
      ["writ", w.child.writ as unknown as JsonObject],
      ["call", w.call.call.json],
      ["tally", tally]
    ]
    const wrong: Array<Json> = [null, true, 0, -1, 1.5 as Json, "", "x", [], [1], {}, { t: "max", v: 1 }]
    for (const [typ, o] of objects) {
      for (const k of Object.keys(o)) {
        for (const bad of wrong) {
          if (canonicalText(bad) === canonicalText(o[k])) continue
          const m = { ...o, [k]: bad }
          const r =
            typ === "writ" ? outcome(verifyWrit(m)) : typ === "call" ? outcome(verifyCall(m)) : outcome(Effect.flatMap(verifyTallyTree(m, ctx), (x) => (x.verdict === "valid" ? Effect.void : Effect.fail(x.error))))
          expect(r).not.toBe("accept")
        }
      }
    }
  })

  it.effect("a bound named __proto__ is a bound like any other", () =>
    Effect.gen(function* () {
      const bnd = JSON.parse('{"act":{"t":"prefix","v":"x"},"__proto__":{"t":"glob","v":1}}')
      expect(outcome(checkBounds(bnd))).toBe("unknown_bound")
      const ok = (yield* checkBounds(JSON.parse('{"act":{"t":"prefix","v":"x"},"__proto__":{"t":"max","v":1}}')))
      expect(Object.keys(ok)).toContain("__proto__")
    }))
})
