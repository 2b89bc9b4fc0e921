// YEA canonical JSON (SPEC §10) and the proposal hash (§5.1).
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { hashB64 } from "../../src/kernel/hash.js"
import { canonical, readCanonical } from "../../src/yea/canonical.js"
import { checkCommitHash, decodeProposal, proposalHash } from "../../src/yea/proposal.js"

const ok = (v: unknown) => Either.getOrThrow(canonical(v))

describe("canonical (§10)", () => {
  it("sorts member names by code point, not UTF-16 code unit", () => {
    // U+FB01 sorts before U+1F600 by code point; its UTF-16 unit 0xFB01 sorts after 0xD83D.
    const v = { "\u{1F600}": 1, "\uFB01": 2 }
    expect(ok(v)).toBe('{"\uFB01":2,"\u{1F600}":1}')
    expect(encodeCanonical(v, "utf16")).toBe('{"\u{1F600}":1,"\uFB01":2}')
  })
  it("has no whitespace and escapes only what §10 lists", () => {
    expect(ok({ b: [1, { a: null }], a: "\"\\\b\f\n\r\t\u0001\u001f\u007f/é" })).toBe(
      '{"a":"\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u007f/é","b":[1,{"a":null}]}'
    )
  })
  it("writes integers in minimal form", () => expect(ok([0, -0, -1, 2 ** 53 - 1, -(2 ** 53 - 1)])).toBe("[0,0,-1,9007199254740991,-9007199254740991]"))
  it("refuses non-integers and integers outside ±(2^53−1)", () => {
    for (const n of [1.5, 2 ** 53, -(2 ** 53), NaN, Infinity]) expect(Either.isLeft(canonical({ n }))).toBe(true)
  })
  it("refuses lone surrogates in strings and member names, and names the path", () => {
    const r = canonical({ a: [1, "x\uD800"] })
    expect(Either.isLeft(r) && r.left.path).toBe("$.a[1]")
    expect(Either.isLeft(canonical({ "\uDC00": 1 }))).toBe(true)
    expect(Either.isLeft(canonical("\uDC00\uD800"))).toBe(true)
    expect(Either.isRight(canonical("\uD83C\uDF89"))).toBe(true)
  })
  it("refuses what is not JSON", () => {
    for (const v of [undefined, () => 1, 1n, new Date(0), Symbol("x")]) expect(Either.isLeft(canonical({ v }))).toBe(true)
  })
})

describe("readCanonical (grant tokens are one byte form)", () => {
  it("accepts exactly the canonical text", () => expect(Either.isRight(readCanonical('{"a":1,"b":[true]}'))).toBe(true))
  for (const text of ['{"b":1,"a":2}', '{"a": 1}', '{"a":1.0}', '{"a":1e2}', '{"a":-0}', '{"a":"\\u0041"}', '{"a":1,"a":1}', '{"a":"\\ud800"}', '[1]\n']) {
    it(`refuses ${JSON.stringify(text)}`, () => expect(Either.isLeft(readCanonical(text))).toBe(true))
  }
})

const proposal = {
  id: "p_1",
  capability: "shop.order",
  summary: "Order",
  effects: [{ op: "create", target: "order/1" }],
  risk: "low",
  undo: { window: 60 },
  expires: 1790000600
}

describe("proposal hash (§5.1)", () => {
  const h = Either.getOrThrow(proposalHash(proposal))
  it("is b64url(sha256(canonical(proposal without hash and data)))", () => {
    expect(h).toBe(hashB64(new TextEncoder().encode(ok(proposal))))
  })
  it("ignores hash and data, even floats in data", () => {
    expect(Either.getOrThrow(proposalHash({ ...proposal, hash: "x", data: { n: 1.5 } }))).toBe(h)
  })
  it("covers every other member", () => {
    for (const patch of [{ summary: "Order!" }, { risk: "high" }, { undo: null }, { expires: 1 }, { uses: { spend: { amount: 1 } } }, { extra: 1 }]) {
      expect(Either.getOrThrow(proposalHash({ ...proposal, ...patch }))).not.toBe(h)
    }
  })
  it("a float in a hashed field leaves the proposal without a hash", () =>
    expect(Either.isLeft(proposalHash({ ...proposal, effects: [{ op: "update", target: "x", to: 1.5 }] }))).toBe(true))
  it("decodeProposal checks shape and hash", () => {
    expect(Either.isRight(decodeProposal({ ...proposal, hash: h }))).toBe(true)
    const bad = [
      { ...proposal, hash: "wrong" },
      { ...proposal, hash: h, risk: "extreme" },
      { ...proposal, risk: undefined, hash: h },
      { ...proposal, hash: h, uses: { Spend: { amount: 1 } } },
      { ...proposal, hash: h, effects: [{ op: "charge", target: "x" }] },
      { ...proposal, hash: h, effects: [{ op: "update", target: "x", to: { a: 1 } }] }
    ]
    for (const p of bad) expect(Either.isLeft(decodeProposal(p))).toBe(true)
  })
  it("a COMMIT hash mismatch is conflict and does not reveal the hash (§4.4)", () => {
    expect(Either.isRight(checkCommitHash({ hash: h }, h))).toBe(true)
    const r = checkCommitHash({ hash: h }, "other")
    expect(Either.isLeft(r) && r.left.reason).toBe("conflict")
    expect(Either.isLeft(r) && r.left.message.includes(h)).toBe(false)
  })
})
