// The storage primitives a Reservations store must provide. The decision itself ("may this
// spend?") is made once, in core.ts, over these primitives; a store Layer (src/store/*) only says how
// to read, lock and write rows. Every primitive is called inside `atomic`, so a store decides how the
// step is isolated: memory by one lock and an undo journal, SQLite by one write transaction on one
// file, PostgreSQL by row locks (see each store).
//
// A store may also take a whole reserve as one step of its own (`reserveStep`): PostgreSQL does, in
// one statement, because a hot limit's row lock is held until COMMIT and every client round trip
// inside the step is time that every other reserve on that limit waits. Such a
// step applies core.ts's rule and reports what it read, and core.ts checks its verdict.
import { Context, type Effect, type Option } from "effect"
import type { AtomicService, Reservation } from "./reservations.js"
import type { StoreError } from "./store-error.js"

/**
 * What a reserve step found and did. `used` is each limit's consumption before the draw, in the
 * order of the reservation's limits (the values the rule was applied to).
 */
export type ReserveStep =
  /** The id was already reserved: nothing was drawn. */
  | { readonly _tag: "Existing"; readonly reservation: Reservation }
  /** Every limit fitted: every amount was added and the reservation written. */
  | { readonly _tag: "Drawn"; readonly used: ReadonlyArray<bigint> }
  /** Some limit did not fit: nothing was written. */
  | { readonly _tag: "Short"; readonly used: ReadonlyArray<bigint> }

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
  /**
   * Adds each delta (possibly negative) to its key's consumption. Keys were locked by lockUsage,
   * whose answer is passed as `locked`: a store that writes the new value itself (SQLite, whose
   * amounts are decimal text) takes the value from it instead of reading the key again.
   */
  readonly addUsage: (deltas: ReadonlyArray<readonly [string, bigint]>, locked?: ReadonlyMap<string, bigint>) => Effect.Effect<void, StoreError>
  readonly insert: (reservation: Reservation) => Effect.Effect<void, StoreError>
  /**
   * Optional: the boundary a settlement (and the composed reserve step) runs in instead of `atomic`:
   * joined to the caller's open step without a savepoint of its own, `atomic` when there is none
   * (src/store/sql/transaction.ts `makeJoin`: a failure after a write abandons the step down to the
   * enclosing savepoint). core.ts raises its own typed errors only before the first write, as it
   * requires.
   */
  readonly join?: AtomicService["transaction"]
  /** Rewrites `state` and `consumed` of an existing reservation. */
  readonly update: (reservation: Reservation) => Effect.Effect<void, StoreError>
  /** Unlocked read of one key's consumption. */
  readonly used: (key: string) => Effect.Effect<bigint, StoreError>
  /**
   * Optional: the whole reserve of a new `held` reservation as one atomic statement of the store,
   * joining the caller's Atomic step when there is one: the same-id serialization of `lockId`, the
   * idempotency read, every limit's row locked in sorted key order, core.ts's rule applied to all
   * of them at once, and the writes. Without it, core.ts composes the step from the primitives above
   * inside `atomic`.
   */
  readonly reserveStep?: (reservation: Reservation) => Effect.Effect<ReserveStep, StoreError>
}

/** The storage primitives of the store in use; store Layers provide it, `core.layer` builds Reservations on it. */
export class ReservationStore extends Context.Tag("mandate/ReservationStore")<ReservationStore, ReservationBackend>() {}
