// The wire schemas agree with the hand-written validators that run on the hot path, and UNDO is
// authorized against the receipt's capability and principal.
import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Caveat, caveatProblem } from "../../src/yea/caveat.js"
import { Quantity, isQuantity, isUses, Uses } from "../../src/yea/measure.js"
import { Receipt, undoRequest } from "../../src/yea/receipt.js"
import { check, issue, principalKey, rawBlock, rawToken, rootPayload, MALLORY, malloryKey } from "./_helpers.js"
import { depth } from "../support/depth.js"

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, true, false, 0, -1, 1, 18, 19, 2 ** 53 - 1, 2 ** 53, 1.5, "", "USD", "spend", "low", "toString", "a b"),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("amount", "scale", "unit", "of", "max", "svc", "exp", "risk", "each", "x"), tie("value"), { maxKeys: 4 })
  )
})).value

describe("schemas agree with the validators", () => {
  it("Quantity", () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(Either.isRight(Schema.decodeUnknownEither(Quantity)(v))).toBe(isQuantity(v))
      }),
      { numRuns: depth(1000), seed: 11 }
    )
  })
  it("Caveat", () => {
    fc.assert(
      fc.property(json, (v) => {
        const bySchema = Either.isRight(Schema.decodeUnknownEither(Caveat)(v, { onExcessProperty: "error" }))
        expect(bySchema).toBe(caveatProblem(v) === undefined)
      }),
      { numRuns: depth(1000), seed: 12 }
    )
  })
  it("Uses", () => {
    for (const v of [{}, { spend: { amount: 1 } }, { Spend: { amount: 1 } }, null, [], { a: { amount: 1, x: 1 } }]) {
      expect(Either.isRight(Schema.decodeUnknownEither(Uses)(v))).toBe(isUses(v))
    }
  })
})

describe("UNDO (§4.5, §6.3)", () => {
  const receipt = Schema.decodeUnknownSync(Receipt)({
    id: "r_1",
    proposal: "p_1",
    capability: "shop.order",
    summary: "Order",
    at: 1,
    effects: [{ op: "create", target: "order/1" }],
    undo: { until: 100 }
  })
  const grant = issue([{ can: ["shop.order"] }, { verbs: ["UNDO"] }])
  it("checks can against the receipt's capability", () => {
    expect(check({ grants: [grant], request: undoRequest(receipt, "shop.example") }).code).toBe("ok")
    expect(check({ grants: [grant], request: undoRequest({ capability: "shop.refund" }, "shop.example") }).code).toBe("forbidden")
  })
  it("needs a grant rooted in the principal of the original commit", () => {
    const other = rawToken([rawBlock({ ...rootPayload([]), iss: malloryKey }, MALLORY)])
    const trusted = [principalKey, malloryKey]
    expect(check({ grants: [other], request: undoRequest(receipt, "shop.example"), trusted, principal: principalKey }).code).toBe("forbidden")
    expect(check({ grants: [grant], request: undoRequest(receipt, "shop.example"), trusted, principal: principalKey }).code).toBe("ok")
  })
})
