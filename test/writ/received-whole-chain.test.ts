// `verifyChain` takes a chain received whole (the bytes of its JSON array, as a
// chain file or a token carries it) and checks every writ off that one strict reading, as the
// executor checks a call's chain. It answers exactly as verifying the strictly read value does:
// the same acceptance, the same reason at the same path; a reading error (section 1.1) is its own
// reason at the chain; and the bytes are bounded before they are read.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Either, Option } from "effect"
import fc from "fast-check"
import { parseJson } from "../../src/kernel/json.js"
import { VerificationCache, type VerificationCacheShape } from "../../src/kernel/verification-cache.js"
import { RECEIVED_CHAIN_MAX_BYTES, verifyChain } from "../../src/writ/chain.js"
import { WritError } from "../../src/writ/reason.js"
import { Received } from "../../src/writ/verify.js"
import { canon, child, key, type Obj, writ } from "../support/writ-builders.js"

const KEYS = Array.from({ length: 5 }, (_, i) => key(`whole-chain-${i}`))
const BND: Obj = { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 }, uses: { t: "count", v: 3 } }
const chainOf = (n: number, label: string): Array<Obj> => {
  const out: Array<Obj> = [writ(`${label}/0`, { iss: KEYS[0], hld: KEYS[1].did, bnd: BND, exp: 1_900_000_000 })]
  for (let i = 1; i < n; i++) out.push(child(`${label}/${i}`, out[i - 1], KEYS[i], KEYS[i + 1].did, { amount: { t: "max", v: 60000 - i } }))
  return out
}
const textOf = (chain: ReadonlyArray<Obj>) => `[${chain.map(canon).join(",")}]`

/** `accept N` (the chain's length), or the reason and path; never a defect. */
const outcome = (input: unknown, cache?: VerificationCacheShape): string => {
  const eff = verifyChain(input)
  const exit = Effect.runSyncExit(cache === undefined ? eff : Effect.provideService(eff, VerificationCache, cache))
  if (Exit.isSuccess(exit)) return `accept ${exit.value.length}`
  const f = Cause.failureOption(exit.cause)
  if (Option.isNone(f) || !(f.value instanceof WritError)) throw new Error(`defect: ${Cause.pretty(exit.cause)}`)
  return `${f.value.reason} ${f.value.path ?? ""}`
}

/** What the value path answers: read strictly (the reading's reason at the chain), then verified. */
const byValue = (text: string, cache?: VerificationCacheShape): string =>
  Either.match(parseJson(text, { maxDepth: 64, integersOnly: true }), {
    onLeft: (e) => `${e.reason} chain`,
    onRight: (v) => outcome(v, cache)
  })

describe("verifyChain on a chain received whole", () => {
  const text = textOf(chainOf(3, "whole/a"))

  it("accepts the bytes and the text alike, and answers as the strictly read value does", () => {
    expect(outcome(new Received(Buffer.from(text)))).toBe("accept 3")
    expect(outcome(new Received(text))).toBe("accept 3")
    expect(byValue(text)).toBe("accept 3")
    // Pretty-printed: not canonical as received, so each writ's canonical bytes are rebuilt.
    const pretty = JSON.stringify(JSON.parse(text), null, 2)
    expect(outcome(new Received(pretty))).toBe("accept 3")
  })

  it("refuses what is not a chain, with the reason of section 4 or 1.1 at the chain", () => {
    const cases: ReadonlyArray<[string, string]> = [
      ["{}", "malformed chain"],
      ["[]", "malformed chain"],
      ["[1]", "malformed chain[0]"],
      [`[${Array.from({ length: 9 }, () => "{}").join(",")}]`, "too_large chain"],
      ['[{"a":1,"a":2}]', "noncanonical chain"],
      ["[1.5]", "noncanonical chain"],
      ["[", "noncanonical chain"]
    ]
    for (const [input, expected] of cases) {
      expect(outcome(new Received(input))).toBe(expected)
      expect(byValue(input)).toBe(expected)
    }
    // Bounded before it is read: one byte over the bound is too_large, unread.
    const over = "[" + " ".repeat(RECEIVED_CHAIN_MAX_BYTES - 1) + "]"
    expect(outcome(new Received(over))).toBe("too_large chain")
  })

  it("gives the value path's answer for any changed byte, with and without a cache (fast-check, fixed seed)", () => {
    const cache = VerificationCache.make({ maxBytes: 1 << 20 })
    const bytes = Buffer.from(text)
    fc.assert(
      fc.property(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 32, max: 126 }), (at, ch) => {
        const changed = Buffer.from(bytes)
        changed[at] = ch
        const expected = byValue(changed.toString("latin1"))
        expect(outcome(new Received(changed))).toBe(expected)
        expect(outcome(new Received(changed), cache)).toBe(expected)
      }),
      { seed: 13, numRuns: 400 }
    )
  })

  it("is held by the cache once seen twice, as a call's chain is: the same bytes again are given back", () => {
    const cache = VerificationCache.make({ maxBytes: 1 << 20 })
    const judged = () => Effect.runSync(cache.stats).entries
    expect(outcome(new Received(text), cache)).toBe("accept 3")
    expect(outcome(new Received(text), cache)).toBe("accept 3")
    const entries = judged()
    // A third sighting adds nothing: it is answered from what is held.
    expect(outcome(new Received(text), cache)).toBe("accept 3")
    expect(judged()).toBe(entries)
    // One changed signature byte is not the held chain: refused as without the cache.
    const sig = String(chainOf(3, "whole/a")[2].sig)
    const at = text.lastIndexOf(sig) + 10
    const tampered = text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1)
    expect(outcome(new Received(tampered), cache)).toBe(byValue(tampered))
    expect(outcome(new Received(tampered), cache)).not.toMatch(/^accept/)
  })
})
