// `mandate yea demo`: one agent, the example calendar and shop, and the whole flow
// on a transport: HELLO, ASK, INTENT, consent_required, approve, COMMIT, a replayed COMMIT, UNDO,
// an auto-commit inside policy, EXPAND, and a refusal for each caveat kind. Every step prints what
// the agent reads (the hardened Lens of the reply) and checks its expectation; the result lists the
// failed checks. The transports are given as a way to reach each service, so the same flow runs on
// TCP, stdio, the HTTP bridge and in tests.
import { Clock, Effect, Layer, Scope } from "effect"
import { RandomBytes, Signer } from "../kernel/services.js"
import { lensForModel, makeClient, type YeaConnection } from "../yea/client.js"
import { issueConsentGrant } from "../yea/consent.js"
import { CALENDAR_ID } from "./calendar.js"
import { SHOP_ID } from "./shop.js"
import type { FinalReply } from "../yea/frame.js"
import { issueRootGrant } from "../yea/grant.js"
import { keyFromSeed } from "../yea/keys.js"
import type { YeaError } from "../yea/reason.js"

export interface DemoKeys {
  readonly principal: Uint8Array
  readonly agent: Uint8Array
}

export type Reach = (service: "calendar" | "shop") => Effect.Effect<YeaConnection, YeaError, Scope.Scope>

export interface DemoResult {
  readonly checks: number
  readonly failures: ReadonlyArray<string>
}

const usd = (max: number) => ({ of: "spend", max, scale: 2, unit: "USD" })
const order = { items: [{ sku: "m03", qty: 2 }, { sku: "m05", qty: 2 }], deliver: "2026-10-01" }
const small = { items: [{ sku: "m01", qty: 1 }], deliver: "2026-10-01" }

const describe = (r: FinalReply): string => (r.kind === "ERROR" ? `ERROR ${r.code}` : r.kind)

export const runDemo = (reach: Reach, keys: DemoKeys, say: (line: string) => Effect.Effect<void>): Effect.Effect<DemoResult, YeaError, Scope.Scope> =>
  Effect.gen(function* () {
    const failures: Array<string> = []
    let checks = 0
    const expect = (what: string, ok: boolean, got: string) =>
      Effect.gen(function* () {
        checks++
        yield* say(`${ok ? "ok  " : "FAIL"} ${what}${ok ? "" : ` (got ${got})`}`)
        if (!ok) failures.push(`${what}: got ${got}`)
      })
    const show = (r: FinalReply) => say(lensForModel(r).split("\n").map((l) => `    | ${l}`).join("\n"))
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const agentKey = keyFromSeed(keys.agent)
    const asPrincipal = Layer.merge(Signer.fromSeed(keys.principal), RandomBytes.live)
    const grant = (caveats: ReadonlyArray<unknown>) => Effect.provide(issueRootGrant({ sub: agentKey, caveats }), asPrincipal)
    const policy = yield* grant([{ svc: [SHOP_ID, CALENDAR_ID] }, { risk: "low" }, { each: usd(4000) }, { total: usd(10000) }, { exp: now + 8 * 3600 }])
    const agentOf = (service: "calendar" | "shop", grants: ReadonlyArray<string>) =>
      Effect.flatMap(reach(service), (conn) =>
        Effect.provide(makeClient(conn, { grants, agentName: "demo-agent" }), Layer.merge(Signer.fromSeed(keys.agent), RandomBytes.live)))

    // Calendar: discover, read, and an auto-commit inside the policy (low risk, undoable).
    const cal = yield* agentOf("calendar", [policy])
    const brief = yield* cal.hello({ budget: 800 })
    yield* say("> HELLO calendar")
    yield* show(brief)
    yield* expect("HELLO answers a BRIEF", brief.kind === "BRIEF", describe(brief))
    const found = yield* cal.ask("calendar.find", { query: "Ana" })
    yield* say("> ASK calendar.find {query: Ana}")
    yield* show(found)
    yield* expect("ASK answers", found.kind === "ANSWER", describe(found))
    const auto = yield* cal.intent("calendar.reschedule", { event: "1:1 with Ana" }, { auto: true, goal: "push my 1:1 with Ana later" })
    yield* say("> INTENT calendar.reschedule auto")
    yield* show(auto)
    yield* expect("auto-commit inside the policy answers a RECEIPT in one round trip", auto.kind === "RECEIPT" && auto.auto === true, describe(auto))

    // Shop: a menu over budget, EXPAND, an order over the per-commit limit, consent, replay, undo.
    const shop = yield* agentOf("shop", [policy])
    yield* shop.hello()
    const menu = yield* shop.ask("shop.search", {}, { budget: 400 })
    yield* say("> ASK shop.search budget 400")
    yield* show(menu)
    const handle = menu.kind === "ANSWER" ? menu.more?.[0]?.handle : undefined
    yield* expect("a budget elides the menu with an EXPAND handle", handle !== undefined, describe(menu))
    if (handle !== undefined) {
      const rest = yield* shop.expand(handle, { budget: 4000 })
      yield* say(`> EXPAND ${handle}`)
      yield* show(rest)
      yield* expect("EXPAND answers the rest", rest.kind === "ANSWER", describe(rest))
    }
    const ps = yield* shop.intent("shop.order", order)
    yield* say("> INTENT shop.order")
    yield* show(ps)
    yield* expect("INTENT answers proposals", ps.kind === "PROPOSALS", describe(ps))
    if (ps.kind === "PROPOSALS") {
      const p = ps.proposals[0]
      const refused = yield* shop.commit(p)
      yield* say(`> COMMIT ${p.id}`)
      yield* show(refused)
      yield* expect("over the per-commit limit: consent_required", refused.kind === "ERROR" && refused.code === "consent_required", describe(refused))
      const checked = yield* Effect.either(shop.consentOf(refused))
      yield* expect("the consent request matches the proposal shown (§6.6)", checked._tag === "Right", checked._tag === "Left" ? checked.left.message : "")
      if (checked._tag === "Right") {
        const consent = yield* Effect.provide(issueConsentGrant(checked.right.consent, agentKey), asPrincipal)
        yield* say("  (the principal approves: a consent grant for that hash only)")
        const receipt = yield* shop.commit(p, { grants: [consent] })
        yield* show(receipt)
        yield* expect("COMMIT with the consent answers a RECEIPT", receipt.kind === "RECEIPT", describe(receipt))
        const replay = yield* shop.commit(p, { grants: [consent] })
        yield* say(`> COMMIT ${p.id} again`)
        yield* show(replay)
        yield* expect("a replayed COMMIT answers the original receipt", replay.kind === "RECEIPT" && replay.replay === true, describe(replay))
        if (receipt.kind === "RECEIPT") {
          const undone = yield* shop.undo(receipt.receipt.id)
          yield* say(`> UNDO ${receipt.receipt.id}`)
          yield* show(undone)
          yield* expect("UNDO within the window reverses it", undone.kind === "RECEIPT" && undone.receipt.undoes === receipt.receipt.id, describe(undone))
        }
      }
    }

    // A refusal for each caveat kind.
    const refusal = (name: string, caveats: ReadonlyArray<unknown>, code: string, service: "shop" | "calendar" = "shop") =>
      Effect.gen(function* () {
        const agent = yield* agentOf(service, [yield* grant(caveats)])
        yield* agent.hello()
        const intent = service === "shop" ? yield* agent.intent("shop.order", small) : yield* agent.intent("calendar.cancel", { event: "Design review" })
        const r = intent.kind === "PROPOSALS" ? yield* agent.commit(intent.proposals[0]) : intent
        yield* expect(`${name} caveat refuses with ${code}`, r.kind === "ERROR" && r.code === code, describe(r))
      })
    yield* say("> refusals")
    yield* refusal("svc", [{ svc: ["other.example"] }], "forbidden")
    yield* refusal("verbs", [{ verbs: ["ASK", "INTENT"] }], "forbidden")
    yield* refusal("can", [{ can: ["shop.search"] }], "forbidden")
    yield* refusal("exp", [{ exp: now - 1 }], "forbidden")
    yield* refusal("nbf", [{ nbf: now + 3600 }], "forbidden")
    yield* refusal("each", [{ each: usd(100) }], "consent_required")
    yield* refusal("total", [{ total: usd(100) }], "consent_required")
    yield* refusal("risk", [{ risk: "low" }], "consent_required", "calendar")
    yield* refusal("only", [{ only: "another-proposal-hash" }], "forbidden")
    return { checks, failures }
  })
