// The storage primitives a Reservations store must provide. The decision itself ("may this
// spend?") is made once, in core.ts, over these primitives; a store Layer (src/store/*) only says how
// to read, lock and write rows. Every primitive is called inside `atomic`, so a store decides how the
// step is isolated: memory by one lock and an undo journal, SQLite by one write transaction on one
// file, PostgreSQL by row locks (see each store).
import { Context, type Effect, type Option } from "effect"
import type { AtomicService, Reservation } from "./reservations.js"
import type { StoreError } from "./store-error.js"

export interface ReservationBackend {
  /** The transaction boundary; the same one the store publishes as the Atomic service. */
  readonly atomic: AtomicService["transaction"]
  /**
   * Serializes concurrent work on one reservation id for the rest of the atomic step (PostgreSQL:
   * a transaction-scoped advisory lock). A no-op where the atomic step is already exclusive.
   */
  readonly lockId: (id: string) => Effect.Effect<void, StoreError>
  readonly load: (id: string) => Effect.Effect<Option.Option<Reservation>, StoreError>
  /**
   * Reads the consumption of `keys` (distinct, sorted ascending so that lock order is the same in
   * every transaction) and holds them against concurrent change until the atomic step ends.
   * Unknown keys read as 0.
   */
  readonly lockUsage: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, bigint>, StoreError>
  /** Adds each delta (possibly negative) to its key's consumption. Keys were locked by lockUsage. */
  readonly addUsage: (deltas: ReadonlyArray<readonly [string, bigint]>) => Effect.Effect<void, StoreError>
  readonly insert: (reservation: Reservation) => Effect.Effect<void, StoreError>
  /** Rewrites `state` and `consumed` of an existing reservation. */
  readonly update: (reservation: Reservation) => Effect.Effect<void, StoreError>
  /** Unlocked read of one key's consumption. */
  readonly used: (key: string) => Effect.Effect<bigint, StoreError>
}

/** The storage primitives of the store in use; store Layers provide it, `core.layer` builds Reservations on it. */
export class ReservationStore extends Context.Tag("mandate/ReservationStore")<ReservationStore, ReservationBackend>() {}
