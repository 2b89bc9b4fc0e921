// Properties of the approval core, with fixed seeds: a plan hash depends on what the plan says, not
// on member order (so a recomputed plan finds its approval) and changes with the input (so Chen's
// approval never runs Ana's); a phrase matches whatever the case and surrounding spaces, and never
// when one visible character changes.
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { hashPlan, phraseMatches } from "../../src/yea/approval/index.js"

const reverseKeys = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(reverseKeys) : typeof v === "object" && v !== null ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reverseKeys(x)])) : v

const input = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxKeys: 5 })
const hash = (i: unknown, summary = "Move standup") =>
  Effect.runSync(hashPlan({ name: "reschedule", revert: true }, i, { summary, effects: [{ op: "update", target: "event/e1", field: "start", to: "15:00" }], undoWindow: 60 })).planHash

describe("approval properties", () => {
  it.prop("the plan hash ignores member order and follows the input", [input, input], ([a, b]) => {
    expect(hash(reverseKeys(a))).toBe(hash(a))
    if (JSON.stringify(Object.entries(a).sort()) !== JSON.stringify(Object.entries(b).sort())) expect(hash(a)).not.toBe(hash(b))
  }, { fastCheck: { numRuns: 300, seed: 20261202 } })

  const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/)
  it.prop("a phrase matches in any case with spaces around, and not with one letter changed", [word, fc.nat(), fc.nat({ max: 3 })], ([w, mask, pad]) => {
    const cased = [...w].map((ch, i) => ((mask >> i) & 1 ? ch.toUpperCase() : ch)).join("")
    expect(phraseMatches(" ".repeat(pad) + cased + "\t".repeat(pad), w)).toBe(true)
    const changed = w.slice(0, -1) + (w.endsWith("x") ? "y" : "x")
    expect(phraseMatches(changed, w)).toBe(false)
  }, { fastCheck: { numRuns: 300, seed: 20261202 } })
})
