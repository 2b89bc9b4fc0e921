// `mandate ledger init|record|stats|export|verify|replay` as a user runs them:
// what each prints, and every refusal as one line `error: <reason> at <where>: <why>`, exit 1.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import { expectRefused, ledgerCli } from "./cli-harness.js"

vi.setConfig({ testTimeout: 300_000 })

const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-cli-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const p = (f: string) => join(dir, f)
const mandate = ledgerCli
const refused = expectRefused

const usd = (v: string) => ({ tokens: 10, usd: v, latency_ms: 0, risk: 0 })
const recorded = (id: string) => [
  { type: "action", run_id: "r1", action: { id, kind: "llm", metadata: { id }, estimate: usd("0.30") } },
  { type: "decision", run_id: "r1", decision: { action_id: id, mode: "enforce", allowed: true, recommended: true, reason: "allowed", directive: { _tag: "allow" }, fingerprint: "f" } },
  { type: "settlement", run_id: "r1", action_id: id, reservation_id: `r-${id}`, state: "committed", reason: "committed", actual: { ...usd("0.20"), tokens: 7 }, kept_tokens: "7", kept_usd: "0.20" }
]
const jsonl = (name: string, bodies: ReadonlyArray<unknown>) => {
  writeFileSync(p(name), bodies.map((b) => JSON.stringify(b)).join("\n") + "\n")
  return p(name)
}

describe("mandate ledger", () => {
  it("init, record, stats, verify, export and replay on one ledger", async () => {
    const db = p("full.db")
    const init = await mandate("init", db)
    expect(init.status, init.stderr).toBe(0)
    expect(init.stdout).toContain("created ledger default (local_full)")
    refused(await mandate("init", db), "ledger_exists")

    const events = jsonl("events.jsonl", [
      ...["a1", "a2", "a3"].flatMap(recorded),
      ...Array.from({ length: 5 }, (_, i) => ({ type: "protocol", decision: { protocol: "writ", kind: "refused", principal: "did:key:zA", subject: `c${i}`, reason: "expired" } })),
      { type: "outcome", outcome: { task_id: "t1", result: "success", verified: true, verifier: "ci", action_ids: ["a1", "a2"] } }
    ])
    const rec = await mandate("record", db, events, "--task", "t1")
    expect(rec.status, rec.stderr).toBe(0)
    expect(rec.stdout).toContain("recorded 15 events")
    // Not a TTY: no progress bar in stderr.
    expect(rec.stderr).toBe("")

    const stats = await mandate("stats", db)
    expect(stats.status, stats.stderr).toBe(0)
    expect(stats.stdout).toMatch(/writ\s+did:key:zA\s+expired\s+5/)
    expect(stats.stdout.trim().split("\n").at(-1)).toBe(
      "3 guarded actions: 3 allowed, 0 refused; they spent 21 tokens and $0.6. Writ: 5 refused (mostly expired (5)). 1 principal appears in this ledger."
    )

    const verify = await mandate("verify", db)
    expect(verify.stdout).toMatch(/^ok: ledger default \(local_full\), 16 lines, chain intact, head [A-Za-z0-9_-]{43}\n$/)

    const full = await mandate("export", db)
    expect(full.status, full.stderr).toBe(0)
    expect(full.stdout.trim().split("\n")).toHaveLength(16)
    const agg = JSON.parse((await mandate("export", db, "--mode", "aggregate_export")).stdout) as { groups: Array<{ event: string; count: number }>; suppressed_groups: number }
    // Five refusals form a group; three decisions and three settlements and one outcome do not.
    expect(agg.groups).toEqual([expect.objectContaining({ protocol: "writ", event: "refused", reason: "expired", count: 5 })])
    expect(agg.suppressed_groups).toBe(3)
    const agg1 = JSON.parse((await mandate("export", db, "--mode", "aggregate_export", "--min-group", "1")).stdout) as { groups: Array<unknown>; suppressed_groups: number }
    expect(agg1.groups).toHaveLength(4)
    expect(agg1.suppressed_groups).toBe(0)
    refused(await mandate("export", db, "--mode", "safe_telemetry"), "mode_mismatch")

    writeFileSync(p("strict.json"), JSON.stringify({ version: 1, policies: [{ type: "usd_budget", usd: "0.50" }] }))
    const replay = await mandate("replay", db, "--policy", p("strict.json"))
    expect(replay.status, replay.stderr).toBe(0)
    expect(replay.stdout).toContain("3 recorded actions replayed")
    expect(replay.stdout).toContain("would deny 1 that ran: 7 tokens and $0.2 saved")
    expect(replay.stdout).toContain("usd_budget_exhausted: 1 changed, 7 tokens, $0.2")
    expect(replay.stdout).toContain("Replay is not causal")
  })

  it("refuses, each with its reason code", async () => {
    const db = p("refusals.db")
    // A store that holds no ledger yet.
    refused(await mandate("verify", db), "ledger_missing")
    refused(await mandate("stats", db), "ledger_missing")
    refused(await mandate("record", db, jsonl("one.jsonl", recorded("x1"))), "ledger_missing")
    expect((await mandate("init", db, "--mode", "safe_telemetry")).status).toBe(0)
    refused(await mandate("export", db), "mode_mismatch")
    // Record: not JSON, not an event, a header, an outcome for another task, a line too long.
    writeFileSync(p("bad.jsonl"), "{not json\n")
    refused(await mandate("record", db, p("bad.jsonl")), "invalid_event")
    refused(await mandate("record", db, jsonl("unknown.jsonl", [{ type: "gossip" }])), "invalid_event")
    refused(await mandate("record", db, jsonl("header.jsonl", [{ type: "ledger", schema: "mandate.ledger", mode: "local_full" }])), "invalid_event")
    const other = jsonl("other-task.jsonl", [{ type: "outcome", outcome: { task_id: "t2", result: "failure", verified: true, verifier: "ci", action_ids: [] } }])
    refused(await mandate("record", db, other, "--task", "t1"), "outcome_task_mismatch")
    writeFileSync(p("long.jsonl"), `{"type":"outcome","x":"${"y".repeat(300 * 1024)}"}\n`)
    refused(await mandate("record", db, p("long.jsonl")), "line_too_long")
    // Replay: a policy file that is not JSON, or not a policy.
    writeFileSync(p("nojson.json"), "{")
    refused(await mandate("replay", db, "--policy", p("nojson.json")), "invalid_policy")
    writeFileSync(p("nopolicy.json"), JSON.stringify({ version: 1, policies: [{ type: "magic" }] }))
    refused(await mandate("replay", db, "--policy", p("nopolicy.json")), "invalid_policy")
  })
})
