// Every directive's contract (directive.ts) in enforce and in shadow,
// capability negotiation derived from what an adapter demonstrably does, outcomes whose task must
// match the declared one, and value estimates whose learned state moves training_data_fingerprint.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import {
  type Action, type Adapter, type Directive, directivePolicy, initialFingerprint, makeValueEstimator, negotiate,
  recordObservation, recordOutcome, requireMode, tokenBudget, compose, type Usd, ValueEstimator, valueEstimatorLayer,
  verificationReserve, VERIFY_KIND
} from "../../src/ledger/index.js"
import { action, cost, events, guardFor, memoryLedger, ran } from "./harness.js"

/** A policy issuing `d` for actions of kind `kind`. */
const issuing = (kind: string, d: Directive) => directivePolicy(`issue:${d._tag}`, (a) => (a.kind === kind ? d : undefined))
const counting = () => {
  let n = 0
  return { run: <A>(v: A) => Effect.sync(() => { n++; return { value: v, actual: cost(1, "0") } }), count: () => n }
}
const decisions = Effect.map(events, (ev) => ev.flatMap((e) => (e.type === "decision" ? [e.decision] : [])))
const reservations = Effect.map(events, (ev) => ev.filter((e) => e.type === "reservation").length)

describe("directives in enforce (directive.ts)", () => {
  it.effect("allow runs; deny refuses with ActionDenied, nothing run or reserved", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(tokenBudget(100n), issuing("bad", { _tag: "deny" })) })
      const c = counting()
      expect(yield* g.guard(action("good", {}, cost(1, "0")), c.run("ok"))).toBe("ok")
      const e = yield* Effect.flip(g.guard(action("bad", {}, cost(1, "0")), c.run("no")))
      expect(e._tag).toBe("ActionDenied")
      expect(c.count()).toBe(1)
      expect(yield* reservations).toBe(1)
      expect((yield* decisions).map((d) => [d.directive._tag, d.allowed, d.reason])).toEqual([["allow", true, "allowed"], ["deny", false, "directive_issued"]])
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("modify is followed once: a modify of the replacement is DirectiveIssued, nothing runs", () =>
    Effect.gen(function*() {
      const cheaper: Action = action("llm.small", { prompt: "p" }, cost(10, "0"))
      const g = yield* guardFor({ policy: compose(tokenBudget(1000n), issuing("llm.big", { _tag: "modify", action: cheaper }), issuing("llm.small", { _tag: "modify", action: cheaper })) })
      const c = counting()
      const e = yield* Effect.flip(g.guardDetailed(action("llm.big", { prompt: "p" }, cost(900, "0")), c.run("big"), { modified: () => c.run("small") }))
      expect(e._tag === "DirectiveIssued" && e.decision).toMatchObject({ action_id: cheaper.id, directive: { _tag: "modify" } })
      expect(c.count()).toBe(0)
      expect(yield* reservations).toBe(0)
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("modify applied: the proposed action recorded as refused, the replacement runs and settles", () =>
    Effect.gen(function*() {
      const cheaper: Action = action("llm.small", { prompt: "p" }, cost(10, "0"))
      const g = yield* guardFor({ policy: compose(tokenBudget(1000n), issuing("llm.big", { _tag: "modify", action: cheaper })) })
      const ranWith: Array<string> = []
      const r = yield* g.guardDetailed(action("llm.big", { prompt: "p" }, cost(900, "0")), ran("big", cost(900, "0")), {
        modified: (a) => Effect.sync(() => { ranWith.push(a.kind); return { value: "small", actual: cost(8, "0") } })
      })
      expect(r.value).toBe("small")
      expect(ranWith).toEqual(["llm.small"])
      expect(r.decision).toMatchObject({ action_id: cheaper.id, allowed: true, reason: "allowed" })
      const ds = yield* decisions
      expect(ds.map((d) => [d.directive._tag, d.allowed])).toEqual([["modify", false], ["allow", true]])
      const settled = (yield* events).flatMap((e) => (e.type === "settlement" ? [[e.action_id, e.kept_tokens]] : []))
      expect(settled).toEqual([[cheaper.id, "8"]])
      // Without a way to run the replacement, the adapter cannot apply it.
      const e = yield* Effect.flip(g.guard(action("llm.big", {}, cost(900, "0")), ran("big", cost(900, "0"))))
      expect(e._tag === "DirectiveIssued" && e.decision.directive._tag).toBe("modify")
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("defer and reuse: DirectiveIssued carrying after_ms / action_id; nothing runs, nothing is reserved", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(tokenBudget(100n), issuing("slow", { _tag: "defer", after_ms: 30_000 }), issuing("again", { _tag: "reuse", action_id: "a-earlier" })) })
      const c = counting()
      const d = yield* Effect.flip(g.guard(action("slow", {}, cost(1, "0")), c.run(1)))
      expect(d._tag === "DirectiveIssued" && d.decision.directive).toEqual({ _tag: "defer", after_ms: 30_000 })
      const r = yield* Effect.flip(g.guard(action("again", {}, cost(1, "0")), c.run(2)))
      expect(r._tag === "DirectiveIssued" && r.decision.directive).toEqual({ _tag: "reuse", action_id: "a-earlier" })
      expect(c.count()).toBe(0)
      expect(yield* reservations).toBe(0)
      // A deferred action is not refused for good: proposed again under a policy that allows it, it runs.
      const later = yield* guardFor({ policy: tokenBudget(100n) })
      expect(yield* later.guard(action("slow", {}, cost(1, "0")), c.run(3))).toBe(3)
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("stop: this action and every later one through the guard are refused with the stop decision", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: compose(tokenBudget(100n), issuing("halt", { _tag: "stop" })) })
      const c = counting()
      yield* g.guard(action("work", {}, cost(1, "0")), c.run(1))
      const s = yield* Effect.flip(g.guard(action("halt", {}, cost(1, "0")), c.run(2)))
      expect(s._tag === "DirectiveIssued" && s.decision.directive._tag).toBe("stop")
      const after = yield* Effect.flip(g.guard(action("work", {}, cost(1, "0")), c.run(3)))
      expect(after._tag === "DirectiveIssued" && after.decision).toMatchObject({ directive: { _tag: "stop" }, reason: "directive_issued", policy: "issue:stop" })
      expect(c.count()).toBe(1)
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("force_verify: refused until a verify action (kept budget by the verification reserve) has run", () =>
    Effect.gen(function*() {
      const verified = yield* Ref.make(false)
      let flag = false
      const policy = compose(
        tokenBudget(100n),
        verificationReserve({ tokens: 20n }),
        directivePolicy("tests_first", (a) => (a.kind === "deploy" && !flag ? { _tag: "force_verify" } : undefined))
      )
      const g = yield* guardFor({ policy })
      // Generation takes what it may, never the reserve.
      yield* g.guard(action("generate", {}, cost(60, "0")), ran(0, cost(60, "0")))
      const starved = yield* Effect.flip(g.guard(action("generate", {}, cost(30, "0")), ran(0, cost(30, "0"))))
      expect(starved._tag === "ActionDenied" && starved.decision.reason).toBe("verification_reserve_protected")
      const first = yield* Effect.flip(g.guard(action("deploy", {}, cost(0, "0")), ran("deployed", cost(0, "0"))))
      expect(first._tag === "DirectiveIssued" && first.decision.directive._tag).toBe("force_verify")
      // The adapter runs the verify action the directive asks for; the reserve still has room for it.
      yield* g.guard(action(VERIFY_KIND, {}, cost(20, "0")), Effect.zipRight(Effect.sync(() => { flag = true }), Effect.as(Ref.set(verified, true), { value: 0, actual: cost(20, "0") })))
      expect(yield* Ref.get(verified)).toBe(true)
      expect(yield* g.guard(action("deploy", {}, cost(0, "0")), ran("deployed", cost(0, "0")))).toBe("deployed")
    }).pipe(Effect.provide(memoryLedger())))
})

describe("directives in shadow", () => {
  it.effect("every directive is recorded as the recommendation and the action runs as proposed", () =>
    Effect.gen(function*() {
      const all: ReadonlyArray<Directive> = [
        { _tag: "deny" }, { _tag: "defer", after_ms: 5 }, { _tag: "reuse", action_id: "x" }, { _tag: "stop" }, { _tag: "force_verify" },
        { _tag: "modify", action: action("other", {}, cost(1, "0")) }
      ]
      const g = yield* guardFor({ mode: "shadow", policy: compose(tokenBudget(100n), ...all.map((d) => issuing(d._tag, d))) })
      const c = counting()
      for (const d of all) yield* g.guard(action(d._tag, {}, cost(1, "0")), c.run(d._tag))
      // A stop in shadow does not stop anything either.
      yield* g.guard(action("after", {}, cost(1, "0")), c.run("after"))
      expect(c.count()).toBe(all.length + 1)
      expect((yield* decisions).map((d) => [d.directive._tag, d.allowed, d.recommended])).toEqual([
        ...all.map((d) => [d._tag, true, false]), ["allow", true, true]
      ])
    }).pipe(Effect.provide(memoryLedger())))
})

describe("capability negotiation (capability.ts)", () => {
  const claimsAll = { observe: ["actions", "tokens"] as const, control: ["block", "modify"] as const }
  const level = (a: Adapter) => Effect.map(negotiate(a), (n) => n.level)
  it.effect("the level is what the adapter does with the canary, whatever it claims; enforce needs block", () =>
    Effect.gen(function*() {
      const blocks: Adapter = { name: "hook", claimed: { observe: [], control: [] }, intercept: (_, d, perform) => (d._tag === "deny" ? Effect.void : perform) }
      const ignores: Adapter = { name: "prompt", claimed: claimsAll, intercept: (_, __, perform) => perform }
      const never: Adapter = { name: "skill", claimed: claimsAll }
      // Reports without an interception point demonstrate nothing; a report saying yes to everything is not observation.
      const reports: Adapter = { name: "log", claimed: claimsAll, reports: () => Effect.succeed(true) }
      const seen = new Set<string>()
      const honest: Adapter = { name: "honest", claimed: claimsAll, intercept: (a, _, perform) => Effect.zipRight(perform, Effect.sync(() => void seen.add(a.id))), reports: (a) => Effect.succeed(seen.has(a.id)) }
      const liar: Adapter = { ...honest, name: "liar", reports: () => Effect.succeed(true) }
      const broken: Adapter = { name: "broken", claimed: claimsAll, intercept: () => Effect.fail("boom"), reports: () => Effect.fail("boom") }
      expect(yield* level(blocks)).toBe("block")
      expect(yield* level(ignores)).toBe("observe")
      expect(yield* level(never)).toBe("advisory")
      expect(yield* level(reports)).toBe("advisory")
      expect(yield* level(honest)).toBe("observe")
      expect(yield* level(liar)).toBe("advisory")
      expect(yield* level(broken)).toBe("advisory")
      expect((yield* negotiate(never)).claimed).toEqual(claimsAll)
      const refused = yield* Effect.flip(requireMode("enforce", yield* negotiate(ignores)))
      expect(refused).toMatchObject({ reason: "enforce_requires_blocking" })
      yield* requireMode("shadow", yield* negotiate(ignores))
      yield* requireMode("enforce", yield* negotiate(blocks))
      // The guard refuses to be built in enforce over an adapter that did not block.
      const g = yield* Effect.flip(guardFor({ policy: tokenBudget(1n), capabilities: yield* negotiate(never) }))
      expect(g).toMatchObject({ reason: "enforce_requires_blocking" })
    }).pipe(Effect.provide(memoryLedger())))
})

describe("outcomes and value estimates", () => {
  it.effect("an outcome for another task than the declared one is refused; a matching one is recorded", () =>
    Effect.gen(function*() {
      const o = { task_id: "task-7", result: "success" as const, verified: true, verifier: "ci", action_ids: ["a1"] }
      const e = yield* Effect.flip(recordOutcome(o, { taskId: "task-8" }))
      expect(e).toMatchObject({ reason: "outcome_task_mismatch", path: "outcome.task_id" })
      yield* recordOutcome(o, { taskId: "task-7" })
      yield* recordOutcome({ ...o, task_id: "task-9" })
      const outs = (yield* events).flatMap((x) => (x.type === "outcome" ? [x.outcome.task_id] : []))
      expect(outs).toEqual(["task-7", "task-9"])
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("contextual observations also update the kind's fallback, and every one moves training_data_fingerprint", () =>
    Effect.gen(function*() {
      const est = yield* ValueEstimator
      const s0 = yield* est.state
      expect(s0.training_data_fingerprint).toBe(initialFingerprint("mandate.mean", "1"))
      expect(yield* est.estimate("search")).toMatchObject({ provenance: "prior", sample_size: 0, confidence: 0 })
      yield* recordObservation("search", "0.30" as Usd, "travel")
      yield* recordObservation("search", "0.10" as Usd, "travel")
      expect(yield* est.estimate("search", "travel")).toMatchObject({ provenance: "contextual", expected_gain_usd: "0.2", sample_size: 2 })
      // Another context falls back on the kind, which the contextual observations updated.
      expect(yield* est.estimate("search", "shopping")).toMatchObject({ provenance: "historical", expected_gain_usd: "0.2", sample_size: 2 })
      const s2 = yield* est.state
      expect(s2.training_data_fingerprint).not.toBe(s0.training_data_fingerprint)
      // Same version, same observations: same learned state; a different order of learning is another state.
      const other = yield* makeValueEstimator("mandate.mean", "1")
      yield* other.observe("search", "0.30" as Usd, "travel")
      yield* other.observe("search", "0.10" as Usd, "travel")
      expect((yield* other.state).training_data_fingerprint).toBe(s2.training_data_fingerprint)
      const swapped = yield* makeValueEstimator("mandate.mean", "1")
      yield* swapped.observe("search", "0.10" as Usd, "travel")
      yield* swapped.observe("search", "0.30" as Usd, "travel")
      expect((yield* swapped.state).training_data_fingerprint).not.toBe(s2.training_data_fingerprint)
      const lines = (yield* events).flatMap((x) => (x.type === "observation" ? [x.estimator.training_data_fingerprint] : []))
      expect(lines).toHaveLength(2)
      expect(lines[1]).toBe(s2.training_data_fingerprint)
      const bad = yield* Effect.flip(recordObservation("search", "0.1234567891" as Usd))
      expect(bad).toMatchObject({ reason: "invalid_usd" })
    }).pipe(Effect.provide(memoryLedger()), Effect.provide(valueEstimatorLayer())))

  it.effect("the guard asks the estimator when an action has no explicit value, and the value rule weighs it", () =>
    Effect.gen(function*() {
      const { valueVsCost } = yield* Effect.promise(() => import("../../src/ledger/index.js"))
      const g = yield* guardFor({ policy: valueVsCost("1" as Usd) })
      // Prior (gain 0) against a cost of 0.05: refused.
      const e = yield* Effect.flip(g.guard(action("search", {}, cost(0, "0.05")), ran(0, cost(0, "0.05"))))
      expect(e._tag === "ActionDenied" && e.decision.reason).toBe("value_below_cost")
      yield* recordObservation("search", "0.50" as Usd)
      expect(yield* g.guard(action("search", {}, cost(0, "0.05")), ran("ran", cost(0, "0.05")))).toBe("ran")
    }).pipe(Effect.provide(memoryLedger()), Effect.provide(valueEstimatorLayer())))
})
