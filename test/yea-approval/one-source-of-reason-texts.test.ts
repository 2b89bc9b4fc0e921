// YEA approval: one source of reason texts. The approval decision, authorize and a real COMMIT run
// one caveat check and give one reason text (the core's grant-check texts, SPEC §6.3–§6.4), on
// generated grants and plans, not only on the published cases; and every accept is judged by what
// it carries (SPEC-approval §3 and §5): only a decline, a cancel or no answer is "not approved".
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { hashPlan, judgeAnswer, decide, toLedgerUnits, type Answer, type HashedPlan, type RequestState } from "../../src/yea/approval/index.js"
import { authorize, authorizeWithReservations, reserveTotals } from "../../src/yea/authorize.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"
import { decimal, type Quantity } from "../../src/yea/measure.js"
import { intent, plans } from "../../src/yea/service/define.js"
import { makeService } from "../../src/yea/service/runtime.js"
import type { FinalReply } from "../../src/yea/frame.js"
import { AGENT, agentKey, issue, MALLORY, malloryKey, NOW, principalKey, rawRoot, withSigner } from "../yea/_helpers.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { atNow, clientOf, stores } from "../yea-service/support.js"
import { fixedClock } from "../../src/yea/conformance.js"

const TOOL = "shop.refund"
const SEED = 20261203

// ---------------------------------------------------------------------------------------------
// Generated grants: every caveat kind, satisfied or not, and malformed and unknown ones

const usd = (max: number) => ({ of: "spend", max, scale: 2, unit: "USD" })
const caveat = fc.oneof(
  fc.constantFrom({ svc: [agentKey] }, { svc: ["a.example"] }, { svc: [agentKey, "a.example"] }),
  fc.constantFrom({ verbs: ["COMMIT"] }, { verbs: ["INTENT", "ASK"] }, { verbs: ["COMMIT", "UNDO"] }),
  fc.constantFrom({ can: ["shop.*"] }, { can: [TOOL] }, { can: ["*"] }, { can: ["calendar.*", "shop.order"] }),
  fc.constantFrom({ exp: NOW + 3600 }, { exp: NOW }, { exp: NOW + 1 }, { nbf: NOW }, { nbf: NOW + 1 }, { nbf: NOW - 60 }),
  fc.constantFrom({ risk: "low" }, { risk: "medium" }, { risk: "high" }),
  fc.constantFrom({ only: "MATCH" }, { only: "another-proposal" }),
  fc.integer({ min: 0, max: 5000 }).map((max) => ({ each: usd(max) })),
  fc.integer({ min: 0, max: 5000 }).map((max) => ({ total: usd(max) })),
  fc.integer({ min: 0, max: 4 }).map((max) => ({ total: { of: "emails", max } })),
  fc.integer({ min: 0, max: 4 }).map((max) => ({ each: { of: "emails", max } })),
  fc.constantFrom({ each: { of: "spend", max: 2500, scale: 2, unit: "EUR" } }, { total: { of: "spend", max: 90 } }),
  // Fail closed (§6.3): unknown caveats and malformed values.
  fc.constantFrom<unknown>({ svc: "a.example" }, { risk: "extreme" }, { color: "red" }, { each: { of: "spend", max: -1 } }, { exp: "tomorrow" }, { only: 1 }, {}, null, { can: ["x"], verbs: ["COMMIT"] })
)

/** A grant's caveats, always with some `can` (a policy naming no tool never runs a job on its own). */
const caveats = fc
  .tuple(fc.array(caveat, { maxLength: 5 }), fc.oneof({ arbitrary: fc.constantFrom<unknown>({ can: ["shop.*"] }, { can: [TOOL] }, { can: ["*"] }), weight: 6 }, { arbitrary: fc.constant<unknown>({ can: ["calendar.*"] }), weight: 1 }), fc.nat())
  .map(([cs, can, at]) => {
    const out = [...cs]
    out.splice(at % (out.length + 1), 0, can)
    return out
  })

const quantity = (amount: number, scale?: number, unit?: string): Quantity => ({ amount, ...(scale !== undefined ? { scale } : {}), ...(unit !== undefined ? { unit } : {}) })
const uses = fc.record(
  {
    spend: fc.oneof(
      fc.integer({ min: 0, max: 6000 }).map((n) => quantity(n, 2, "USD")),
      fc.integer({ min: 0, max: 6000 }).map((n) => quantity(n, 2, "EUR")),
      fc.integer({ min: 0, max: 100 }).map((n) => quantity(n))
    ),
    emails: fc.integer({ min: 0, max: 5 }).map((n) => quantity(n))
  },
  { requiredKeys: [] }
)
const risk = fc.constantFrom("low" as const, "medium" as const)

/** `only: "MATCH"` names the proposal being checked, whatever hash that path computes for it. */
const withHash = (cs: ReadonlyArray<unknown>, hash: string) => cs.map((c) => (c !== null && typeof c === "object" && (c as { only?: unknown }).only === "MATCH" ? { only: hash } : c))

const jobPlan = (u: Record<string, Quantity>, r: "low" | "medium"): HashedPlan =>
  Effect.runSync(hashPlan({ name: TOOL, revert: true }, { who: "Chen" }, { summary: "Refund Chen", effects: [{ op: "create", target: "refund" }], uses: u, risk: r, undoWindow: 60 }))

/** The approval decision's verdict on one plan under the policy `token`: "ok" or its reason text. */
const decided = (plan: HashedPlan, token: string, used: (of: string) => bigint) =>
  decide([plan], { grant: token, principal: principalKey, server: agentKey, deny: [], outOfBand: "high" }, (_block, of) => Effect.succeed(used(of)), NOW).pipe(
    Effect.match({ onSuccess: (d) => (d.kind === "run" ? "ok" : "nothing"), onFailure: (e) => `${e.code}: ${e.why}` })
  )

/** authorize's verdict on the COMMIT of a proposal: "ok" or its code and reason text. */
const authorized = (token: string, proposal: { hash: string; risk: unknown; uses: unknown }, used: (of: string) => { units: bigint; scale: number }) =>
  authorize(
    { grants: [token], proofKey: agentKey, trusted: [principalKey], request: { service: agentKey, verb: "COMMIT", capability: TOOL, proposal } },
    (_block, of) => Effect.succeed(used(of))
  ).pipe(
    Effect.match({ onSuccess: () => ({ code: "ok", text: "ok" }), onFailure: (e) => ({ code: e.reason, text: e.message }) }),
    Effect.withClock(fixedClock(NOW))
  )

// ---------------------------------------------------------------------------------------------
// The expected text, derived here from the rules of §6.3 (a model of its own, not the code's)

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (x !== null && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x))
const money = (max: number, scale?: number, unit?: string) => {
  const s = scale ?? 0
  const t = s === 0 ? String(max) : `${String(max).padStart(s + 1, "0").slice(0, -s)}.${String(max).padStart(s + 1, "0").slice(-s)}`
  return unit === undefined ? t : `${t} ${unit}`
}
/** In hundredths: every scale generated here is 0 or 2, so this is exact. */
const cents = (q: { amount: number; scale?: number }) => q.amount * 10 ** (2 - (q.scale ?? 0))
const unitWords = (u: string | undefined) => (u === undefined ? "without a unit" : `in ${u}`)

/**
 * What §6.3 says of these caveats: "ok", or the first hard failure's text, else the first soft one's.
 * `used` is what each total has drawn already, in hundredths.
 */
const expected = (cs: ReadonlyArray<unknown>, proposalHash: string, r: string, u: Record<string, Quantity>, used: Record<string, number>) => {
  const hard: Array<string> = []
  const soft: Array<string> = []
  const wellFormedLimit = (l: unknown) => {
    if (l === null || typeof l !== "object") return false
    const o = l as Record<string, unknown>
    return Object.keys(o).every((k) => ["of", "max", "scale", "unit"].includes(k)) && typeof o.of === "string" && Number.isSafeInteger(o.max) && (o.max as number) >= 0
  }
  for (const c of cs) {
    const keys = c !== null && typeof c === "object" ? Object.keys(c) : []
    const v = keys.length === 1 ? (c as Record<string, unknown>)[keys[0]] : undefined
    const k = keys.length === 1 ? keys[0] : ""
    const list = Array.isArray(v) && v.every((x) => typeof x === "string")
    const malformed =
      (["svc", "verbs", "can"].includes(k) && !list) ||
      (["exp", "nbf"].includes(k) && !Number.isSafeInteger(v)) ||
      (k === "risk" && !["low", "medium", "high"].includes(v as string)) ||
      (k === "only" && typeof v !== "string") ||
      (["each", "total"].includes(k) && !wellFormedLimit(v)) ||
      !["svc", "verbs", "can", "exp", "nbf", "risk", "only", "each", "total"].includes(k)
    if (malformed) hard.push(`malformed caveat ${json(c)}`)
    else if (k === "svc" && !(v as Array<string>).includes(agentKey)) hard.push(`not valid for service ${agentKey}`)
    else if (k === "verbs" && !(v as Array<string>).includes("COMMIT")) hard.push("does not allow COMMIT")
    else if (k === "can" && !(v as Array<string>).some((p) => (p.endsWith("*") ? TOOL.startsWith(p.slice(0, -1)) : p === TOOL))) hard.push(`does not cover ${TOOL}`)
    else if (k === "exp" && !(NOW < (v as number))) hard.push("grant has expired")
    else if (k === "nbf" && !(NOW >= (v as number))) hard.push("grant is not valid yet")
    else if (k === "only" && v !== proposalHash) hard.push(`only valid for proposal ${v as string}`)
    else if (k === "risk" && ["low", "medium", "high"].indexOf(r) > ["low", "medium", "high"].indexOf(v as string)) soft.push(`risk ${r} exceeds ceiling ${v as string}`)
    else if (k === "each" || k === "total") {
      const l = v as { of: string; max: number; scale?: number; unit?: string }
      const q = u[l.of]
      if (q === undefined) continue
      if (q.unit !== l.unit) soft.push(`${l.of} is ${unitWords(q.unit)}, but the limit is ${unitWords(l.unit)}`)
      else if (k === "each" && cents(q) > cents({ amount: l.max, scale: l.scale })) soft.push(`${l.of} over the per-commit limit of ${money(l.max, l.scale, l.unit)}`)
      else if (k === "total" && (used[l.of] ?? 0) + cents(q) > cents({ amount: l.max, scale: l.scale })) soft.push(`${l.of} would pass the total limit of ${money(l.max, l.scale, l.unit)}`)
    }
  }
  return hard.length > 0 ? { code: "forbidden", text: hard[0] } : soft.length > 0 ? { code: "consent_required", text: soft[0] } : { code: "ok", text: "ok" }
}

// ---------------------------------------------------------------------------------------------

describe("YEA approval: one source of reason texts", () => {
  it.effect.prop(
    "generated grants and plans: authorize, COMMIT and the approval decision give one verdict and one text",
    [caveats, uses, risk],
    ([cs, u, r]) =>
      Effect.gen(function* () {
        yield* atNow
        // A service whose id is the server key, so the approval's server and COMMIT's service are one.
        const runtime = yield* makeService({
          id: agentKey,
          name: "Refunds",
          trust: [principalKey],
          capabilities: {
            [TOOL]: intent({
              risk: "low",
              plan: () => Effect.succeed(plans({ summary: "Refund Chen", effects: [{ op: "create", target: "refund" }], uses: u, risk: r, undoWindow: 60, action: {} })),
              commit: () => Effect.void,
              undo: () => Effect.void
            })
          }
        })
        const agent = yield* clientOf(runtime, {}, AGENT)
        yield* agent.hello()
        const proposals = yield* agent.intent(TOOL, {}, { grants: [issue([{ can: ["*"] }])] })
        if (proposals.kind !== "PROPOSALS") throw new Error(`INTENT: ${proposals.kind}`)
        const p = proposals.proposals[0]

        const committed: FinalReply = yield* agent.commit(p, { grants: [rawRoot(withHash(cs, p.hash))] })
        const viaCommit = committed.kind === "RECEIPT" ? { code: "ok", text: "ok" } : committed.kind === "ERROR" ? { code: committed.code, text: committed.message } : { code: committed.kind, text: "" }
        const viaAuthorize = yield* authorized(rawRoot(withHash(cs, p.hash)), { hash: p.hash, risk: p.risk, uses: p.uses }, () => decimal(0))
        const plan = jobPlan(u, r)
        const viaDecide = yield* decided(plan, rawRoot(withHash(cs, plan.planHash)), () => 0n)

        const want = expected(withHash(cs, p.hash), p.hash, r, u, {})
        expect(viaAuthorize).toEqual(want)
        expect(viaCommit).toEqual(want)
        // The decision asks for anything that is not "ok", hard or soft, with the same text.
        expect(viaDecide).toBe(want.code === "ok" ? "ok" : `ask: ${want.text}`)
      }).pipe(Effect.provide(stores)),
    { fastCheck: { numRuns: 120, seed: SEED } }
  )

  it.effect.prop(
    "generated totals already used: authorize and the approval decision agree on the limit's text",
    [caveats, uses, risk, fc.integer({ min: 0, max: 6000 }), fc.integer({ min: 0, max: 5 })],
    ([cs, u, r, spent, sent]) =>
      Effect.gen(function* () {
        const plan = jobPlan(u, r)
        const token = rawRoot(withHash(cs, plan.planHash))
        const units = { spend: decimal(spent, 2), emails: decimal(sent) } as Record<string, { units: bigint; scale: number }>
        const viaAuthorize = yield* authorized(token, { hash: plan.planHash, risk: r, uses: u }, (of) => units[of] ?? decimal(0))
        const viaDecide = yield* decided(plan, token, (of) => (units[of] === undefined ? 0n : toLedgerUnits(units[of])))
        const want = expected(withHash(cs, plan.planHash), plan.planHash, r, u, { spend: spent, emails: sent * 100 })
        expect(viaAuthorize).toEqual(want)
        expect(viaDecide).toBe(want.code === "ok" ? "ok" : `ask: ${want.text}`)
      }),
    { fastCheck: { numRuns: 400, seed: SEED } }
  )

  describe("texts the published cases do not show, derived from the rule", () => {
    const plan = jobPlan({ spend: quantity(3000, 2, "USD") }, "low")
    const ask = (cs: ReadonlyArray<unknown>) => decided(plan, rawRoot(cs), () => 0n)
    it.effect("svc: not valid for service <this server>", () =>
      Effect.map(ask([{ can: ["*"] }, { svc: ["a.example"] }]), (v) => expect(v).toBe(`ask: not valid for service ${agentKey}`)))
    it.effect("can: does not cover <tool>", () => Effect.map(ask([{ can: ["calendar.*"] }]), (v) => expect(v).toBe(`ask: does not cover ${TOOL}`)))
    it.effect("unknown or malformed caveat: malformed caveat <its canonical JSON>", () =>
      Effect.gen(function* () {
        expect(yield* ask([{ can: ["*"] }, { svc: "a.example" }])).toBe(`ask: malformed caveat {"svc":"a.example"}`)
        expect(yield* ask([{ can: ["*"] }, { total: { unit: "USD", of: "spend", max: -5 } }])).toBe(`ask: malformed caveat {"total":{"max":-5,"of":"spend","unit":"USD"}}`)
        expect(yield* ask([{ can: ["*"] }, { color: "red" }])).toBe(`ask: malformed caveat {"color":"red"}`)
      }))
    it.effect("nbf and only", () =>
      Effect.gen(function* () {
        expect(yield* ask([{ can: ["*"] }, { nbf: NOW + 1 }])).toBe("ask: grant is not valid yet")
        expect(yield* ask([{ can: ["*"] }, { only: "another-proposal" }])).toBe("ask: only valid for proposal another-proposal")
      }))
    it.effect("a hard failure decides the text over an earlier soft one, as in authorize", () =>
      Effect.map(ask([{ can: ["*"] }, { each: usd(100) }, { svc: ["a.example"] }]), (v) => expect(v).toBe(`ask: not valid for service ${agentKey}`)))
    it.effect("a policy issued by an untrusted key, or to another key: the core's chain texts", () =>
      Effect.gen(function* () {
        const byMallory = withSigner(MALLORY, issueRootGrant({ sub: agentKey, caveats: [{ can: ["*"] }], nonce: "m" }))
        expect(yield* decided(plan, byMallory, () => 0n)).toBe("ask: grant is issued by a principal this service does not trust")
        const u = yield* authorized(byMallory, { hash: plan.planHash, risk: "low", uses: plan.plan.uses }, () => decimal(0))
        expect(u).toEqual({ code: "unauthorized", text: "grant is issued by a principal this service does not trust" })
        const toMallory = issue([{ can: ["*"] }], malloryKey)
        expect(yield* decided(plan, toMallory, () => 0n)).toBe("ask: proof key is not the grant holder")
        const v = yield* authorized(toMallory, { hash: plan.planHash, risk: "low", uses: plan.plan.uses }, () => decimal(0))
        expect(v).toEqual({ code: "unauthorized", text: "proof key is not the grant holder" })
      }))
  })

  it.effect("a COMMIT that loses the race for a total's room gives the check's text, not a third one", () =>
    Effect.gen(function* () {
      const limit = { total: { of: "spend", max: 5000, scale: 2, unit: "USD" } }
      const request = { service: agentKey, verb: "COMMIT" as const, capability: TOOL, proposal: { hash: "h", risk: "low", uses: { spend: quantity(3000, 2, "USD") } } }
      const check = authorizeWithReservations({ grants: [rawRoot([limit])], proofKey: agentKey, trusted: [principalKey], request }).pipe(Effect.withClock(fixedClock(NOW)))
      // Both pass the check while nothing is used; the second loses at the atomic reservation.
      const a = yield* check
      const b = yield* check
      yield* reserveTotals("a", a.draws)
      const lost = yield* Effect.flip(reserveTotals("b", b.draws))
      const checked = yield* Effect.flip(check)
      expect(lost.message).toBe("spend would pass the total limit of 50.00 USD")
      expect({ reason: lost.reason, message: lost.message, need: lost.need }).toEqual({ reason: checked.reason, message: checked.message, need: checked.need })
    }).pipe(Effect.provide(MemoryReservations.layer)))

  describe("every accept is judged by its content", () => {
    const plan = jobPlan({}, "low")
    const state = (round: number): RequestState => ({ v: 1, tool: TOOL, inputHash: "h", sub: "", plans: [plan.planHash], round, nonce: "n", exp: NOW + 600 })
    const judge = (answer: Answer | undefined, round = 1) =>
      judgeAnswer(state(round), answer, [plan], { deny: [], outOfBand: "high" }, { [plan.planHash]: "refund chen" }).pipe(
        Effect.match({ onSuccess: (p) => ({ code: "run", plan: p.planHash }), onFailure: (e) => ({ code: e.code, why: e.why, ...("round" in e ? { round: e.round } : {}) }) })
      )
    const wrong = (round: number) => ({ code: "ask-again", why: 'type "refund chen" exactly to approve', round })

    it.effect("a bare accept is a wrong phrase: it asks again", () => Effect.map(judge({ action: "accept" }), (v) => expect(v).toEqual(wrong(2))))
    it.effect("an accept without confirm (empty form, or only a plan) is a wrong phrase", () =>
      Effect.gen(function* () {
        expect(yield* judge({ action: "accept", content: {} })).toEqual(wrong(2))
        expect(yield* judge({ action: "accept", content: { plan: plan.planHash } })).toEqual(wrong(2))
        expect(yield* judge({ action: "accept", content: { confirm: 1 } })).toEqual(wrong(2))
      }))
    it.effect("three wrong rounds refuse: a bare accept on the third round", () =>
      Effect.gen(function* () {
        expect(yield* judge({ action: "accept" }, 2)).toEqual(wrong(3))
        expect(yield* judge({ action: "accept" }, 3)).toEqual({ code: "refused", why: "not approved after 3 tries" })
        expect(yield* judge({ action: "accept", content: { confirm: "yes" } }, 3)).toEqual({ code: "refused", why: "not approved after 3 tries" })
      }))
    it.effect("the right phrase runs", () =>
      Effect.map(judge({ action: "accept", content: { confirm: " Refund Chen " } }), (v) => expect(v).toEqual({ code: "run", plan: plan.planHash })))
    it.effect("decline, cancel and no answer are not approved, on any round", () =>
      Effect.gen(function* () {
        for (const round of [1, 3]) {
          expect(yield* judge({ action: "decline" }, round)).toEqual({ code: "not-approved", why: "not approved" })
          expect(yield* judge({ action: "cancel", content: { confirm: "refund chen" } }, round)).toEqual({ code: "not-approved", why: "not approved" })
          expect(yield* judge(undefined, round)).toEqual({ code: "not-approved", why: "not approved" })
        }
      }))
  })
})
