// Grant tokens and chains (SPEC §6.2, §6.4, §6.6): strict decoding, each verification step's
// refusal, delegation, "any single grant authorizes", and delegation only ever narrowing.
import { Effect, Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { utf8 } from "../../src/kernel/canonical.js"
import { delegateGrant, decodeGrant } from "../../src/yea/grant.js"
import {
  AGENT,
  MALLORY,
  PRINCIPAL,
  SUBAGENT,
  agentKey,
  ask,
  check,
  commit,
  delegate,
  issue,
  malloryKey,
  principalKey,
  rawBlock,
  rawRoot,
  rawToken,
  rootPayload,
  subagentKey,
  withSigner,
  NOW
} from "./_helpers.js"
import { depth } from "../support/depth.js"

const base = [{ svc: ["shop.example"] }, { can: ["shop.*"] }]
const tokenBody = (t: string) => Buffer.from(t.slice(4), "base64url").toString("utf8")
const fromText = (json: string) => "pg1." + encodeBase64url(utf8(json))

describe("issuing and decoding", () => {
  it("round-trips a root grant: iss, sub, caveats, ids", () => {
    const t = issue(base)
    const g = Either.getOrThrow(decodeGrant(t))
    expect(g.principal).toBe(principalKey)
    expect(g.holder).toBe(agentKey)
    expect(g.root.caveats).toEqual(base)
    expect(g.id).toBe(g.root.id)
    expect(g.root.iat).toBe(NOW)
    expect(check({ grants: [t], request: ask() }).code).toBe("ok")
  })
  it("delegation appends a block linked by prev and signed by the holder", () => {
    const t = issue(base)
    const d = delegate(t, AGENT, [{ verbs: ["ASK"] }])
    const g = Either.getOrThrow(decodeGrant(d))
    expect(g.blocks.length).toBe(2)
    expect(g.delegations[0].prev).toBe(g.root.id)
    expect(g.holder).toBe(subagentKey)
    expect(check({ grants: [d], request: ask(), proofKey: subagentKey }).code).toBe("ok")
    expect(check({ grants: [d], request: ask(), proofKey: agentKey }).code).toBe("unauthorized")
  })
  it("only the holder can delegate", () => {
    const t = issue(base)
    const r = withSigner(MALLORY, Effect.either(delegateGrant(t, { sub: malloryKey, caveats: [] })))
    expect(Either.isLeft(r) && r.left.reason).toBe("unauthorized")
  })
  it("delegations chain to any depth", () => {
    let t = issue(base)
    t = delegate(t, AGENT, [], subagentKey)
    t = delegate(t, SUBAGENT, [], malloryKey)
    expect(check({ grants: [t], request: ask(), proofKey: malloryKey }).code).toBe("ok")
  })
})

describe("§6.4 step 1: the token is decoded strictly (unauthorized)", () => {
  const good = issue(base)
  const body = tokenBody(good)
  const cases: ReadonlyArray<[string, unknown]> = [
    ["not a string", 42],
    ["another prefix", "pg2." + good.slice(4)],
    ["no prefix", good.slice(4)],
    ["padded base64url", good + "="],
    ["whitespace in the JSON", fromText(body.replace(",", ", "))],
    ["members out of order", fromText(body.replace('{"p":', '{"s":"x","p":').replace(/,"s":"[^"]*"}\]$/, "}]"))],
    ["an empty list", fromText("[]")],
    ["an object, not a list", fromText(body.slice(1, -1))],
    ["not JSON", fromText("[{")],
    ["a block without s", fromText(`[{"p":${JSON.stringify(JSON.parse(body)[0].p)}}]`)]
  ]
  for (const [name, token] of cases) {
    it(name, () => expect(check({ grants: [token], request: ask() }).code).toBe("unauthorized"))
  }
  it("standard-alphabet base64 is refused", () => {
    // "???" puts a '?' (0x3F) at a 3-byte boundary, whose last sextet is 63: `_` in base64url,
    // `/` in standard base64, so the two alphabets spell this token differently.
    const t = rawToken([rawBlock(rootPayload(base, { nonce: "???" }), PRINCIPAL)])
    expect(t.slice(4)).toMatch(/_/)
    expect(check({ grants: [t], request: ask() }).code).toBe("ok")
    const std = "pg1." + t.slice(4).replace(/-/g, "+").replace(/_/g, "/")
    expect(check({ grants: [std], request: ask() }).code).toBe("unauthorized")
  })
  it("numbers must be written canonically (1.0, 1e9, -0 are refused even if the signature matches)", () => {
    for (const spelled of ["1789999900.0", "1.7899999e9"]) {
      const t = fromText(body.replace(`"iat":${NOW}`, `"iat":${spelled}`))
      expect(check({ grants: [t], request: ask() }).code).toBe("unauthorized")
    }
    const zero = rawToken([rawBlock(rootPayload([{ nbf: 0 }]), PRINCIPAL)])
    expect(check({ grants: [zero], request: ask() }).code).toBe("ok")
    expect(check({ grants: [fromText(tokenBody(zero).replace('"nbf":0', '"nbf":-0'))], request: ask() }).code).toBe("unauthorized")
  })
  it("a signature in non-canonical base64url is refused, though it decodes to the same bytes", () => {
    const g = JSON.parse(body)
    const s: string = g[0].s
    const last = s[s.length - 1]
    const twin = s.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) + 1) // same bytes, non-zero trailing bits
    expect(Buffer.from(twin, "base64url").equals(Buffer.from(s, "base64url"))).toBe(true)
    const t = fromText(body.replace(s, twin))
    expect(check({ grants: [t], request: ask() }).code).toBe("unauthorized")
  })
  const payloadCases: ReadonlyArray<[string, Record<string, unknown>]> = [
    ["iss not a key", { iss: "ed25519:abc" }],
    ["iss not a string", { iss: 1 }],
    ["sub not a key", { sub: "agent" }],
    ["iat missing", { iat: undefined }],
    ["iat a string", { iat: "1" }],
    ["nonce missing", { nonce: undefined }],
    ["nonce not a string", { nonce: 3 }],
    ["caveats not a list", { caveats: { svc: ["shop.example"] } }]
  ]
  for (const [name, patch] of payloadCases) {
    it(`malformed root: ${name}`, () => {
      const p: Record<string, unknown> = rootPayload(base, patch)
      for (const k of Object.keys(p)) if (p[k] === undefined) delete p[k]
      const t = rawToken([rawBlock(p, PRINCIPAL)])
      expect(check({ grants: [t], request: ask() }).code).toBe("unauthorized")
    })
  }
  it("malformed delegation: no prev, prev not a string, no iat", () => {
    const root = rawBlock(rootPayload(base), PRINCIPAL)
    const id = Either.getOrThrow(decodeGrant(rawToken([root]))).root.id
    for (const p of [
      { caveats: [], iat: NOW, sub: subagentKey },
      { caveats: [], iat: NOW, prev: 0, sub: subagentKey },
      { caveats: [], prev: id, sub: subagentKey }
    ]) {
      const t = rawToken([root, rawBlock(p, AGENT)])
      expect(check({ grants: [t], request: ask(), proofKey: subagentKey }).code).toBe("unauthorized")
    }
    const ok = rawToken([root, rawBlock({ caveats: [], iat: NOW, prev: id, sub: subagentKey }, AGENT)])
    expect(check({ grants: [ok], request: ask(), proofKey: subagentKey }).code).toBe("ok")
  })
})

describe("§6.4 steps 2–5 (unauthorized)", () => {
  it("step 2: a tampered payload no longer verifies", () => {
    const b = rawBlock(rootPayload(base), PRINCIPAL)
    const t = rawToken([{ ...b, p: rootPayload([]) }])
    expect(check({ grants: [t], request: ask() }).code).toBe("unauthorized")
  })
  it("step 2: a root signed by someone other than iss", () => {
    const t = rawToken([rawBlock(rootPayload(base), MALLORY)])
    expect(check({ grants: [t], request: ask() }).code).toBe("unauthorized")
  })
  it("step 2: a delegation signed by someone other than the previous sub", () => {
    const root = rawBlock(rootPayload(base), PRINCIPAL)
    const id = Either.getOrThrow(decodeGrant(rawToken([root]))).root.id
    const t = rawToken([root, rawBlock({ caveats: [], iat: NOW, prev: id, sub: malloryKey }, MALLORY)])
    expect(check({ grants: [t], request: ask(), proofKey: malloryKey }).code).toBe("unauthorized")
  })
  it("step 3: prev must name the previous block", () => {
    const root = rawBlock(rootPayload(base), PRINCIPAL)
    const t = rawToken([root, rawBlock({ caveats: [], iat: NOW, prev: "x".repeat(43), sub: subagentKey }, AGENT)])
    expect(check({ grants: [t], request: ask(), proofKey: subagentKey }).code).toBe("unauthorized")
  })
  it("step 3: blocks cannot be spliced from another grant", () => {
    const a = delegate(issue(base), AGENT, [])
    const b = issue([{ svc: ["other.example"] }])
    const ga = JSON.parse(tokenBody(a))
    const gb = JSON.parse(tokenBody(b))
    const spliced = rawToken([gb[0], ga[1]])
    expect(check({ grants: [spliced], request: ask(), proofKey: subagentKey }).code).toBe("unauthorized")
  })
  it("step 4: the root issuer must be trusted", () => {
    const t = issue(base)
    expect(check({ grants: [t], request: ask(), trusted: [malloryKey] }).code).toBe("unauthorized")
    expect(check({ grants: [t], request: ask(), trusted: [] }).code).toBe("unauthorized")
  })
  it("step 5: the holder must be the proof key", () => {
    expect(check({ grants: [issue(base)], request: ask(), proofKey: malloryKey }).code).toBe("unauthorized")
  })
})

describe("§6.6: any single grant authorizes", () => {
  const good = issue(base)
  const wrongSvc = issue([{ svc: ["x.example"] }])
  const lowRisk = issue([{ risk: "low" }])
  it("a valid grant after refused ones authorizes, and says which", () => {
    const r = check({ grants: ["garbage", wrongSvc, good], request: ask() })
    expect(r.code).toBe("ok")
    expect(r.index).toBe(2)
  })
  it("with none: consent_required beats forbidden beats unauthorized", () => {
    expect(check({ grants: ["garbage", wrongSvc, lowRisk], request: commit({ risk: "high" }) }).code).toBe("consent_required")
    expect(check({ grants: ["garbage", wrongSvc], request: commit({ risk: "high" }) }).code).toBe("forbidden")
    expect(check({ grants: ["garbage"], request: ask() }).code).toBe("unauthorized")
  })
  it("no grants at all is unauthorized", () => expect(check({ grants: [], request: ask() }).code).toBe("unauthorized"))
  it("grants from two principals are judged separately, not merged", () => {
    // One grant allows the service, another the capability; neither allows both.
    const a = issue([{ svc: ["shop.example"] }, { can: ["cal.*"] }])
    const b = issue([{ svc: ["cal.example"] }, { can: ["shop.*"] }])
    expect(check({ grants: [a, b], request: ask() }).code).toBe("forbidden")
  })
  it("a principal binding (§4.4, §4.5) refuses grants of another principal", () => {
    const other = rawToken([rawBlock({ ...rootPayload(base), iss: malloryKey }, MALLORY)])
    expect(check({ grants: [other], request: ask(), trusted: [malloryKey, principalKey] }).code).toBe("ok")
    expect(check({ grants: [other], request: ask(), trusted: [malloryKey, principalKey], principal: principalKey }).code).toBe("forbidden")
    expect(check({ grants: [other, issue(base)], request: ask(), trusted: [malloryKey, principalKey], principal: principalKey }).index).toBe(1)
  })
})

// ---------------------------------------------------------------------------------------------
// Delegation only ever narrows (property): a random extra block never authorizes a request the
// shorter grant refused, and never turns a refusal into a softer one.

const services = ["shop.example", "cal.example"]
const capabilities = ["shop.search", "shop.order", "cal.find"]
const verbs = ["ASK", "INTENT", "COMMIT", "UNDO"] as const
const caveatArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.subarray(services).map((svc) => ({ svc })),
  fc.subarray([...verbs]).map((v) => ({ verbs: v })),
  fc.subarray(["shop.*", "cal.*", "*", "shop.order", "cal.find"]).map((can) => ({ can })),
  fc.integer({ min: NOW - 5, max: NOW + 5 }).map((exp) => ({ exp })),
  fc.integer({ min: NOW - 5, max: NOW + 5 }).map((nbf) => ({ nbf })),
  fc.constantFrom("low", "medium", "high").map((risk) => ({ risk })),
  fc.record({ of: fc.constantFrom("spend", "emails"), max: fc.integer({ min: 0, max: 50 }), scale: fc.integer({ min: 0, max: 2 }) }).map((each) => ({ each })),
  fc.record({ of: fc.constantFrom("spend", "emails"), max: fc.integer({ min: 0, max: 50 }) }).map((total) => ({ total })),
  fc.constantFrom("H1", "H2").map((only) => ({ only })),
  // malformed and unknown ones, which must fail closed
  fc.constantFrom<unknown>({ svc: "shop.example" }, { region: "eu" }, { risk: "toString" }, null, { exp: "soon" })
)
const requestArb = fc.record({
  service: fc.constantFrom(...services),
  verb: fc.constantFrom(...verbs),
  capability: fc.constantFrom(...capabilities),
  hash: fc.constantFrom("H1", "H2"),
  risk: fc.constantFrom("low", "medium", "high"),
  spend: fc.integer({ min: 0, max: 60 }),
  emails: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined })
})
const rank = { ok: 4, consent_required: 3, forbidden: 2, unauthorized: 1 } as Record<string, number>

describe("delegation only narrows (property)", () => {
  it("an extra block never authorizes what the shorter grant refused", () => {
    fc.assert(
      fc.property(fc.array(caveatArb, { maxLength: 4 }), fc.array(caveatArb, { maxLength: 3 }), requestArb, (rootCaveats, extra, r) => {
        const shorter = rawRoot(rootCaveats)
        const longer = withSigner(AGENT, delegateGrant(shorter, { sub: subagentKey, caveats: [] }).pipe(Effect.orDie))
        // Append the random (possibly malformed) caveats with a raw signed block, so the issuing
        // API's own refusal of malformed caveats does not hide anything.
        const g = JSON.parse(tokenBody(longer))
        const extraBlock = rawBlock({ ...g[1].p, caveats: extra }, AGENT)
        const longerRaw = rawToken([g[0], extraBlock])
        const request = {
          service: r.service,
          verb: r.verb,
          capability: r.capability,
          ...(r.verb === "COMMIT"
            ? { proposal: { hash: r.hash, risk: r.risk, uses: { spend: { amount: r.spend }, ...(r.emails !== undefined ? { emails: { amount: r.emails } } : {}) } } }
            : {})
        }
        const a = check({ grants: [shorter], request })
        const b = check({ grants: [longerRaw], request, proofKey: subagentKey })
        // Never more permissive: ok only if the shorter was ok; never a softer refusal.
        expect(rank[b.code]).toBeLessThanOrEqual(rank[a.code])
      }),
      { numRuns: depth(1000), seed: 4242 }
    )
  })
})
