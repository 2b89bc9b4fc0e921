// The approval store (SPEC-approval §8): consumed one-time markers, consents written by
// `yea approve`, receipts and undo markers, and the spend ledger of the signed policy's totals.
// Every method is atomic on its own; `reserve` is all-or-nothing over the draws it is given. A
// store failure is `ApprovalStoreError`, and every caller fails closed on it.
//
// Layers: `memoryApprovalStore` here (one process); SQLite in src/store/sqlite/approval.ts, the
// store the CLI's `yea approve` and a local server share. The §8 file layout is in file-layout.ts
// (checked by the conformance runner; no Layer writes it).
import { Context, Effect, Layer, Option, Ref } from "effect"
import type { Draw } from "./policy.js"
import type { ApprovalStoreError } from "./reason.js"
import type { JobReceipt } from "./receipt.js"

export interface ApprovalStoreShape {
  /** Which implementation: a memory store can't share consents with `yea approve` (SPEC-mcp-ts). */
  readonly kind: "memory" | "sqlite" | "file"
  /** True the first time only, for a marker kept until `expiresAt` (unix seconds). */
  readonly consumeOnce: (nonce: string, expiresAt: number) => Effect.Effect<boolean, ApprovalStoreError>
  readonly putReceipt: (r: JobReceipt) => Effect.Effect<void, ApprovalStoreError>
  readonly getReceipt: (id: string) => Effect.Effect<Option.Option<JobReceipt>, ApprovalStoreError>
  /** True the first time only: the undo of `id` is this caller's to run. */
  readonly claimUndo: (id: string) => Effect.Effect<boolean, ApprovalStoreError>
  readonly markUndone: (id: string) => Effect.Effect<void, ApprovalStoreError>
  readonly isUndone: (id: string) => Effect.Effect<boolean, ApprovalStoreError>
  /** A consent grant (`pg1.`) for a plan hash, written by `yea approve`. */
  readonly putConsent: (planHash: string, grant: string) => Effect.Effect<void, ApprovalStoreError>
  readonly getConsent: (planHash: string) => Effect.Effect<Option.Option<string>, ApprovalStoreError>
  /** Settled plus reserved under `{block, of}`, in ledger units. */
  readonly used: (block: string, of: string) => Effect.Effect<bigint, ApprovalStoreError>
  /** Reserves every draw or none; none when any would pass its max. Returns the reservation id. */
  readonly reserve: (draws: ReadonlyArray<Draw>) => Effect.Effect<Option.Option<string>, ApprovalStoreError>
  readonly settle: (reservation: string) => Effect.Effect<void, ApprovalStoreError>
  readonly release: (reservation: string) => Effect.Effect<void, ApprovalStoreError>
}

export class ApprovalStore extends Context.Tag("mandate/yea/ApprovalStore")<ApprovalStore, ApprovalStoreShape>() {}

const keyOf = (block: string, of: string) => `${block}\u0000${of}`

interface MemoryState {
  readonly consumed: ReadonlyMap<string, number>
  readonly receipts: ReadonlyMap<string, JobReceipt>
  readonly claims: ReadonlySet<string>
  readonly undone: ReadonlySet<string>
  readonly consents: ReadonlyMap<string, string>
  readonly settled: ReadonlyMap<string, bigint>
  readonly reservations: ReadonlyMap<string, ReadonlyArray<Draw>>
  readonly next: number
}

const reservedOf = (s: MemoryState, key: string): bigint => {
  let n = 0n
  for (const ds of s.reservations.values()) for (const d of ds) if (keyOf(d.key.block, d.key.of) === key) n += d.amount
  return n
}

/** The default store: one process, lost at exit (SPEC-approval §8 `MemoryStore`). */
export const makeMemoryApprovalStore: Effect.Effect<ApprovalStoreShape> = Effect.map(
  Ref.make<MemoryState>({
    consumed: new Map(),
    receipts: new Map(),
    claims: new Set(),
    undone: new Set(),
    consents: new Map(),
    settled: new Map(),
    reservations: new Map(),
    next: 0
  }),
  (ref): ApprovalStoreShape => {
    const used = (s: MemoryState, key: string) => (s.settled.get(key) ?? 0n) + reservedOf(s, key)
    return {
      kind: "memory",
      consumeOnce: (nonce, exp) =>
        Ref.modify(ref, (s) => (s.consumed.has(nonce) ? [false, s] : [true, { ...s, consumed: new Map(s.consumed).set(nonce, exp) }])),
      putReceipt: (r) => Ref.update(ref, (s) => ({ ...s, receipts: new Map(s.receipts).set(r.id, r) })),
      getReceipt: (id) => Effect.map(Ref.get(ref), (s) => Option.fromNullable(s.receipts.get(id))),
      claimUndo: (id) => Ref.modify(ref, (s) => (s.claims.has(id) ? [false, s] : [true, { ...s, claims: new Set(s.claims).add(id) }])),
      markUndone: (id) => Ref.update(ref, (s) => ({ ...s, undone: new Set(s.undone).add(id) })),
      isUndone: (id) => Effect.map(Ref.get(ref), (s) => s.undone.has(id) || s.claims.has(id)),
      putConsent: (h, g) => Ref.update(ref, (s) => ({ ...s, consents: new Map(s.consents).set(h, g) })),
      getConsent: (h) => Effect.map(Ref.get(ref), (s) => Option.fromNullable(s.consents.get(h))),
      used: (block, of) => Effect.map(Ref.get(ref), (s) => used(s, keyOf(block, of))),
      reserve: (draws) =>
        Ref.modify(ref, (s): [Option.Option<string>, MemoryState] => {
          for (const d of draws) if (used(s, keyOf(d.key.block, d.key.of)) + d.amount > d.max) return [Option.none(), s]
          const id = `m${s.next}`
          return [Option.some(id), { ...s, next: s.next + 1, reservations: new Map(s.reservations).set(id, draws) }]
        }),
      settle: (id) =>
        Ref.update(ref, (s) => {
          const ds = s.reservations.get(id)
          if (ds === undefined) return s
          const settled = new Map(s.settled)
          for (const d of ds) settled.set(keyOf(d.key.block, d.key.of), (settled.get(keyOf(d.key.block, d.key.of)) ?? 0n) + d.amount)
          const reservations = new Map(s.reservations)
          reservations.delete(id)
          return { ...s, settled, reservations }
        }),
      release: (id) =>
        Ref.update(ref, (s) => {
          const reservations = new Map(s.reservations)
          reservations.delete(id)
          return { ...s, reservations }
        })
    }
  }
)

export const memoryApprovalStore: Layer.Layer<ApprovalStore> = Layer.effect(ApprovalStore, makeMemoryApprovalStore)
