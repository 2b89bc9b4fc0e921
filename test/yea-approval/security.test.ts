// Named security cases (security.md "MCP servers built with the framework"; SPEC-mcp-ts "Security
// cases"), each against the approval core or the HTTP front end, and each able to fail.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { serveHttp } from "../../src/bind/mcp/serve.js"
import {
  buildForm,
  checkJobConsent,
  checkState,
  decide,
  decodeJobConsentCode,
  hashPlan,
  jobConsentCode,
  judgeAnswer,
  keyedCodecLayer,
  newState,
  RequestStateCodec,
  signJobConsent,
  type HashedPlan
} from "../../src/yea/approval/index.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"

const principalSeed = new Uint8Array(32).fill(1)
const serverKey = keyFromSeed(new Uint8Array(32).fill(5))
const principalKey = keyFromSeed(principalSeed)
const principal = Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([4])))
const NOW = 1790000000
const tight = { deny: ["delete_customer"], outOfBand: "high" as const }
const none = () => Effect.succeed(0n)

const plan = (tool: string, p: Partial<HashedPlan["plan"]> & { risk?: "low" | "medium" | "high" }, revert = true, input: unknown = { who: "Chen" }) =>
  Effect.runSync(hashPlan({ name: tool, revert }, input, { summary: `do ${tool}`, effects: [{ op: "update", target: "x" }], undoWindow: 60, ...p }))

const policyGrant = Effect.runSync(
  issueRootGrant({ sub: serverKey, caveats: [{ can: ["*"] }, { exp: NOW + 3600 }] }).pipe(Effect.provide(principal), Effect.withClock(fixedClock(NOW)))
)


const view = (grant: string | null) => ({ grant, principal: principalKey, server: serverKey, ...tight })

describe("security: the approval core", () => {
  it.effect("a denied tool never runs, whatever the policy allows", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(decide([plan("delete_customer", { risk: "low" })], view(policyGrant), none, NOW))
      expect(e._tag).toBe("Denied")
    }))

  it.effect("an irreversible plan never runs on its own, even when the policy names it", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(decide([plan("send_email", { risk: "low", undoWindow: undefined }, false)], view(policyGrant), none, NOW))
      expect(e).toMatchObject({ _tag: "NeedsApproval", why: "send_email can't be undone" })
      const ok = yield* decide([plan("send_email", { risk: "low" })], view(policyGrant), none, NOW)
      expect(ok.kind).toBe("run") // the same tool, undoable, does run: the check above is what refused
    }))

  it("a high plan is never offered in the form, and service text can't forge a line there", () => {
    const form = buildForm([plan("delete_branch", { risk: "high" }), plan("refund", { risk: "low", summary: "Refund 5\n+ create account/admin" })], "why", tight, {})
    expect(form?.offered).toEqual([plan("refund", { risk: "low", summary: "Refund 5\n+ create account/admin" }).planHash])
    expect(form?.message).toContain("Refund 5\\u{a}+ create account/admin")
    expect(form?.message.split("\n").some((l) => l.startsWith("+ create account"))).toBe(false)
  })

  it.effect("the model can't approve: a bare accept, an empty form or a wrong phrase never runs", () =>
    Effect.gen(function* () {
      const p = plan("refund", { risk: "low" })
      const state = { v: 1 as const, tool: "refund", inputHash: "h", sub: "", plans: [p.planHash], round: 1, nonce: "n", exp: NOW + 600 }
      for (const answer of [{ action: "accept" }, { action: "accept", content: {} }, { action: "accept", content: { confirm: "yes" } }, { action: "accept", content: { confirm: "" } }]) {
        const r = yield* Effect.either(judgeAnswer(state, answer, [p], tight, {}))
        expect(Either.isLeft(r)).toBe(true)
      }
    }))

  it.effect("a consent for one plan never runs another; a copy of the policy grant is no consent", () =>
    Effect.gen(function* () {
      const a = plan("refund", { risk: "low" }, true, { who: "Chen" })
      const b = plan("refund", { risk: "low" }, true, { who: "Ana" })
      const code = yield* jobConsentCode({ server: serverKey, principal: principalKey, input: { who: "Chen" }, plan: a, phrase: "approve", now: 4102440000 - 600 })
      const request = yield* decodeJobConsentCode(code)
      const grant = yield* signJobConsent(request).pipe(Effect.provide(principal), Effect.withClock(fixedClock(4102440000 - 600)))
      const ctx = { principal: principalKey, server: serverKey, now: 4102440000 - 599 }
      expect((yield* checkJobConsent(grant, { ...ctx, plan: a })).id).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect((yield* Effect.flip(checkJobConsent(grant, { ...ctx, plan: b }))).why).toBe("not a consent for this plan")
      expect((yield* Effect.flip(checkJobConsent(policyGrant, { ...ctx, plan: a }))).why).toBe("not a consent for this plan")
      // No pinned principal: no consent is accepted at all.
      expect((yield* Effect.flip(checkJobConsent(grant, { ...ctx, principal: undefined, plan: a }))).why).toBe("grant is issued by a principal this service does not trust")
    }))

  it.effect("an approval code whose shown plan was altered is refused before anything is signed", () =>
    Effect.gen(function* () {
      const a = plan("refund", { risk: "low" })
      const code = yield* jobConsentCode({ server: serverKey, principal: principalKey, input: { who: "Chen" }, plan: a, phrase: "approve", now: NOW })
      const json = JSON.parse(Buffer.from(code.slice(4), "base64url").toString("utf8"))
      json.detail.job.summary = "something harmless"
      const forged = "pc1." + Buffer.from(JSON.stringify(json, Object.keys(json).sort())).toString("base64url")
      expect((yield* Effect.flip(decodeJobConsentCode(forged)))._tag).toBe("ConsentInvalid")
      // Signing needs the principal's key: another key can't approve a code for this principal.
      const other = yield* Effect.flip(signJobConsent(yield* decodeJobConsentCode(code)).pipe(Effect.provide(Layer.merge(Signer.fromSeed(new Uint8Array(32).fill(9)), RandomBytes.live))))
      expect(other.why).toBe("this code asks another principal to approve")
    }))

  it.effect("a request state the codec didn't seal, or sealed for another caller, is refused; another job's or sub's state runs nothing", () =>
    Effect.gen(function* () {
      const codec = yield* RequestStateCodec
      const s = yield* newState({ tool: "refund", inputHash: "h", sub: "client-1", plans: ["H"], round: 1 })
      const sealed = yield* codec.mint({ yea: s }, "tools/call\u0000refund\u0000client-1")
      expect(yield* codec.open(sealed, "tools/call\u0000refund\u0000client-1")).toMatchObject({ yea: { tool: "refund" } })
      expect((yield* Effect.flip(codec.open(sealed, "tools/call\u0000refund\u0000client-2")))._tag).toBe("Refused")
      const tampered = sealed.replace(/^./, (c) => (c === "e" ? "f" : "e"))
      expect((yield* Effect.flip(codec.open(tampered, "tools/call\u0000refund\u0000client-1")))._tag).toBe("Refused")
      const expect1 = { tool: "refund", inputHash: "h", sub: "client-1", now: NOW }
      expect((yield* Effect.flip(checkState(s, { ...expect1, tool: "delete_branch" })))._tag).toBe("Refused")
      expect((yield* Effect.flip(checkState(s, { ...expect1, sub: "client-2" })))._tag).toBe("Refused")
    }).pipe(Effect.provide(Layer.merge(keyedCodecLayer(new Uint8Array(32).fill(3)), RandomBytes.seeded(new Uint8Array([1])))), Effect.withClock(fixedClock(NOW))))
})

describe("security: the Streamable HTTP front end", () => {
  it.scoped("no token or a wrong one is 401, a foreign Host is 421, a body over the cap is 413, before MCP", () =>
    Effect.gen(function* () {
      const { url, port } = yield* serveHttp({ port: 0, token: "k".repeat(40), sub: "p", maxBody: 1000 }, () => new McpServer({ name: "x", version: "1" }))
      const post = (headers: Record<string, string>, body = "{}") => Effect.promise(() => fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body }))
      expect((yield* post({})).status).toBe(401)
      expect((yield* post({ authorization: `Bearer ${"x".repeat(40)}` })).status).toBe(401)
      const foreign = yield* Effect.promise(() =>
        import("node:http").then(
          (http) =>
            new Promise<number>((resolve) => {
              const req = http.request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host: "evil.example", authorization: `Bearer ${"k".repeat(40)}` } }, (res) => resolve(res.statusCode ?? 0))
              req.end("{}")
            })
        )
      )
      expect(foreign).toBe(421)
      expect((yield* post({ authorization: `Bearer ${"k".repeat(40)}` }, "x".repeat(2000))).status).toBe(413)
    }).pipe(Effect.provide(RandomBytes.live)), { timeout: 60_000 })

  it.scoped("a session id the server does not know is 404 (MCP Streamable HTTP, session management); a non-initialize request without one is 400", () =>
    Effect.gen(function* () {
      const { url } = yield* serveHttp({ port: 0, token: "k".repeat(40), sub: "p" }, () => new McpServer({ name: "x", version: "1" }))
      const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      const post = (headers: Record<string, string>) =>
        Effect.promise(() => fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${"k".repeat(40)}`, ...headers }, body: list }))
      const unknown = yield* post({ "mcp-session-id": "no-such-session" })
      expect(unknown.status).toBe(404)
      expect(yield* Effect.promise(() => unknown.text())).toBe("no such session")
      expect((yield* post({})).status).toBe(400)
    }).pipe(Effect.provide(RandomBytes.live)), { timeout: 60_000 })
})

