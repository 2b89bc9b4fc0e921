// The privacy guarantees, as properties over random events:
// safe_telemetry holds no value outside an allowlist written here independently of the sanitizer,
// and no raw identifier or free text of the input; aggregate_export never emits a group under its
// minimum, nor an identifier. Plus: generalized timestamps on a safe_telemetry ledger's lines.
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Schema, Stream, TestClock } from "effect"
import {
  aggregate, EventBody, type LedgerEvent, LedgerStore, LedgerWriter, makeSanitizer, PSEUDONYM, readLedger
} from "../../src/ledger/index.js"
import { memoryLedger } from "./harness.js"

// Raw identifiers and free text carry a marker no sanitized value can contain by chance (`:` is
// outside the pseudonyms' base64url alphabet).
const raw = fc.stringMatching(/^[A-Za-z0-9]{6,12}$/).map((s) => `RAW:${s}`)
const id = raw
const usd = fc.integer({ min: 0, max: 10_000_000 }).map((c) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")}`)
const count = fc.nat({ max: 1_000_000 })
const kind = fc.constantFrom("llm", "tool.search", "verify", "delegate")
const cost = fc.record({ tokens: count, usd, latency_ms: count, risk: fc.double({ min: 0, max: 10, noNaN: true }) })
const estimator = fc.record({ id, version: fc.constantFrom("1", "2.0"), training_data_fingerprint: fc.constant("A".repeat(43)) })
const value = fc.record({
  expected_gain_usd: usd, uncertainty_usd: usd, confidence: fc.double({ min: 0, max: 1, noNaN: true }), sample_size: count,
  provenance: fc.constantFrom("explicit", "historical", "contextual", "prior"), estimator
})
const action = fc.record({
  id, kind,
  metadata: fc.dictionary(raw, fc.oneof(raw, fc.integer())),
  estimate: cost,
  principal: fc.option(id, { nil: undefined }),
  task_id: fc.option(id, { nil: undefined }),
  state: fc.option(raw, { nil: undefined }),
  phase: fc.option(raw, { nil: undefined }),
  retry: fc.option(fc.nat({ max: 5 }), { nil: undefined }),
  value: fc.option(value, { nil: undefined })
}, { requiredKeys: ["id", "kind", "metadata", "estimate"] })
// Draw names as the Writ executor (`count:W`, `total:NAME:W`) and the YEA runtime (`measure[:unit]`) publish them.
const rawPart = fc.stringMatching(/^[A-Za-z0-9]{8}$/).map((s) => `RAW${s}`)
const drawName = fc.oneof(
  rawPart.map((w) => `count:${w}`), fc.tuple(rawPart, rawPart).map(([n, w]) => `total:${n}:${w}`), raw, fc.tuple(raw, raw).map(([m, u]) => `${m}:${u}`)
)
const reason = fc.constantFrom("allowed", "usd_budget_exhausted", "duplicate_action", "value_below_cost")
const directive = fc.oneof(
  fc.constant({ _tag: "allow" as const }), fc.constant({ _tag: "deny" as const }),
  fc.record({ _tag: fc.constant("reuse" as const), action_id: id }), action.map((a) => ({ _tag: "modify" as const, action: a }))
)
const event = fc.oneof(
  fc.record({ type: fc.constant("action"), run_id: id, action }),
  fc.record({ type: fc.constant("decision"), run_id: id, decision: fc.record({ action_id: id, mode: fc.constantFrom("enforce", "shadow"), allowed: fc.boolean(), recommended: fc.boolean(), reason, directive, policy: raw, fingerprint: raw }) }),
  fc.record({ type: fc.constant("reservation"), run_id: id, action_id: id, reservation_id: id, owner: id, draws: fc.array(fc.record({ key: raw, limit: fc.constant("100"), amount: fc.constant("1") }), { maxLength: 3 }) }),
  fc.record({ type: fc.constant("settlement"), run_id: id, action_id: id, reservation_id: id, state: fc.constantFrom("committed", "failed"), reason: fc.constantFrom("committed", "failure_settled"), actual: cost, kept_tokens: fc.constant("5"), kept_usd: usd }),
  fc.record({ type: fc.constant("failure"), run_id: id, action_id: id, error: raw, measured: fc.boolean() }),
  fc.record({ type: fc.constant("observation"), kind, context: raw, gain_usd: usd, estimator }),
  fc.record({ type: fc.constant("outcome"), outcome: fc.record({ task_id: id, result: fc.constantFrom("success", "failure"), verified: fc.boolean(), verifier: id, action_ids: fc.array(id, { maxLength: 3 }) }) }),
  fc.record({ type: fc.constant("protocol"), decision: fc.record({ protocol: fc.constantFrom("writ", "yea"), kind: fc.constantFrom("accepted", "refused", "commit"), principal: id, subject: id, operation: raw, reason: fc.constantFrom("expired", "limit"), amounts: fc.array(fc.record({ name: drawName, amount: fc.constant("1") }), { maxLength: 3 }) }) })
).map((e) => Schema.decodeUnknownSync(EventBody)(e))

// The allowlist: every leaf of a safe event, by path (array indexes as []), and what it may hold.
const closed = (...v: Array<string>) => (x: unknown) => typeof x === "string" && v.includes(x)
const pseudo = (x: unknown) => typeof x === "string" && PSEUDONYM.test(x)
const num = (x: unknown) => typeof x === "number"
const bool = (x: unknown) => typeof x === "boolean"
const usdText = (x: unknown) => typeof x === "string" && /^-?[0-9]+(\.[0-9]+)?$/.test(x)
const kinds = closed("llm", "tool.search", "verify", "delegate")
const costLeaves = (p: string) => ({ [`${p}.tokens`]: num, [`${p}.usd`]: usdText, [`${p}.latency_ms`]: num, [`${p}.risk`]: num })
const actionLeaves = (p: string) => ({
  [`${p}.id`]: pseudo, [`${p}.kind`]: kinds, ...costLeaves(`${p}.estimate`), [`${p}.principal`]: pseudo, [`${p}.task_id`]: pseudo,
  [`${p}.state`]: pseudo, [`${p}.phase`]: pseudo, [`${p}.retry`]: num,
  [`${p}.value.expected_gain_usd`]: usdText, [`${p}.value.uncertainty_usd`]: usdText, [`${p}.value.confidence`]: num, [`${p}.value.sample_size`]: num,
  [`${p}.value.provenance`]: closed("explicit", "historical", "contextual", "prior"), [`${p}.value.estimator.id`]: pseudo,
  [`${p}.value.estimator.version`]: closed("1", "2.0"), [`${p}.value.estimator.training_data_fingerprint`]: closed("A".repeat(43))
})
const allow: Record<string, (x: unknown) => boolean> = {
  type: closed("action", "decision", "reservation", "settlement", "failure", "observation", "outcome", "protocol"),
  run_id: pseudo, action_id: pseudo, reservation_id: pseudo, owner: pseudo, error: pseudo, measured: bool, context: pseudo,
  ...actionLeaves("action"),
  "decision.action_id": pseudo, "decision.mode": closed("enforce", "shadow"), "decision.allowed": bool, "decision.recommended": bool,
  "decision.reason": closed("allowed", "usd_budget_exhausted", "duplicate_action", "value_below_cost"),
  "decision.directive._tag": closed("allow", "deny", "reuse", "modify"), "decision.directive.action_id": pseudo,
  ...actionLeaves("decision.directive.action"), "decision.policy": pseudo, "decision.fingerprint": pseudo,
  "draws[].key": pseudo, "draws[].limit": closed("100"), "draws[].amount": closed("1"),
  state: closed("committed", "failed"), reason: closed("committed", "failure_settled"), ...costLeaves("actual"), kept_tokens: closed("5"), kept_usd: usdText,
  kind: kinds, gain_usd: usdText, "estimator.id": pseudo, "estimator.version": closed("1", "2.0"), "estimator.training_data_fingerprint": closed("A".repeat(43)),
  "outcome.task_id": pseudo, "outcome.result": closed("success", "failure"), "outcome.verified": bool, "outcome.verifier": pseudo, "outcome.action_ids[]": pseudo,
  "decision.protocol": closed("writ", "yea"), "decision.kind": closed("accepted", "refused", "commit"), "decision.principal": pseudo,
  "decision.subject": pseudo, "decision.operation": pseudo,
  "decision.amounts[].name": (x) => typeof x === "string" && (/^count:[A-Za-z0-9_-]{8}$/.test(x) || /^total:p_[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]{8}$/.test(x) || PSEUDONYM.test(x)),
  "decision.amounts[].amount": closed("1")
}
// "decision.reason" is shared by ledger decisions and protocol decisions.
const protocolReason = closed("expired", "limit")

const leaves = (v: unknown, path = ""): Array<[string, unknown]> =>
  Array.isArray(v) ? v.flatMap((x) => leaves(x, `${path}[]`))
    : v !== null && typeof v === "object" ? Object.entries(v).flatMap(([k, x]) => leaves(x, path === "" ? k : `${path}.${k}`))
    : [[path, v]]

const rawStrings = (v: unknown): Array<string> => leaves(v).flatMap(([p, x]) => [p, x]).flatMap((x) => (typeof x === "string" ? x.match(/RAW:?[A-Za-z0-9]+/g) ?? [] : []))

describe("safe_telemetry", () => {
  const sanitize = makeSanitizer(new Uint8Array(32).fill(9))

  it.prop("holds no value outside the allowlist and no raw identifier", [event], ([e]) => {
    const safe = sanitize(e)
    const text = JSON.stringify(Schema.encodeSync(EventBody)(safe))
    for (const r of rawStrings(e)) expect(text).not.toContain(r)
    expect(text).not.toContain("RAW:")
    for (const [path, x] of leaves(Schema.encodeSync(EventBody)(safe))) {
      const ok = allow[path]?.(x) === true || (path === "decision.reason" && safe.type === "protocol" && protocolReason(x))
      expect({ path, x, ok }).toEqual({ path, x, ok: true })
    }
    // The sanitized event is still a valid event: the ledger stays verifiable.
    expect(Schema.is(EventBody)(safe)).toBe(true)
  }, { fastCheck: { numRuns: 300, seed: 20261201 } })

  it("keeps what a settlement took past its limit (amounts, not identifiers)", () => {
    const settled = Schema.decodeUnknownSync(EventBody)({
      type: "settlement", run_id: "RAW:run", action_id: "RAW:act", reservation_id: "RAW:res", state: "committed", reason: "budget_overrun",
      actual: { tokens: 10, usd: "0.50", latency_ms: 1, risk: 0 }, kept_tokens: "10", kept_usd: "0.50", overrun_tokens: "4", overrun_usd: "0.35"
    })
    const safe = Schema.encodeSync(EventBody)(sanitize(settled)) as Record<string, unknown>
    expect({ overrun_tokens: safe.overrun_tokens, overrun_usd: safe.overrun_usd, reason: safe.reason }).toEqual({ overrun_tokens: "4", overrun_usd: "0.35", reason: "budget_overrun" })
    expect(rawStrings(safe)).toEqual([])
  })

  it.prop("pseudonyms are stable under one key and differ under another", [id], ([x]) => {
    const a = makeSanitizer(new Uint8Array(32).fill(1))
    const b = makeSanitizer(new Uint8Array(32).fill(2))
    const e = Schema.decodeUnknownSync(EventBody)({ type: "failure", run_id: x, action_id: x, error: "E", measured: true })
    const [s1, s2, s3] = [a(e), a(e), b(e)] as unknown as Array<{ run_id: string; action_id: string }>
    expect(s1.run_id).toBe(s2.run_id)
    expect(s1.run_id).not.toBe(s3.run_id)
    // Domain separation: the same raw value as a run id and as an action id are not linkable.
    expect(s1.run_id).not.toBe(s1.action_id)
  }, { fastCheck: { seed: 20261203 } })

  it.effect("writes generalized timestamps and sanitized lines", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 11, 1, 23, 41, 17, 123))
      const w = yield* LedgerWriter
      yield* w.append([{ type: "failure", run_id: "RAWrun1", action_id: "RAWact1", error: "Boom", measured: false }])
      const lines = Array.from(yield* Stream.runCollect(Effect.flatMap(LedgerStore, (s) => Effect.succeed(s.lines)).pipe(Stream.unwrap)))
      expect(lines.join("\n")).not.toContain("RAW")
      const events = Array.from(yield* Stream.runCollect(readLedger(Stream.fromIterable(lines))))
      expect(events.map((e) => e.type)).toEqual(["ledger", "failure"])
      expect(events[1].at).toBe("2026-12-01T23:00Z")
    }).pipe(Effect.provide(memoryLedger("safe_telemetry"))))
})

describe("aggregate_export", () => {
  it.prop("never emits a group under its minimum, nor an identifier", [fc.array(event, { maxLength: 120 }), fc.integer({ min: 1, max: 12 })], ([events, k]) =>
    Effect.runSync(Effect.gen(function*() {
      const stamped = events.map((e, i) => ({ ...e, v: 1, ledger: "RAW:ledger", seq: i + 1, prev: null, at: "2026-12-01T23:41:17.123Z" }) as LedgerEvent)
      const out = yield* aggregate(Stream.fromIterable(stamped), k)
      expect(out.min_group).toBe(k)
      for (const g of out.groups) expect(g.count).toBeGreaterThanOrEqual(k)
      const text = JSON.stringify(out)
      expect(text).not.toContain("RAW:")
      expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T/)
    })), { fastCheck: { numRuns: 200, seed: 20261202 } })

  it.effect("suppresses groups under 5 by default", () =>
    Effect.gen(function*() {
      const d = (i: number, reason: string) => ({ v: 1, ledger: "l", seq: i, prev: null, at: "2026-12-01T23:00Z", type: "decision", run_id: "r", decision: { action_id: `a${i}`, mode: "enforce", allowed: reason === "allowed", recommended: reason === "allowed", reason, directive: { _tag: "allow" }, fingerprint: "f" } }) as unknown as LedgerEvent
      const evs = [...Array.from({ length: 5 }, (_, i) => d(i, "allowed")), ...Array.from({ length: 4 }, (_, i) => d(10 + i, "usd_budget_exhausted"))]
      const out = yield* aggregate(Stream.fromIterable(evs))
      expect(out.groups.map((g) => [g.reason, g.count])).toEqual([["allowed", 5]])
      expect(out.suppressed_groups).toBe(1)
    }))
})
