// Who holds what after a crash. A process that reserves (a gateway, a guard's worker) names itself
// by an owner id, stamped on what it holds, and keeps a lease on that id in the store it shares
// with other processes: a heartbeat moves the lease forward while the process lives. A process
// killed with SIGKILL cannot say it is gone; its lease lapsing is what says so. Recovery then
// settles what that owner left held, and only the process that claims the lapsed lease does, so
// two survivors never settle one reservation twice and a live owner is never recovered from under
// itself (issue 32's rule: recovery takes over only when the owner's lease has lapsed).
import { Context, type Effect } from "effect"
import type { StoreError } from "./store-error.js"

export interface OwnerLeaseService {
  /** This process's owner id (held for the life of the layer). */
  readonly owner: string
  /** The lease period, ms: an owner is gone when its heartbeat is older than this. */
  readonly ttlMs: number
  /**
   * Takes over the lease of every owner of this scope whose lease has lapsed, for one more period,
   * and answers their ids: the caller recovers what they held, then `forget`s them. A claimant
   * that dies in between lets the lease lapse again, and another claims it.
   */
  readonly claimLapsed: Effect.Effect<ReadonlyArray<string>, StoreError>
  /** Drops a recovered owner's lease. */
  readonly forget: (owner: string) => Effect.Effect<void, StoreError>
}

export class OwnerLease extends Context.Tag("mandate/accounting/OwnerLease")<OwnerLease, OwnerLeaseService>() {}
