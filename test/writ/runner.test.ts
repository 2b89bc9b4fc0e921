// The conformance runner itself, on synthetic vectors (no shared corpus needed): objects are
// judged from their own text, operands in section 14's order, and a mismatch is a failure.
import { Effect } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { runVectorText } from "../../src/writ/conformance.js"
import { canonicalText } from "../../src/writ/sign.js"
import { resign, world } from "./fixtures.js"

const runV = (v: string) => Effect.runSync(runVectorText("v.json", v))
const vec = (op: string, input: string, expect: string, reason?: string, now?: number) =>
  `{"name":"t","op":"${op}","input":${input},"expect":"${expect}"${reason ? `,"reason":"${reason}"` : ""}${now !== undefined ? `,"now":${now}` : ""}}`

describe("conformance runner", () => {
  const w = world()
  const root = canonicalText(w.root.writ as never)
  const child = canonicalText(w.child.writ as never)

  it("canonicalize: compares the canonical text, and reads raw strictly", () => {
    expect(runV(vec("canonicalize", `{"raw":"{\\"b\\":1,\\"a\\":2}","canonical":"{\\"a\\":2,\\"b\\":1}"}`, "accept")).pass).toBe(true)
    const wrong = runV(vec("canonicalize", `{"raw":"{\\"b\\":1}","canonical":"{\\"b\\": 1}"}`, "accept"))
    expect(wrong.pass).toBe(false)
    expect(runV(vec("canonicalize", `{"raw":"[1.0]"}`, "reject", "noncanonical")).pass).toBe(true)
  })

  it("narrows and satisfies: each operand is checked before the next is read", () => {
    expect(runV(vec("narrows", `{"child":{"t":"max","v":-1},"parent":{"t":"max","v":1.5}}`, "reject", "noncanonical")).actualReason).toBe("noncanonical")
    expect(runV(vec("narrows", `{"child":{"t":"max"},"parent":{"t":"max","v":1.5}}`, "reject", "malformed")).pass).toBe(true)
    expect(runV(vec("narrows", `{"child":{"t":"max","v":1},"parent":{"t":"max","v":1.5}}`, "reject", "noncanonical")).pass).toBe(true)
    expect(runV(vec("satisfies", `{"bound":{"t":"glob","v":1},"arg":1.5}`, "reject", "unknown_bound")).pass).toBe(true)
    expect(runV(vec("satisfies", `{"bound":{"t":"max","v":5},"arg":6}`, "reject", "out_of_bounds")).pass).toBe(true)
  })

  it("verify_writ: number spellings inside the object reach the strict reader", () => {
    expect(runV(vec("verify_writ", `{"writ":${root}}`, "accept")).pass).toBe(true)
    const floaty = root.replace(/"exp":(\d+)/, '"exp":$1.0')
    expect(runV(vec("verify_writ", `{"writ":${floaty}}`, "reject", "noncanonical")).pass).toBe(true)
    const dup = root.replace("{", '{"v":1,')
    expect(runV(vec("verify_writ", `{"writ":${dup}}`, "reject", "noncanonical")).pass).toBe(true)
  })

  it("verify_chain: each writ is read on its own, in array order", () => {
    const badSig = canonicalText(resign("writ", w.root.writ as never, 9) as never)
    const floaty = child.replace(/"exp":(\d+)/, '"exp":$1.0')
    expect(runV(vec("verify_chain", `{"chain":[${badSig},${floaty}]}`, "reject", "bad_signature")).pass).toBe(true)
    expect(runV(vec("verify_chain", `{"chain":[${root},${floaty}]}`, "reject", "noncanonical")).pass).toBe(true)
    expect(runV(vec("verify_chain", `{"chain":[${root},${child}]}`, "reject", "expired", 1_800_000_000)).pass).toBe(true)
  })

  it("unknown ops and unreadable vectors are failures, not crashes", () => {
    expect(runV(vec("frobnicate", `{}`, "accept")).pass).toBe(false)
    expect(runV("{not json").pass).toBe(false)
    expect(runV(`{"name":"x","op":"verify_writ","expect":"accept"}`).pass).toBe(false)
  })
})
