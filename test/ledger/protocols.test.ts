// The Writ executor's and the YEA runtime's decisions reach the decision ledger
// through accounting's DecisionEvents (the protocols never import the ledger), and `stats` groups
// them by protocol, principal and reason with the guard's own decisions.
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Stream } from "effect"
import { runDemo } from "../../src/examples/yea-demo.js"
import { exampleRuntime } from "../../src/examples/runtime.js"
import { stateLayer } from "../../src/app/yea-serve.js"
import { DecisionEvents, type ProtocolDecision, protocolDecision } from "../../src/accounting/decision-events.js"
import { ledgerSubscriber, LedgerStore, readLedger, stats } from "../../src/ledger/index.js"
import * as MemoryWrit from "../../src/store/memory/writ-stores.js"
import { callAnswerJson } from "../../src/writ/executor/executor.js"
import { Received } from "../../src/writ/verify.js"
import { identity } from "../../src/writ/sign.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { connectInProcess } from "../../src/yea/inproc.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { act, call, key, ok, rig, scripted, settable, writ } from "../writ-executor/fixtures.js"
import { AGENT, PRINCIPAL } from "../yea/_helpers.js"
import { events, memoryLedger } from "./harness.js"

const protocolLines = Effect.map(events, (ev) => ev.flatMap((e) => (e.type === "protocol" ? [e.decision] : [])))
const withLedger = <A, E, R>(eff: Effect.Effect<A, E, R>) => eff.pipe(Effect.provide(ledgerSubscriber.pipe(Layer.provideMerge(memoryLedger()))))

describe("DecisionEvents: protocolDecision", () => {
  it("keeps valid fields, hashes identifiers and operations outside the patterns, never yields an invalid decision", () => {
    const d = protocolDecision({
      protocol: "writ", kind: "consumed", principal: "did:key:z6Mk", subject: "has spaces in it", operation: "book a flight!",
      reason: "Not A Code", amounts: [{ name: "count:abc", amount: "1" }, { name: "bad name", amount: "2.5" }, { name: "x", amount: "1e3" }]
    })
    expect(d.principal).toBe("did:key:z6Mk")
    expect(d.subject).toMatch(/^h:[A-Za-z0-9_-]{43}$/)
    expect(d.operation).toMatch(/^h:[A-Za-z0-9_-]{43}$/)
    expect(d.reason).toBe("unknown_reason")
    expect(d.amounts).toEqual([{ name: "count:abc", amount: "1" }, { name: expect.stringMatching(/^h:/), amount: "2.5" }])
    expect(protocolDecision({ protocol: "yea", kind: "refused", principal: null, subject: undefined })).toEqual({ protocol: "yea", kind: "refused", principal: "-", subject: "-" })
  })
})

describe("the Writ executor publishes its section 7 decisions", () => {
  const A = key(11)
  const B = key(12)
  const E = key(13)
  it.scoped("accepted with count/total consumed, refused with the signed or unsigned reason", () =>
    withLedger(Effect.gen(function*() {
      const stores = (yield* Layer.build(MemoryWrit.layer)) as Context.Context<StoreContext>
      const app = scripted(() => Effect.succeed(ok()))
      const sink = yield* DecisionEvents
      const ex = yield* rig(stores, { executorKey: E, accept: [A], app: app.service }).pipe(Effect.provideService(DecisionEvents, sink))
      const w1 = writ(A, B, { act: act("travel"), uses: { t: "count", v: 1 }, amount: { t: "total", v: 1000 } })
      const w2 = writ(B, E, { act: act("travel"), uses: { t: "count", v: 1 }, amount: { t: "total", v: 1000 } }, w1)
      const first = call(B, [w1, w2], "travel/book", { amount: 600 })
      expect(callAnswerJson(yield* ex.call(first))).toMatchObject({ tally: { st: "ok" } })
      const second = call(B, [w1, w2], "travel/book", { amount: 100 })
      expect(callAnswerJson(yield* ex.call(second))).toMatchObject({ tally: { st: "failed", err: { code: "count_exhausted" } } })
      expect(callAnswerJson(yield* ex.call(new Received("{")))).toEqual({ error: "noncanonical" })
      expect(callAnswerJson(yield* ex.call({ ...first, op: "travel/other" }))).toEqual({ error: "bad_signature" })
      const got = yield* protocolLines
      const short = (w: Record<string, unknown>) => identity(w as never).slice(0, 8)
      expect(got).toEqual<Array<ProtocolDecision>>([
        { protocol: "writ", kind: "accepted", principal: B.did, subject: identity(first), operation: "travel/book" },
        {
          protocol: "writ", kind: "consumed", principal: B.did, subject: identity(first), operation: "travel/book",
          amounts: [
            { name: `count:${short(w1)}`, amount: "1" }, { name: `count:${short(w2)}`, amount: "1" },
            { name: `total:amount:${short(w1)}`, amount: "600" }, { name: `total:amount:${short(w2)}`, amount: "600" }
          ]
        },
        { protocol: "writ", kind: "refused", principal: B.did, subject: identity(second), operation: "travel/book", reason: "count_exhausted" },
        { protocol: "writ", kind: "refused", principal: "-", subject: "-", reason: "noncanonical" },
        { protocol: "writ", kind: "refused", principal: B.did, subject: identity({ ...first, op: "travel/other" }), operation: "travel/other", reason: "bad_signature" }
      ])
    })).pipe(Effect.withClock(settable().clock)))
})

describe("the YEA runtime publishes proposals, consent, commits, undos and uses spent", () => {
  it.live("the whole YEA demo flow in-process, recorded in one ledger", () =>
    withLedger(Effect.gen(function*() {
      const trust = [keyFromSeed(PRINCIPAL)]
      const sink = yield* DecisionEvents
      const runtimes = {
        calendar: yield* exampleRuntime("calendar", trust).pipe(Effect.provideService(DecisionEvents, sink)),
        shop: yield* exampleRuntime("shop", trust).pipe(Effect.provideService(DecisionEvents, sink))
      }
      const result = yield* runDemo((s) => Effect.succeed(connectInProcess(runtimes[s])), { principal: PRINCIPAL, agent: AGENT }, () => Effect.void)
      expect(result.failures).toEqual([])
      const got = (yield* protocolLines).filter((d) => d.protocol === "yea")
      const kinds = new Set(got.map((d) => d.kind))
      for (const k of ["proposal", "consent_required", "commit", "undo", "uses_spent", "refused"] as const) expect(kinds, k).toContain(k)
      const agent = keyFromSeed(AGENT)
      expect(got.every((d) => d.principal === agent)).toBe(true)
      // Every commit of a proposal carrying `uses` has its spend beside it, as plain decimals.
      const spent = got.filter((d) => d.kind === "uses_spent")
      expect(spent.every((d) => d.amounts !== undefined && d.amounts.every((a) => /^[0-9]+(\.[0-9]+)?$/.test(a.amount)))).toBe(true)
      expect(spent.every((d) => got.some((c) => c.kind === "commit" && c.subject === d.subject))).toBe(true)
      const s = yield* stats(Stream.unwrap(Effect.map(LedgerStore, (st) => readLedger(st.lines))))
      expect(s.rows.some((r) => r.protocol === "yea" && r.reason === "consent_required")).toBe(true)
      expect(s.summary).toContain("YEA:")
    }).pipe(Effect.scoped, Effect.provide(stateLayer()))), 120_000)
})
