// The ledger the console tests show, built with the ledger library (until `mandate demo --ledger`
// lands): a SQLite ledger whose guard ran a fixed list of actions for two principals under a
// token and a USD budget (some allowed, some refused), on a TestClock advanced an hour at a time,
// plus the Writ decisions of the demo's executors (one `protocol` line per audit entry of B and
// C), as the executors' DecisionEvents subscriber would have written them.
import { Effect, Layer, TestClock, TestContext } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { openStores, parseLocation } from "../../src/cli/ledger-open.js"
import { Reservations } from "../../src/accounting/reservations.js"
import { RandomBytes } from "../../src/kernel/index.js"
import { type Action, compose, createLedger, LedgerWriter, makeGuard, makeWriter, tokenBudget, type Usd, usdBudget } from "../../src/ledger/index.js"

export const POLICY = { version: 1, namespace: "demo", policies: [{ type: "token_budget", tokens: 5000 }, { type: "usd_budget", usd: "2.50" }] } as const

const cost = (tokens: number, usd: string) => ({ tokens, usd: usd as Usd, latency_ms: 0, risk: 0 })

/** Estimates and actual costs of the actions, in order; the last ones exceed what the budgets have left. */
const plan: ReadonlyArray<{ kind: string; principal: string; est: [number, string]; actual: [number, string] }> = [
  { kind: "llm", principal: "agent-a", est: [800, "0.40"], actual: [700, "0.35"] },
  { kind: "search", principal: "agent-b", est: [300, "0.10"], actual: [250, "0.08"] },
  { kind: "llm", principal: "agent-a", est: [1200, "0.60"], actual: [1100, "0.55"] },
  { kind: "llm", principal: "agent-b", est: [900, "0.45"], actual: [950, "0.45"] },
  { kind: "search", principal: "agent-a", est: [400, "0.20"], actual: [300, "0.15"] },
  { kind: "llm", principal: "agent-a", est: [2500, "1.20"], actual: [2500, "1.20"] },
  { kind: "llm", principal: "agent-b", est: [1500, "0.70"], actual: [1400, "0.60"] },
  { kind: "search", principal: "agent-b", est: [200, "0.05"], actual: [200, "0.05"] }
]

interface AuditLine { readonly outcome: string; readonly reason: string | null; readonly principal: string | null; readonly identity: string | null; readonly op: string | null }

const auditLines = (demoOut: string, name: string): Array<AuditLine> =>
  readFileSync(join(demoOut, name), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as AuditLine)

/** Creates the ledger in `file` (which must not exist yet). */
export const buildLedger = (file: string, demoOut: string) => {
  const where = parseLocation(file)
  const program = Effect.gen(function*() {
    yield* TestClock.setTime(Date.UTC(2026, 11, 1, 9, 0, 0))
    yield* createLedger({ ledger: "default", mode: "local_full", key: undefined }).pipe(Effect.provide(openStores(where)))
    yield* Effect.gen(function*() {
      const guard = yield* makeGuard({ mode: "enforce", policy: compose(tokenBudget(5000n), usdBudget("2.50" as Usd)), namespace: "demo", runId: "run-1", owner: "fixture" })
      let n = 0
      for (const p of plan) {
        const action: Action = { id: `act-${++n}`, kind: p.kind, metadata: { step: n }, estimate: cost(...p.est), principal: p.principal }
        yield* guard.guard(action, Effect.succeed({ value: n, actual: cost(...p.actual) })).pipe(Effect.catchTag("ActionDenied", () => Effect.void))
        if (n % 3 === 0) yield* TestClock.adjust("1 hour")
      }
      const writer = yield* LedgerWriter
      for (const e of [...auditLines(demoOut, "audit-B.jsonl"), ...auditLines(demoOut, "audit-C.jsonl")]) {
        if (e.principal === null || e.identity === null) continue
        yield* writer.append([{
          type: "protocol",
          decision: {
            protocol: "writ",
            kind: e.outcome === "failed" || e.outcome === "error" ? "refused" : "accepted",
            principal: e.principal,
            subject: e.identity,
            ...(e.op !== null ? { operation: e.op } : {}),
            ...(e.reason !== null ? { reason: e.reason } : {})
          }
        }])
      }
    }).pipe(Effect.provide(Layer.effect(LedgerWriter, makeWriter).pipe(Layer.provideMerge(Layer.merge(openStores(where), RandomBytes.seeded(new Uint8Array(8).fill(3)))))))
  })
  return program.pipe(Effect.provide(TestContext.TestContext))
}

/** What the ledger's store records as used of each key (Reservations, as the guard reads it). */
export const usedOf = (file: string, keys: ReadonlyArray<string>) =>
  Effect.flatMap(Reservations, (r) => Effect.forEach(keys, (k) => r.used(k))).pipe(Effect.provide(openStores(parseLocation(file))), Effect.orDie)
