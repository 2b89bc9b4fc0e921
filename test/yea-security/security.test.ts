// Security regressions: one test per finding of the security review in
// ../shared/reference/yea/design.md ("Security review"), named after it, and one for the advisory it
// mentions (GHSA-8mvj-4xpr-rmqw). Each test shows the attack refused here, with its §7 code.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, TestClock } from "effect"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as net from "node:net"
import { serveHttpBridge } from "../../src/bind/yea-http/server.js"
import { Signer } from "../../src/kernel/services.js"
import { makeMemoryJournal } from "../../src/store/memory/atomic.js"
import { makeJournaledMap } from "../../src/store/memory/yea-map.js"
import { consentRequestFor } from "../../src/yea/consent.js"
import { CALENDAR_ID } from "../../src/examples/calendar.js"
import { SHOP_ID, shopService } from "../../src/examples/shop.js"
import type { FinalReply } from "../../src/yea/frame.js"
import { decodeGrant, issueRootGrant } from "../../src/yea/grant.js"
import { makeLineReader } from "../../src/yea/ndjson.js"
import { checkParams } from "../../src/yea/params.js"
import { PROOF_WINDOW_SECONDS, signProof } from "../../src/yea/proof.js"
import { decodeProposal, proposalHash } from "../../src/yea/proposal.js"
import { makeService } from "../../src/yea/service/runtime.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { AGENT, MALLORY, NOW, agentKey, ask, check, commit, delegate, issue, malloryKey, principalKey, rawRoot, rawToken, seed, withSigner } from "../yea/_helpers.js"
import { atNow, calendar, clientOf, shop, stores } from "../yea-service/support.js"

const usd = (max: number) => ({ of: "spend", max, scale: 2, unit: "USD" })
const policy = (total = 10_000) => [{ svc: [SHOP_ID, CALENDAR_ID] }, { risk: "low" }, { each: usd(4000) }, { total: usd(total) }, { exp: NOW + 3600 }]
const small = { items: [{ sku: "m01", qty: 1 }], deliver: "2026-10-01" } // 9.49 + 5.99 = 15.48 USD
const kind = (r: FinalReply) => (r.kind === "ERROR" ? `ERROR ${r.code}` : r.kind)
const OTHER_PRINCIPAL = seed(5)

/** An agent under the policy, greeted, and the proposals it got for a small order. */
const ordered = (service: Effect.Effect.Success<typeof shop>) =>
  Effect.gen(function* () {
    const agent = yield* clientOf(service, { grants: [issue(policy())] })
    yield* agent.hello()
    const ps = yield* agent.intent("shop.order", small)
    if (ps.kind !== "PROPOSALS") throw new Error(kind(ps))
    return { agent, ps }
  })

/** One raw HTTP exchange on loopback; resolves with what came back (or "" on a reset). */
const rawHttp = (port: number, bytes: string, destroyAfterWrite = false): Promise<string> =>
  new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => {
      s.write(bytes)
      if (destroyAfterWrite) s.destroy()
    })
    let got = ""
    const timer = setTimeout(() => s.destroy(), 10_000)
    s.on("data", (d: Buffer) => void (got += d.toString()))
    s.on("error", () => undefined)
    s.on("close", () => {
      clearTimeout(timer)
      resolve(got)
    })
  })

describe("security review, High", () => {
  it.scopedLive("a malformed or aborted HTTP request does not take the bridge down", () =>
    Effect.gen(function* () {
      const { port, url } = yield* serveHttpBridge(yield* shop, { port: 0 })
      // Aborted mid-body, a request line that is not HTTP, a body that is not JSON, a lying length.
      yield* Effect.promise(() => rawHttp(port, "POST /yea HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"yea\":1,", true))
      yield* Effect.promise(() => rawHttp(port, "\x00\x01 GARBAGE\r\n\r\n"))
      const notJson = yield* Effect.promise(() => fetch(url, { method: "POST", body: "{not json" }).then((r) => r.text()))
      expect(JSON.parse(notJson.trim()).code).toBe("bad_frame")
      yield* Effect.promise(() => rawHttp(port, "POST /yea HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{\"yea\":1,\"id\":\"x\",\"verb\":\"HELLO\"}"))
      const brief = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/.well-known/yea`).then((r) => r.json() as Promise<{ kind: string }>))
      expect(brief.kind).toBe("BRIEF")
    }).pipe(Effect.provide(stores)))

  it.effect("concurrent commits cannot exceed a total: it is reserved atomically before the effect (§6.3)", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const agent = yield* clientOf(service, { grants: [issue(policy(5000))] })
      yield* agent.hello()
      const proposals = yield* Effect.forEach(Array.from({ length: 12 }), () =>
        Effect.map(agent.intent("shop.order", small), (r) => (r.kind === "PROPOSALS" ? r.proposals[0] : undefined)))
      const replies = yield* Effect.forEach(proposals, (p) => agent.commit(p!), { concurrency: "unbounded" })
      const receipts = replies.filter((r) => r.kind === "RECEIPT").length
      // 50.00 USD of 15.48 USD orders: three fit, the fourth would be 61.92.
      expect(receipts).toBe(3)
      expect(replies.filter((r) => kind(r) === "ERROR consent_required")).toHaveLength(9)
    }).pipe(Effect.provide(stores)))

  it.effect("a consent request for another service's (or another) proposal is never shown for signing (§6.6)", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const { agent, ps } = yield* ordered(service)
      const shown = ps.proposals[0]
      const real = consentRequestFor(shown, SHOP_ID, principalKey)
      const forged = (consent: Record<string, unknown>): FinalReply => ({ yea: 1, id: "s", re: "c", kind: "ERROR", code: "consent_required", message: "ok", consent: { ...real, ...consent } }) as FinalReply
      // Behind a friendly summary: another service, another proposal's hash, another capability.
      for (const c of [{ service: "bank.example", summary: "Buy 1 coffee" }, { hash: ps.proposals[1].hash }, { capability: "shop.refund" }, { proposal: "p_never_shown" }]) {
        const r = yield* Effect.either(agent.consentOf(forged(c)))
        expect(Either.isLeft(r) && r.left.reason, JSON.stringify(c)).toBe("conflict")
      }
      expect((yield* agent.consentOf(forged({}))).consent.hash).toBe(shown.hash)
    }).pipe(Effect.provide(stores)))
})

describe("security review, Medium", () => {
  it.effect("a proposal from an anonymous INTENT, or made for another agent, cannot be committed (§4.4)", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const anonymous = yield* clientOf(service, {})
      yield* anonymous.hello()
      const anon = yield* anonymous.intent("shop.order", small)
      if (anon.kind !== "PROPOSALS") throw new Error(kind(anon))
      const agent = yield* clientOf(service, { grants: [issue(policy())] })
      yield* agent.hello()
      expect(kind(yield* agent.commit(anon.proposals[0]))).toBe("ERROR forbidden")
      const mine = yield* agent.intent("shop.order", small)
      if (mine.kind !== "PROPOSALS") throw new Error(kind(mine))
      const mallory = yield* clientOf(service, { grants: [issue(policy(), malloryKey)] }, MALLORY)
      yield* mallory.hello()
      expect(kind(yield* mallory.commit(mine.proposals[0]))).toBe("ERROR forbidden")
    }).pipe(Effect.provide(stores)))

  it.effect("a replayed COMMIT does not leak another principal's (or agent's) receipt", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* makeService(yield* shopService([principalKey, keyFromSeed(OTHER_PRINCIPAL)]))
      const { agent, ps } = yield* ordered(service)
      const receipt = yield* agent.commit(ps.proposals[0])
      if (receipt.kind !== "RECEIPT") throw new Error(kind(receipt))
      const otherGrant = withSigner(OTHER_PRINCIPAL, issueRootGrant({ sub: malloryKey, caveats: policy(), nonce: "o" }))
      const mallory = yield* clientOf(service, { grants: [otherGrant] }, MALLORY)
      yield* mallory.hello()
      const replay = yield* mallory.commit(ps.proposals[0])
      expect(replay.kind).toBe("ERROR")
      expect(JSON.stringify(replay)).not.toContain(receipt.receipt.id)
    }).pipe(Effect.provide(stores)))

  it.effect("the conflict error does not reveal the proposal's hash (§4.4)", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const { agent, ps } = yield* ordered(service)
      const bad = yield* agent.commit({ id: ps.proposals[0].id, hash: "A" + ps.proposals[0].hash.slice(1) })
      expect(kind(bad)).toBe("ERROR conflict")
      expect(JSON.stringify(bad)).not.toContain(ps.proposals[0].hash)
    }).pipe(Effect.provide(stores)))

  it.effect("a retried commit is not refused by the spend it used itself (replay skips limits, §4.4)", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const agent = yield* clientOf(service, { grants: [issue(policy(1548))] })
      yield* agent.hello()
      const ps = yield* agent.intent("shop.order", small)
      if (ps.kind !== "PROPOSALS") throw new Error(kind(ps))
      const first = yield* agent.commit(ps.proposals[0])
      if (first.kind !== "RECEIPT") throw new Error(kind(first))
      const retry = yield* agent.commit(ps.proposals[0])
      expect(retry.kind === "RECEIPT" && retry.replay === true && retry.receipt.id === first.receipt.id).toBe(true)
    }).pipe(Effect.provide(stores)))

  it.effect("\"did you mean\" suggestions do no work on huge names (the Levenshtein CPU DoS)", () =>
    Effect.gen(function* () {
      const schema = { query: "string" }
      const near = yield* Effect.flip(checkParams(schema, { qurey: "x" }))
      expect(JSON.stringify(near)).toContain("query")
      // A 200,000-character name gets no suggestion (distance runs only on names up to 64 characters).
      const huge = "q" + "u".repeat(199_999)
      const far = yield* Effect.flip(checkParams(schema, { [huge]: "x" }))
      expect(far.reason).toBe("invalid_params")
      expect(far.fix).toBeUndefined()
    }))
})

describe("security review, Low", () => {
  it.effect("EXPAND handles are bound to the key that requested them (§4.6)", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const agent = yield* clientOf(service, { grants: [issue(policy())] })
      yield* agent.hello()
      const menu = yield* agent.ask("shop.search", {}, { budget: 300 })
      if (menu.kind !== "ANSWER" || menu.more === undefined) throw new Error("no handle")
      const mallory = yield* clientOf(service, {}, MALLORY)
      yield* mallory.hello()
      expect(kind(yield* mallory.expand(menu.more[0].handle))).toBe("ERROR unauthorized")
      expect((yield* agent.expand(menu.more[0].handle)).kind).toBe("ANSWER")
    }).pipe(Effect.provide(stores)))

  it.effect("the auto-frame dedupe window outlasts the proof's validity (§4.3.1: at least 900 s)", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* calendar
      const grant = issue([{ svc: [CALENDAR_ID] }, { risk: "low" }])
      const proof = yield* Effect.provide(signProof(CALENDAR_ID, { verb: "INTENT", capability: "calendar.reschedule", auto: true, frameId: "a1" }), Signer.fromSeed(AGENT))
      const frame = { yea: 1, id: "a1", verb: "INTENT", capability: "calendar.reschedule", params: { event: "1:1 with Ana" }, auto: true, grants: [grant], proof }
      const first = yield* service.handle(structuredClone(frame), () => Effect.void)
      expect(first.kind).toBe("RECEIPT")
      // Replayed at the last second the proof is still accepted: the memory still holds it.
      yield* TestClock.adjust(`${PROOF_WINDOW_SECONDS - 1} seconds`)
      const again = yield* service.handle(structuredClone(frame), () => Effect.void)
      expect(again.kind === "RECEIPT" && again.replay === true && first.kind === "RECEIPT" && again.receipt.id === first.receipt.id).toBe(true)
      expect(PROOF_WINDOW_SECONDS).toBeLessThan(900)
    }).pipe(Effect.provide(stores)))

  it("risk \"toString\" fails closed, in a caveat and in a proposal", () => {
    expect(check({ grants: [rawRoot([{ risk: "toString" }])], request: commit({ risk: "low" }) }).code).toBe("forbidden")
    expect(check({ grants: [issue([{ risk: "low" }])], request: commit({ risk: "toString" }) }).code).not.toBe("ok")
    const base = { id: "p", capability: "c", summary: "s", effects: [], risk: "toString", undo: null, expires: NOW + 60 }
    const p = { ...base, hash: Either.getOrThrow(proposalHash(base)) }
    expect(Either.isLeft(decodeProposal(p))).toBe(true)
  })

  it.effect("concurrent failing UNDOs each answer with their own re", () =>
    Effect.gen(function* () {
      yield* atNow
      const service = yield* shop
      const ids = Array.from({ length: 24 }, (_, i) => `u${i}`)
      const replies = yield* Effect.forEach(ids, (id) => service.handle({ yea: 1, id, verb: "UNDO", receipt: `r_missing_${id}` }, () => Effect.void), { concurrency: "unbounded" })
      expect(replies.map((r) => r.re)).toEqual(ids)
      expect(replies.every((r) => r.kind === "ERROR")).toBe(true)
    }).pipe(Effect.provide(stores)))

  it("grant selection follows the proposal's principal (§4.4, §6.6)", () => {
    const other = withSigner(OTHER_PRINCIPAL, issueRootGrant({ sub: agentKey, caveats: [{ svc: ["shop.example"] }], nonce: "x" }))
    const mine = issue([{ svc: ["shop.example"] }])
    const trusted = [principalKey, keyFromSeed(OTHER_PRINCIPAL)]
    // The other principal's grant comes first and would allow it, but the proposal is principalKey's.
    const r = check({ grants: [other, mine], request: commit(), trusted, principal: principalKey })
    expect([r.code, r.index]).toEqual(["ok", 1])
    expect(check({ grants: [other], request: commit(), trusted, principal: principalKey }).code).not.toBe("ok")
  })

  it("the 1 MiB frame limit is enforced as the bytes arrive, without holding the frame", () => {
    const reader = makeLineReader()
    const piece = new Uint8Array(64 * 1024).fill(0x61)
    const events = []
    for (let i = 0; i < 17; i++) events.push(...reader.push(piece))
    expect(events.map((e) => e._tag)).toEqual(["Oversized"])
    expect(reader.buffered()).toBeLessThanOrEqual(1024 * 1024)
    expect(reader.push(new TextEncoder().encode("\n{}\n")).map((e) => e._tag)).toEqual(["Line"])
  })

  it.effect("state maps are bounded: a full map refuses new keys instead of growing", () =>
    Effect.gen(function* () {
      const map = makeJournaledMap<number>(yield* makeMemoryJournal, "test", 2)
      yield* map.set("a", 1)
      yield* map.set("b", 2)
      const full = yield* Effect.flip(map.set("c", 3))
      expect(full._tag).toBe("StoreError")
      yield* map.set("a", 4) // an existing key is still updated
    }))

  it("checkGrant does not throw on a null caveat: it is forbidden", () => {
    for (const caveat of [null, 0, "svc", [], {}]) {
      expect(check({ grants: [rawRoot([caveat])], request: ask() }).code, JSON.stringify(caveat)).toBe("forbidden")
    }
  })
})

describe("GHSA-8mvj-4xpr-rmqw: base64url has one spelling, so a total cannot be restarted", () => {
  /** The same bytes spelled differently: the last character's unused low bits set. */
  const respell = (s: string): string => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    const last = alphabet.indexOf(s[s.length - 1])
    const other = s.slice(0, -1) + alphabet[last | 1]
    return other === s ? s.slice(0, -1) + alphabet[last | 2] : other
  }

  it("a re-encoded signature, key or token is refused (unauthorized), never a new block id", () => {
    const token = issue([{ svc: ["shop.example"] }, { total: usd(1000) }])
    const g = Either.getOrThrow(decodeGrant(token))
    const s2 = respell(g.root.s)
    expect(s2).not.toBe(g.root.s)
    // Both spellings decode to the same bytes, which is what made the attack work.
    expect(Buffer.from(decodeLoose(s2)).equals(Buffer.from(decodeLoose(g.root.s)))).toBe(true)
    expect(check({ grants: [rawToken([{ p: g.root.raw, s: s2 }])], request: ask() }).code).toBe("unauthorized")
    const iss2 = respell(principalKey)
    expect(check({ grants: [rawToken([{ p: { ...(g.root.raw as object), iss: iss2 }, s: g.root.s }])], request: ask() }).code).toBe("unauthorized")
    expect(check({ grants: [respell(token)], request: ask() }).code).toBe("unauthorized")
  })
})

describe("alongside the advisory", () => {
  it("a svc caveat covers a service only if every list names it", () => {
    const root = issue([{ svc: ["shop.example", "calendar.example"] }])
    const narrowed = delegate(root, AGENT, [{ svc: ["calendar.example"] }], agentKey)
    expect(check({ grants: [narrowed], request: ask("calendar.find", "calendar.example") }).code).toBe("ok")
    expect(check({ grants: [narrowed], request: ask() }).code).toBe("forbidden")
  })

  it.effect("store files are created 0600", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "yea-sec-"))
      const file = join(dir, "state.db")
      yield* Effect.scoped(Layer.build(SqliteStore.layer(file)))
      expect(statSync(file).mode & 0o777).toBe(0o600)
      rmSync(dir, { recursive: true, force: true })
    }))
})

/** Base64url decoding that ignores the unused bits, as the vulnerable decoder did. */
const decodeLoose = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64url"))
