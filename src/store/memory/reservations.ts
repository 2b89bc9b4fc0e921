// In-memory Reservations (tests, single process, no durability). Isolation: every operation runs
// inside the MemoryJournal's transaction (one lock; writes undone on failure), so the decision in
// accounting/core.ts sees a consistent state and a failed step leaves nothing behind.
import { Effect, Layer, Option } from "effect"
import { type ReservationBackend, ReservationStore } from "../../accounting/backend.js"
import * as Core from "../../accounting/core.js"
import type { Atomic, Reservation, Reservations } from "../../accounting/reservations.js"
import * as MemoryAtomic from "./atomic.js"
import { MemoryJournal, type MemoryJournalService } from "./atomic.js"

export const makeMemoryBackend = (journal: MemoryJournalService): ReservationBackend => {
  const usage = new Map<string, bigint>()
  const reservations = new Map<string, Reservation>()
  const put = (r: Reservation) => {
    const before = reservations.get(r.id)
    return journal.write(
      () => void reservations.set(r.id, r),
      () => (before === undefined ? void reservations.delete(r.id) : void reservations.set(r.id, before))
    )
  }
  return {
    atomic: journal.transaction,
    lockId: () => Effect.void,
    // Reads also go through the lock (re-entrant inside a step), so no reader sees a step's uncommitted writes.
    load: (id) => journal.transaction(Effect.sync(() => Option.fromNullable(reservations.get(id)))),
    lockUsage: (keys) => Effect.sync(() => new Map(keys.map((k) => [k, usage.get(k) ?? 0n] as const))),
    addUsage: (deltas) =>
      Effect.forEach(deltas, ([key, delta]) => {
        const before = usage.get(key)
        return journal.write(
          () => void usage.set(key, (before ?? 0n) + delta),
          () => (before === undefined ? void usage.delete(key) : void usage.set(key, before))
        )
      }, { discard: true }),
    insert: put,
    update: put,
    used: (key) => journal.transaction(Effect.sync(() => usage.get(key) ?? 0n))
  }
}

/** The memory ReservationStore over a MemoryJournal already in context (shares its Atomic). */
export const storeLayer: Layer.Layer<ReservationStore, never, MemoryJournal> = Layer.effect(
  ReservationStore,
  Effect.map(MemoryJournal, makeMemoryBackend)
)

/** Reservations over a MemoryJournal already in context (shares its Atomic with other memory stores). */
export const layerWithJournal: Layer.Layer<Reservations | ReservationStore, never, MemoryJournal> = Core.layer.pipe(
  Layer.provideMerge(storeLayer)
)

/** A fresh in-memory store: Reservations, its ReservationStore, Atomic and MemoryJournal. */
export const layer: Layer.Layer<Reservations | ReservationStore | Atomic | MemoryJournal> = layerWithJournal.pipe(
  Layer.provideMerge(MemoryAtomic.layer)
)
