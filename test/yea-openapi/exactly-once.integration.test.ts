// A proposal runs at most once (SPEC §4.4 "MUST NOT execute again"), whatever happens around its
// COMMIT: the OpenAPI adapter served over yea:// (loopback) in front of an upstream that counts the
// writes it receives. A client that disconnects mid-COMMIT, an upstream slower than the commit's
// timeout, an upstream that answers 5xx after acting: one write upstream, and every later COMMIT of
// the proposal answers the outcome recorded for it. A `total` drawn by a commit whose outcome is
// unknown stays drawn; one drawn by a commit the upstream refused (nothing happened) is given back
// (§6.3).
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { stateLayer } from "../../src/app/yea-serve.js"
import { upstreamLayer } from "../../src/bind/yea-openapi/index.js"
import { connectTcp } from "../../src/bind/yea-tcp/client.js"
import { serveTcp } from "../../src/bind/yea-tcp/server.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { makeClient } from "../../src/yea/client.js"
import type { FinalReply } from "../../src/yea/frame.js"
import { fromOpenAPI, Upstream, type UpstreamRequest } from "../../src/yea/openapi/index.js"
import { yeaError } from "../../src/yea/reason.js"
import { intent, plans, type ServiceSpec } from "../../src/yea/service/define.js"
import type { StateContext } from "../../src/yea/service/env.js"
import { makeService, type YeaServiceRuntime } from "../../src/yea/service/runtime.js"
import { AGENT, issue, principalKey } from "../yea/_helpers.js"
import { startCountingUpstream } from "./counting-upstream.js"

const doc = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "notes.json"), "utf8")) as unknown
const agentLayer = Layer.merge(Signer.fromSeed(AGENT), RandomBytes.live)
const grant = issue([{ svc: ["notes.example", "pay.example"] }])

/** A test on memory stores of its own, its servers closed at its end. */
const isolated = <A, E>(eff: Effect.Effect<A, E, Scope.Scope | StateContext>) => Effect.scoped(eff).pipe(Effect.provide(stateLayer()))
const upstream = Effect.acquireRelease(Effect.promise(startCountingUpstream), (u) => Effect.promise(u.close))

/**
 * The runtime served on yea://127.0.0.1; `interrupted` is done once the transport has interrupted
 * a request's handling (its client went away).
 */
const served = (runtime: YeaServiceRuntime) =>
  Effect.gen(function* () {
    const interrupted = yield* Deferred.make<void>()
    const watched: YeaServiceRuntime = { ...runtime, handle: (frame, emit) => runtime.handle(frame, emit).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))) }
    const { url } = yield* serveTcp(watched, { port: 0 })
    return { url: new URL(url), interrupted }
  })

const agentAt = (url: URL) =>
  Effect.gen(function* () {
    const agent = yield* makeClient(yield* connectTcp(url, { timeoutMs: 60_000 }), { grants: [grant] }).pipe(Effect.provide(agentLayer))
    yield* agent.hello()
    return agent
  })

const notesService = (base: string, timeoutMs?: number) =>
  makeService(fromOpenAPI(doc, { base, id: "notes.example", trust: [principalKey] })).pipe(
    Effect.provide(upstreamLayer(timeoutMs === undefined ? {} : { timeoutMs }))
  )

const proposalOf = (r: FinalReply) => {
  if (r.kind !== "PROPOSALS") throw new Error(`expected PROPOSALS, got ${JSON.stringify(r)}`)
  return r.proposals[0]
}

const shape = (r: FinalReply) => (r.kind === "RECEIPT" ? `RECEIPT ${r.receipt.id}${r.replay === true ? " replay" : ""}` : r.kind === "ERROR" ? `ERROR ${r.code}: ${r.message}` : r.kind)

/** COMMITs again while the first one is still running (`unavailable`), until it has an answer. */
const settledCommit = (agent: Effect.Effect.Success<ReturnType<typeof agentAt>>, p: { id: string; hash: string }) =>
  Effect.gen(function* () {
    for (;;) {
      const r = yield* agent.commit(p)
      if (!(r.kind === "ERROR" && r.code === "unavailable")) return r
      yield* Effect.sleep("20 millis")
    }
  })

describe("YEA: a proposal runs at most once", () => {
  it.live("client disconnects mid-COMMIT: one POST upstream, the second COMMIT answers the recorded outcome", () =>
    isolated(
      Effect.gen(function* () {
        const up = yield* upstream
        up.state.answer = "held"
        const { url, interrupted } = yield* served(yield* notesService(up.base))
        const p = yield* Effect.scoped(Effect.flatMap(agentAt(url), (a) => Effect.map(a.intent("notes.create_note", { body: { text: "pay rent" } }), proposalOf)))
        // The first agent commits and goes away while the upstream holds its answer.
        const scope = yield* Scope.make()
        const first = yield* agentAt(url).pipe(Scope.extend(scope))
        const committing = yield* Effect.fork(first.commit(p))
        yield* Effect.promise(() => up.arrived(1))
        yield* Scope.close(scope, Exit.void)
        yield* Fiber.interrupt(committing)
        yield* Deferred.await(interrupted)
        // The upstream acted and answers now; the proposal is committed again by a new connection.
        up.release()
        const second = yield* agentAt(url)
        const replies: Array<FinalReply> = [yield* settledCommit(second, p), yield* second.commit(p)]
        expect(up.writes).toEqual(["POST /api/notes"])
        // The commit ran to its end without its caller: its receipt is what every replay answers.
        expect(replies.map(shape)).toEqual([shape(replies[0]), shape(replies[0])])
        expect(replies[0].kind === "RECEIPT" && replies[0].replay).toBe(true)
      })
    ), { timeout: 60_000 })

  it.live("upstream slower than the commit's timeout: one POST, re-COMMITs answer the unknown outcome", () =>
    isolated(
      Effect.gen(function* () {
        const up = yield* upstream
        up.state.answer = "held"
        const { url } = yield* served(yield* notesService(up.base, 300))
        const agent = yield* agentAt(url)
        const p = proposalOf(yield* agent.intent("notes.create_note", { body: { text: "slow" } }))
        const replies: Array<FinalReply> = []
        for (let i = 0; i < 3; i++) replies.push(yield* agent.commit(p))
        expect(up.writes).toEqual(["POST /api/notes"])
        // §7 `conflict`: the world may have changed; every COMMIT answers the same recorded outcome.
        expect(replies[0].kind === "ERROR" && replies[0].code).toBe("conflict")
        expect(replies[0].kind === "ERROR" && replies[0].message).toContain("outcome is unknown")
        expect(new Set(replies.map(shape)).size).toBe(1)
      })
    ), { timeout: 60_000 })

  it.live("upstream answers 5xx after acting: re-COMMITs send nothing and answer the recorded outcome", () =>
    isolated(
      Effect.gen(function* () {
        const up = yield* upstream
        up.state.answer = "failed_after_acting"
        const { url } = yield* served(yield* notesService(up.base))
        const agent = yield* agentAt(url)
        const p = proposalOf(yield* agent.intent("notes.create_note", { body: { text: "twice?" } }))
        const replies: Array<FinalReply> = []
        for (let i = 0; i < 3; i++) replies.push(yield* agent.commit(p))
        expect(up.writes).toEqual(["POST /api/notes"])
        expect(replies[0].kind === "ERROR" && replies[0].code).toBe("conflict")
        expect(replies[0].kind === "ERROR" && replies[0].message).toContain("upstream answered 503")
        expect(new Set(replies.map(shape)).size).toBe(1)
        // A refusal is an outcome too (nothing happened upstream): answered again, never re-sent.
        up.state.answer = "refused"
        const q = proposalOf(yield* agent.intent("notes.create_note", { body: { text: "refused" } }))
        const refused = [yield* agent.commit(q), yield* agent.commit(q)]
        expect(up.writes).toHaveLength(2)
        expect(refused.map(shape)).toEqual([shape(refused[0]), shape(refused[0])])
        expect(refused[0].kind === "ERROR" && refused[0].code).toBe("invalid_params")
      })
    ), { timeout: 60_000 })

  // A service whose commits spend what their proposal says (`uses`), paid through the upstream.
  const payService = (base: string): ServiceSpec<Upstream> => ({
    id: "pay.example",
    name: "Pay",
    trust: [principalKey],
    capabilities: {
      "pay.send": intent({
        params: { cents: "int" },
        risk: "low",
        plan: ({ params }) =>
          Effect.succeed(plans({
            summary: `pay ${String(params.cents)} cents`,
            effects: [{ op: "create", target: "payment" }],
            uses: { spend: { amount: Number(params.cents), scale: 2, unit: "USD" } },
            action: { method: "POST", url: `${base}/pay`, body: { cents: params.cents } } satisfies UpstreamRequest
          })),
        commit: (action) =>
          Effect.flatMap(Upstream, (u) => u.send(action as UpstreamRequest)).pipe(
            Effect.filterOrFail((r) => r.status < 300, (r) => yeaError(r.status >= 500 ? "unavailable" : "invalid_params", `upstream answered ${r.status}`)),
            Effect.map((r) => r.body)
          )
      })
    }
  })

  it.live("the total reservation of a commit whose outcome is unknown stays drawn; a refused one is given back", () =>
    isolated(
      Effect.gen(function* () {
        const up = yield* upstream
        const { url } = yield* served(yield* makeService(payService(up.base)).pipe(Effect.provide(upstreamLayer())))
        const totalGrant = issue([{ svc: ["pay.example"] }, { total: { of: "spend", max: 10000, scale: 2, unit: "USD" } }])
        const agent = yield* makeClient(yield* connectTcp(url, { timeoutMs: 60_000 }), { grants: [totalGrant] }).pipe(Effect.provide(agentLayer))
        yield* agent.hello()
        const pay = (cents: number) => Effect.map(agent.intent("pay.send", { cents }), proposalOf)
        // 60.00 of 100.00: the upstream acts, then fails; the outcome is unknown and stays spent.
        up.state.answer = "failed_after_acting"
        const a = yield* pay(6000)
        expect((yield* agent.commit(a)).kind).toBe("ERROR")
        up.state.answer = "created"
        const b = yield* pay(6000)
        expect(shape(yield* agent.commit(b))).toContain("ERROR consent_required")
        // 40.00 refused upstream (nothing happened): given back, so another 40.00 still fits.
        up.state.answer = "refused"
        const c = yield* pay(4000)
        expect(shape(yield* agent.commit(c))).toContain("ERROR invalid_params")
        up.state.answer = "created"
        const d = yield* pay(4000)
        expect((yield* agent.commit(d)).kind).toBe("RECEIPT")
        // The unknown commit never ran again, and is still counted: nothing more fits.
        expect(shape(yield* agent.commit(a))).toContain("ERROR conflict")
        expect(shape(yield* agent.commit(yield* pay(1)))).toContain("ERROR consent_required")
        expect(up.writes).toEqual(["POST /api/pay", "POST /api/pay", "POST /api/pay"])
      })
    ), { timeout: 60_000 })
})
