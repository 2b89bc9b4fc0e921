// Seed "Fingerprints and deduplication": deterministic semantic fingerprints over
// plain JSON only, the four dedup scopes, and a failed action that is never a completed duplicate.
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { dedup, fingerprint, GuardAbort } from "../../src/ledger/index.js"
import { action, cost, guardFor, memoryLedger, ran } from "./harness.js"

const fp = (a: Parameters<typeof fingerprint>[0], scope?: Parameters<typeof fingerprint>[1]) => Effect.runSync(fingerprint(a, scope))

describe("fingerprints", () => {
  it.prop("do not depend on member order or the action's id, and do on the metadata", [fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.integer(), { minKeys: 1 })], ([m]) => {
    const reversed = Object.fromEntries(Object.entries(m).reverse())
    const a = action("tool", m, cost(0, "0"))
    expect(fp(a)).toBe(fp({ ...a, id: "other", metadata: reversed }))
    // ... and do depend on the values.
    expect(fp(a)).not.toBe(fp({ ...a, metadata: { ...m, EXTRA: 1 } }))
  }, { fastCheck: { seed: 9009, numRuns: 100 } })

  it.effect("refuse anything that is not plain JSON, naming the member (non_json_metadata)", () =>
    Effect.gen(function*() {
      for (const bad of [{ when: new Date(0) }, { f: () => 1 }, { n: 1n }, { m: new Map() }, { deep: { x: undefined } }, { nan: Number.NaN }]) {
        const e = yield* Effect.flip(fingerprint(action("tool", bad as never, cost(0, "0"))))
        expect(e).toMatchObject({ _tag: "LedgerError", reason: "non_json_metadata" })
        expect(e.path).toBeDefined()
      }
    }))

  it("scopes: exact ignores state, phase and retry; the others tell them apart", () => {
    const a = action("search", { q: "x" }, cost(0, "0"), { state: "s1", phase: "plan", retry: 0 })
    const b = { ...a, state: "s2", phase: "act", retry: 1 }
    expect(fp(a, "exact")).toBe(fp(b, "exact"))
    expect(fp(a, "once_per_state")).not.toBe(fp(b, "once_per_state"))
    expect(fp(a, "once_per_state")).toBe(fp({ ...b, state: "s1" }, "once_per_state"))
    expect(fp(a, "once_per_phase")).not.toBe(fp(b, "once_per_phase"))
    expect(fp(a, "once_per_phase")).toBe(fp({ ...b, phase: "plan" }, "once_per_phase"))
    expect(fp(a, "retry_aware")).not.toBe(fp(b, "retry_aware"))
    expect(fp(a, "retry_aware")).toBe(fp({ ...b, retry: 0 }, "retry_aware"))
    // Scopes never collide with each other.
    expect(new Set(["exact", "once_per_state", "once_per_phase", "retry_aware"].map((s) => fp(a, s as never))).size).toBe(4)
  })
})

describe("dedup in the guard", () => {
  it.effect("once_per_state: the same action runs again once the state changed", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: dedup("once_per_state") })
      yield* g.guard(action("fetch", { url: "u" }, cost(0, "0"), { state: "v1" }), ran(1, cost(0, "0")))
      const dup = yield* Effect.flip(g.guard(action("fetch", { url: "u" }, cost(0, "0"), { state: "v1" }), ran(2, cost(0, "0"))))
      expect(dup._tag === "ActionDenied" && dup.decision.reason).toBe("duplicate_action")
      expect(yield* g.guard(action("fetch", { url: "u" }, cost(0, "0"), { state: "v2" }), ran(3, cost(0, "0")))).toBe(3)
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("retry_aware: a deliberate retry is a new attempt, a repeat of the same attempt a duplicate; an aborted one is no duplicate", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: dedup("retry_aware") })
      yield* Effect.flip(g.guard(action("pay", { id: 7 }, cost(0, "0"), { retry: 0 }), Effect.fail(new GuardAbort({ detail: "network down before sending" }))))
      // The aborted attempt holds nothing: the same attempt may run.
      yield* g.guard(action("pay", { id: 7 }, cost(0, "0"), { retry: 0 }), ran(1, cost(0, "0")))
      const again = yield* Effect.flip(g.guard(action("pay", { id: 7 }, cost(0, "0"), { retry: 0 }), ran(2, cost(0, "0"))))
      expect(again._tag === "ActionDenied" && again.decision.reason).toBe("duplicate_action")
      expect(yield* g.guard(action("pay", { id: 7 }, cost(0, "0"), { retry: 1 }), ran(3, cost(0, "0")))).toBe(3)
    }).pipe(Effect.provide(memoryLedger())))

  it.effect("once_per_phase: one per phase", () =>
    Effect.gen(function*() {
      const g = yield* guardFor({ policy: dedup("once_per_phase") })
      yield* g.guard(action("plan", {}, cost(0, "0"), { phase: "p1" }), ran(1, cost(0, "0")))
      expect((yield* Effect.flip(g.guard(action("plan", {}, cost(0, "0"), { phase: "p1" }), ran(2, cost(0, "0")))))._tag).toBe("ActionDenied")
      expect(yield* g.guard(action("plan", {}, cost(0, "0"), { phase: "p2" }), ran(3, cost(0, "0")))).toBe(3)
    }).pipe(Effect.provide(memoryLedger())))
})
