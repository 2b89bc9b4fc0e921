// Every caveat of SPEC §6.3, its satisfied and unsatisfied cases, and every malformed-value rule
// (each fails closed as `forbidden`). Grants are real signed tokens; `rawRoot` signs caveats the
// issuing API would refuse.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { caveatProblem, matchesCapability } from "../../src/yea/caveat.js"
import { decimal } from "../../src/yea/measure.js"
import { ask, blockId, check, commit, issue, rawRoot, NOW } from "./_helpers.js"
import { decodeGrant } from "../../src/yea/grant.js"
import { Either } from "effect"

const askWith = (caveats: ReadonlyArray<unknown>, request = ask()) => check({ grants: [rawRoot(caveats)], request }).code
const commitWith = (caveats: ReadonlyArray<unknown>, proposal: Parameters<typeof commit>[0] = {}) =>
  check({ grants: [rawRoot(caveats)], request: commit(proposal) }).code

describe("svc", () => {
  it("is satisfied when the service is listed", () => expect(askWith([{ svc: ["a.example", "shop.example"] }])).toBe("ok"))
  it("is forbidden when it is not", () => expect(askWith([{ svc: ["a.example"] }])).toBe("forbidden"))
  it("covers a service only if every svc list names it", () =>
    expect(askWith([{ svc: ["shop.example"] }, { svc: ["a.example"] }])).toBe("forbidden"))
  it("a string instead of a list fails closed (no substring match)", () => expect(askWith([{ svc: "shop.example" }])).toBe("forbidden"))
  it("a list with a non-string fails closed", () => expect(askWith([{ svc: ["shop.example", 1] }])).toBe("forbidden"))
})

describe("verbs", () => {
  it("is satisfied when the verb is listed", () => expect(askWith([{ verbs: ["ASK"] }])).toBe("ok"))
  it("is forbidden when it is not", () => expect(askWith([{ verbs: ["INTENT", "COMMIT"] }])).toBe("forbidden"))
  it("a string instead of a list fails closed", () => expect(askWith([{ verbs: "ASK" }])).toBe("forbidden"))
  it("null fails closed", () => expect(askWith([{ verbs: null }])).toBe("forbidden"))
})

describe("can", () => {
  it("matches exactly, by prefix and *", () => {
    expect(matchesCapability("shop.search", "shop.search")).toBe(true)
    expect(matchesCapability("shop.*", "shop.search")).toBe(true)
    expect(matchesCapability("*", "anything")).toBe(true)
    expect(matchesCapability("shop.s", "shop.search")).toBe(false)
    expect(matchesCapability("shop.*", "shopping.search")).toBe(false)
    expect(matchesCapability("sh*p.search", "shop.search")).toBe(false)
  })
  it("is satisfied by a matching pattern", () => expect(askWith([{ can: ["cal.*", "shop.*"] }])).toBe("ok"))
  it("is forbidden when nothing matches", () => expect(askWith([{ can: ["shop.order"] }])).toBe("forbidden"))
  it("an object instead of a list fails closed", () => expect(askWith([{ can: { "shop.*": true } }])).toBe("forbidden"))
  it("UNDO is checked against the capability of the receipt being undone", () => {
    const grants = [rawRoot([{ can: ["shop.order"] }, { verbs: ["UNDO"] }])]
    expect(check({ grants, request: { service: "shop.example", verb: "UNDO", capability: "shop.order" } }).code).toBe("ok")
    expect(check({ grants, request: { service: "shop.example", verb: "UNDO", capability: "shop.refund" } }).code).toBe("forbidden")
  })
})

describe("exp and nbf", () => {
  it("exp holds while now < exp", () => {
    expect(askWith([{ exp: NOW + 1 }])).toBe("ok")
    expect(askWith([{ exp: NOW }])).toBe("forbidden")
  })
  it("nbf holds once now >= nbf", () => {
    expect(askWith([{ nbf: NOW }])).toBe("ok")
    expect(askWith([{ nbf: NOW + 1 }])).toBe("forbidden")
  })
  it("non-integer values fail closed", () => {
    expect(askWith([{ exp: "tomorrow" }])).toBe("forbidden")
    expect(askWith([{ exp: null }])).toBe("forbidden")
    expect(askWith([{ nbf: true }])).toBe("forbidden")
    expect(askWith([{ nbf: [0] }])).toBe("forbidden")
  })
  it("time comes from the Clock", () => {
    const grants = [rawRoot([{ exp: NOW + 10 }])]
    expect(check({ grants, request: ask(), now: NOW + 9 }).code).toBe("ok")
    expect(check({ grants, request: ask(), now: NOW + 10 }).code).toBe("forbidden")
  })
})

describe("only", () => {
  it("is satisfied by the named proposal hash", () => expect(commitWith([{ only: "H" }], { hash: "H" })).toBe("ok"))
  it("refuses any other proposal", () => expect(commitWith([{ only: "H" }], { hash: "H2" })).toBe("forbidden"))
  it("is ignored for other verbs", () => expect(askWith([{ only: "H" }])).toBe("ok"))
  it("a non-string fails closed, for every verb", () => {
    expect(commitWith([{ only: 1 }])).toBe("forbidden")
    expect(askWith([{ only: ["H"] }])).toBe("forbidden")
  })
})

describe("risk", () => {
  it("allows a proposal risk at or below the level", () => {
    expect(commitWith([{ risk: "medium" }], { risk: "low" })).toBe("ok")
    expect(commitWith([{ risk: "medium" }], { risk: "medium" })).toBe("ok")
    expect(commitWith([{ risk: "high" }], { risk: "high" })).toBe("ok")
  })
  it("asks for consent above it (soft)", () => {
    expect(commitWith([{ risk: "low" }], { risk: "medium" })).toBe("consent_required")
    expect(commitWith([{ risk: "medium" }], { risk: "high" })).toBe("consent_required")
  })
  it("a proposal risk that is not a level fails closed", () => {
    expect(commitWith([{ risk: "high" }], { risk: "critical" })).toBe("forbidden")
    expect(commitWith([{ risk: "high" }], { risk: "toString" })).toBe("forbidden")
    expect(commitWith([{ risk: "high" }], { risk: undefined })).toBe("forbidden")
  })
  it("a level that is not low/medium/high fails closed (no prototype names), for every verb", () => {
    expect(commitWith([{ risk: "toString" }], { risk: "high" })).toBe("forbidden")
    expect(commitWith([{ risk: "extreme" }], { risk: "low" })).toBe("forbidden")
    expect(askWith([{ risk: "constructor" }])).toBe("forbidden")
  })
  it("is ignored for other verbs", () => expect(askWith([{ risk: "low" }])).toBe("ok"))
})

const spend = (amount: number, scale?: number, unit?: string) => ({
  amount,
  ...(scale !== undefined ? { scale } : {}),
  ...(unit !== undefined ? { unit } : {})
})

describe("each", () => {
  const each = { each: { of: "spend", max: 3000, scale: 2, unit: "USD" } }
  it("allows a value at the limit, across scales", () => {
    expect(commitWith([each], { uses: { spend: spend(3000, 2, "USD") } })).toBe("ok")
    expect(commitWith([each], { uses: { spend: spend(30, 0, "USD") } })).toBe("ok")
    expect(commitWith([each], { uses: { spend: spend(30000, 3, "USD") } })).toBe("ok")
  })
  it("asks for consent over it (soft)", () => {
    const r = check({ grants: [rawRoot([each])], request: commit({ uses: { spend: spend(30001, 3, "USD") } }) })
    expect(r.code).toBe("consent_required")
    expect(r.error?.need).toEqual([each])
  })
  it("a unit mismatch, either way, asks for consent", () => {
    expect(commitWith([each], { uses: { spend: spend(1, 2, "EUR") } })).toBe("consent_required")
    expect(commitWith([each], { uses: { spend: spend(1, 2) } })).toBe("consent_required")
    expect(commitWith([{ each: { of: "emails", max: 5 } }], { uses: { emails: spend(1, 0, "msg") } })).toBe("consent_required")
  })
  it("binds only what is reported (own members only)", () => {
    expect(commitWith([each], { uses: { emails: spend(1000) } })).toBe("ok")
    expect(commitWith([each], { uses: {} })).toBe("ok")
    expect(commitWith([each], {})).toBe("ok")
    expect(commitWith([{ each: { of: "constructor", max: 0 } }], { uses: { emails: spend(1) } })).toBe("ok")
  })
  it("is ignored for other verbs", () => expect(askWith([each])).toBe("ok"))
})

describe("total", () => {
  const total = { total: { of: "spend", max: 5000, scale: 2, unit: "USD" } }
  const grant = rawRoot([total])
  const id = Either.getOrThrow(decodeGrant(grant)).root.id
  const usedOf = (units: bigint, scale: number) => (b: string, of: string) =>
    Effect.succeed(b === id && of === "spend" ? decimal(units, scale) : decimal(0))
  it("allows used + this ≤ max, looked up by block id and measure", () => {
    expect(check({ grants: [grant], request: commit({ uses: { spend: spend(2000, 2, "USD") } }), usedOf: usedOf(30n, 0) }).code).toBe("ok")
  })
  it("asks for consent when used + this > max", () => {
    const r = check({ grants: [grant], request: commit({ uses: { spend: spend(2001, 2, "USD") } }), usedOf: usedOf(3000n, 2) })
    expect(r.code).toBe("consent_required")
    expect(r.error?.need).toEqual([total])
  })
  it("a unit mismatch asks for consent", () =>
    expect(commitWith([total], { uses: { spend: spend(1, 0, "EUR") } })).toBe("consent_required"))
  it("binds only what is reported", () => expect(commitWith([total], { uses: { emails: spend(9) } })).toBe("ok"))
  it("is ignored for other verbs", () => expect(askWith([total])).toBe("ok"))
  it("the block id is sha256 of the block's signature", () => expect(id).toBe(blockId(Either.getOrThrow(decodeGrant(grant)).root.s)))
})

describe("malformed limits fail closed", () => {
  const bad: ReadonlyArray<[string, unknown]> = [
    ["scale over 18", { of: "spend", max: 1, scale: 19 }],
    ["negative scale", { of: "spend", max: 1, scale: -1 }],
    ["max not an integer", { of: "spend", max: "1" }],
    ["negative max", { of: "spend", max: -1 }],
    ["missing max", { of: "spend" }],
    ["missing of", { max: 1 }],
    ["bad measure name", { of: "Spend", max: 1 }],
    ["of not a string", { of: 1, max: 1 }],
    ["unit with a space", { of: "spend", max: 1, unit: "US D" }],
    ["empty unit", { of: "spend", max: 1, unit: "" }],
    ["unit of 33 characters", { of: "spend", max: 1, unit: "U".repeat(33) }],
    ["the old currency shape", { of: "spend", max: 1, currency: "USD" }],
    ["a list", [{ of: "spend", max: 1 }]],
    ["null", null]
  ]
  for (const [name, limit] of bad) {
    it(`${name} (each, total; COMMIT and ASK)`, () => {
      expect(commitWith([{ each: limit }], { uses: { spend: spend(0) } })).toBe("forbidden")
      expect(commitWith([{ total: limit }], { uses: { spend: spend(0) } })).toBe("forbidden")
      expect(askWith([{ each: limit }])).toBe("forbidden")
    })
  }
  it("numbers with no canonical form are malformed too (they cannot even be signed into a grant)", () => {
    expect(caveatProblem({ each: { of: "spend", max: 1, scale: 1.5 } })).toBeDefined()
    expect(caveatProblem({ total: { of: "spend", max: 1.5 } })).toBeDefined()
    expect(caveatProblem({ each: { of: "spend", max: 2 ** 53 } })).toBeDefined()
    expect(caveatProblem({ exp: 1.5 })).toBeDefined()
  })
  it("edge values are well-formed", () => {
    expect(caveatProblem({ each: { of: "a", max: 0 } })).toBeUndefined()
    expect(caveatProblem({ each: { of: "a".repeat(64), max: 2 ** 53 - 1, scale: 18, unit: "U".repeat(32) } })).toBeUndefined()
    expect(caveatProblem({ each: { of: "a".repeat(65), max: 0 } })).toBeDefined()
  })
})

describe("malformed uses in the proposal fail closed under any limit", () => {
  const each = { each: { of: "spend", max: 3000, scale: 2, unit: "USD" } }
  const bad: ReadonlyArray<[string, unknown]> = [
    ["null", null],
    ["a list", [spend(1)]],
    ["bad measure name", { "Bad Name": spend(1) }],
    ["negative amount on another measure", { emails: spend(-1) }],
    ["amount past 2^53-1", { spend: spend(2 ** 53, 0, "USD") }],
    ["scale 19", { spend: spend(1, 19, "USD") }],
    ["null quantity", { spend: null }],
    ["extra key", { spend: { amount: 1, currency: "USD" } }]
  ]
  for (const [name, uses] of bad) {
    it(name, () => {
      expect(commitWith([each], { uses })).toBe("forbidden")
      expect(commitWith([{ total: each.each }], { uses })).toBe("forbidden")
    })
  }
})

describe("caveat shape", () => {
  it("unknown caveats fail closed", () => {
    expect(askWith([{ region: "eu" }])).toBe("forbidden")
    expect(askWith([{ per: { currency: "USD", max: 1 } }])).toBe("forbidden")
  })
  it("a caveat is a single-key object", () => {
    expect(askWith([null])).toBe("forbidden")
    expect(askWith(["svc"])).toBe("forbidden")
    expect(askWith([{}])).toBe("forbidden")
    expect(askWith([[{ svc: ["shop.example"] }]])).toBe("forbidden")
    expect(askWith([{ svc: ["shop.example"], verbs: ["ASK"] }])).toBe("forbidden")
  })
  it("forbidden carries the failing caveats as need", () => {
    const r = check({ grants: [rawRoot([{ svc: ["shop.example"] }, { region: "eu" }])], request: ask() })
    expect(r.code).toBe("forbidden")
    expect(r.error?.need).toEqual([{ region: "eu" }])
  })
  it("a hard failure beats a soft one in the same grant", () =>
    expect(commitWith([{ risk: "low" }, { svc: ["x.example"] }], { risk: "high" })).toBe("forbidden"))
  it("the issuing API refuses caveats that could never pass", () => {
    expect(() => issue([{ svc: "shop.example" }])).toThrow()
    expect(() => issue([{ region: "eu" }])).toThrow()
  })
})

describe("replayed COMMIT (§4.4)", () => {
  it("does not re-evaluate each, total or risk", () => {
    const grants = [rawRoot([{ risk: "low" }, { each: { of: "spend", max: 1 } }])]
    const request = { ...commit({ risk: "high", uses: { spend: spend(5) } }), replay: true }
    expect(check({ grants, request }).code).toBe("ok")
    expect(check({ grants, request: { ...request, replay: false } }).code).toBe("consent_required")
  })
  it("still checks everything else", () => {
    const grants = [rawRoot([{ only: "H" }])]
    expect(check({ grants, request: { ...commit({ hash: "X" }), replay: true } }).code).toBe("forbidden")
  })
})
