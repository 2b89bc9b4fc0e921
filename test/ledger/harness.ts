// Shared fixtures of the ledger tests: actions, a memory ledger with a guard, and reading it back.
import { Effect, Layer, Stream } from "effect"
import { RandomBytes } from "../../src/kernel/index.js"
import { type Action, type Cost, createLedger, type GuardConfig, type LedgerEvent, LedgerStore, LedgerWriter, makeGuard, makeWriter, readLedger, type Usd } from "../../src/ledger/index.js"
import * as MemoryLedger from "../../src/store/memory/ledger.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"

export const cost = (tokens: number, usd: string, latency_ms = 0, risk = 0): Cost => ({ tokens, usd: usd as Usd, latency_ms, risk })

let n = 0
export const action = (kind: string, metadata: Record<string, unknown>, estimate: Cost, extra: Partial<Action> = {}): Action =>
  ({ id: `a${++n}`, kind, metadata: metadata as Action["metadata"], estimate, ...extra })

/** A memory store with a created ledger in `mode`, writer included. */
export const memoryLedger = (mode: "local_full" | "safe_telemetry" = "local_full", ledger = "test-ledger") => {
  const stores = Layer.provideMerge(MemoryLedger.layer, MemoryReservations.layer)
  const writer = Layer.effect(LedgerWriter, Effect.zipRight(createLedger({ ledger, mode, key: new Uint8Array(32).fill(7) }), makeWriter))
  return writer.pipe(Layer.provideMerge(Layer.merge(stores, RandomBytes.seeded(new Uint8Array(8).fill(1)))))
}

export const guardFor = (config: Partial<GuardConfig> & Pick<GuardConfig, "policy">) =>
  makeGuard({ mode: "enforce", namespace: "t", runId: "run-1", owner: "w0", ...config })

export const events = Effect.flatMap(LedgerStore, (s) => Stream.runCollect(readLedger(s.lines))).pipe(
  Effect.map((c): Array<LedgerEvent> => Array.from(c))
)

export const ran = <A>(value: A, actual: Cost) => Effect.succeed({ value, actual })
