// The service runtime end to end over an in-process connection (SPEC §4): HELLO, ASK, INTENT,
// consent, COMMIT, replay, UNDO, auto-commit, EXPAND, and a refusal for every caveat kind.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { issueConsentGrant } from "../../src/yea/consent.js"
import type { FinalReply } from "../../src/yea/frame.js"
import { SHOP_ID } from "../../src/examples/shop.js"
import { CALENDAR_ID } from "../../src/examples/calendar.js"
import { agentKey, issue, MALLORY, NOW, PRINCIPAL, withSigner } from "../yea/_helpers.js"
import { atNow, calendar, clientOf, shop, stores } from "./support.js"

const usd = (max: number) => ({ of: "spend", max, scale: 2, unit: "USD" })
const policy = [{ svc: [SHOP_ID, CALENDAR_ID] }, { risk: "low" }, { each: usd(4000) }, { total: usd(10000) }, { exp: NOW + 3600 }]
const order = { items: [{ sku: "m01", qty: 2 }, { sku: "m02", qty: 2 }], deliver: "2026-10-01" }
const small = { items: [{ sku: "m01", qty: 1 }], deliver: "2026-10-01" }

const kind = (r: FinalReply) => (r.kind === "ERROR" ? `ERROR ${r.code}` : r.kind)

describe("service runtime over an in-process connection", () => {
  it.effect("HELLO, ASK, INTENT, consent, COMMIT, replay and UNDO", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const agent = yield* clientOf(service, { grants: [issue(policy)] })
      const brief = yield* agent.hello()
      expect(brief.kind).toBe("BRIEF")
      expect(agent.service()).toBe(SHOP_ID)
      const answer = yield* agent.ask("shop.search", { tag: "vegan" })
      expect(answer.kind).toBe("ANSWER")
      const proposals = yield* agent.intent("shop.order", order)
      if (proposals.kind !== "PROPOSALS") throw new Error(kind(proposals))
      expect(proposals.proposals).toHaveLength(2)
      const p = proposals.proposals[0]
      // Over the `each` limit of 40.00 USD: the principal must approve (§6.6).
      const refused = yield* agent.commit(p)
      expect(kind(refused)).toBe("ERROR consent_required")
      const { consent } = yield* agent.consentOf(refused)
      expect(consent.hash).toBe(p.hash)
      const consentGrant = withSigner(PRINCIPAL, issueConsentGrant(consent, agentKey), NOW)
      const receipt = yield* agent.commit(p, { grants: [consentGrant] })
      if (receipt.kind !== "RECEIPT") throw new Error(kind(receipt))
      expect(receipt.replay).toBeUndefined()
      // §4.4: a second COMMIT answers the original receipt, marked replay, without limits re-run.
      const replay = yield* agent.commit(p, { grants: [consentGrant] })
      expect(replay.kind === "RECEIPT" && replay.replay === true && replay.receipt.id === receipt.receipt.id).toBe(true)
      // §4.5: UNDO within the window; a repeat answers the same reversal.
      const undone = yield* agent.undo(receipt.receipt.id)
      if (undone.kind !== "RECEIPT") throw new Error(kind(undone))
      expect(undone.receipt.undoes).toBe(receipt.receipt.id)
      const again = yield* agent.undo(receipt.receipt.id)
      expect(again.kind === "RECEIPT" && again.replay === true && again.receipt.id === undone.receipt.id).toBe(true)
    }).pipe(Effect.provide(stores)))

  it.effect("auto-commit inside the policy takes one round trip; outside it, proposals", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* calendar
      const agent = yield* clientOf(service, { grants: [issue(policy)] })
      yield* agent.hello()
      const auto = yield* agent.intent("calendar.reschedule", { event: "1:1 with Ana" }, { auto: true })
      expect(auto.kind === "RECEIPT" && auto.auto === true).toBe(true)
      // Medium risk is over the policy's ceiling: no auto-commit, proposals as without auto.
      const cancel = yield* agent.intent("calendar.cancel", { event: "Design review" }, { auto: true })
      expect(cancel.kind).toBe("PROPOSALS")
    }).pipe(Effect.provide(stores)))

  it.effect("a refusal for each caveat kind", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const outcome = (caveats: ReadonlyArray<unknown>, useSmall = true) =>
        Effect.gen(function* () {
          const agent = yield* clientOf(service, { grants: [issue(caveats)] })
          yield* agent.hello()
          const ps = yield* agent.intent("shop.order", useSmall ? small : order)
          if (ps.kind !== "PROPOSALS") return kind(ps)
          return kind(yield* agent.commit(ps.proposals[0]))
        })
      expect(yield* outcome([{ svc: ["other.example"] }])).toBe("ERROR forbidden")
      expect(yield* outcome([{ verbs: ["ASK", "INTENT"] }])).toBe("ERROR forbidden")
      expect(yield* outcome([{ can: ["shop.search"] }])).toBe("ERROR forbidden")
      expect(yield* outcome([{ exp: NOW - 1 }])).toBe("ERROR forbidden")
      expect(yield* outcome([{ nbf: NOW + 60 }])).toBe("ERROR forbidden")
      expect(yield* outcome([{ each: usd(100) }])).toBe("ERROR consent_required")
      expect(yield* outcome([{ total: usd(100) }])).toBe("ERROR consent_required")
      expect(yield* outcome([{ risk: "low" }, { each: { of: "spend", max: 1, unit: "EUR" } }])).toBe("ERROR consent_required")
      expect(yield* outcome([{ only: "another-hash" }])).toBe("ERROR forbidden")
      expect(yield* outcome([{ svc: [SHOP_ID] }])).toBe("RECEIPT")
      const calendarRuntime = yield* calendar
      const agent = yield* clientOf(calendarRuntime, { grants: [issue([{ risk: "low" }])] })
      yield* agent.hello()
      const ps = yield* agent.intent("calendar.cancel", { event: "Design review" })
      if (ps.kind !== "PROPOSALS") throw new Error(kind(ps))
      expect(kind(yield* agent.commit(ps.proposals[0]))).toBe("ERROR consent_required")
    }).pipe(Effect.provide(stores)))

  it.effect("COMMIT: a wrong hash is conflict without the hash; another agent is forbidden", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const agent = yield* clientOf(service, { grants: [issue(policy)] })
      yield* agent.hello()
      const ps = yield* agent.intent("shop.order", small)
      if (ps.kind !== "PROPOSALS") throw new Error(kind(ps))
      const p = ps.proposals[0]
      const bad = yield* agent.commit({ id: p.id, hash: "x" + p.hash.slice(1) })
      expect(kind(bad)).toBe("ERROR conflict")
      expect(JSON.stringify(bad)).not.toContain(p.hash)
      const mallory = yield* clientOf(service, { grants: [] }, MALLORY)
      yield* mallory.hello()
      expect(kind(yield* mallory.commit(p))).toBe("ERROR unauthorized")
    }).pipe(Effect.provide(stores)))

  it.effect("EXPAND: a budget elides the menu; the handle is bound to the requester's key", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const agent = yield* clientOf(service, { grants: [issue(policy)] })
      yield* agent.hello()
      const menu = yield* agent.ask("shop.search", {}, { budget: 400 })
      if (menu.kind !== "ANSWER") throw new Error(kind(menu))
      const more = menu.more ?? []
      expect(more.length).toBeGreaterThan(0)
      const rest = yield* agent.expand(more[0].handle, { budget: 100_000 })
      expect(rest.kind).toBe("ANSWER")
      const other = yield* clientOf(service, {}, MALLORY)
      yield* other.hello()
      expect(kind(yield* other.expand(more[0].handle))).toBe("ERROR unauthorized")
      expect(kind(yield* agent.expand("h_nothing"))).toBe("ERROR not_found")
    }).pipe(Effect.provide(stores)))
})
