// Recovery of calls a killed gateway left reserved (issue 29, "kill -9 of the gateway mid-stream").
// Each gateway process holds its reservations under its OwnerLease id; a process that dies stops
// its heartbeat, and once the lease has lapsed a surviving or restarted gateway claims it and
// settles every reservation that owner still held.
//
// The rule: a reservation whose call cannot be known is settled as a failed call that kept its
// whole worst case (`recovered_after_crash`, the ledger's own recovery, guard.ts recoverHeld): the
// upstream may have produced and billed up to `max_tokens` before the gateway died, and a budget
// must never be under-charged. It is settled once (the claim is one conditional UPDATE, and a
// reservation already settled is not settled again), so nothing is double-charged, and its
// settlement line is in the ledger, so the ledger's sum still equals the budgets' spent amount.
import { Duration, Effect, Schedule } from "effect"
import { OwnerLease } from "../accounting/owner-lease.js"
import { recoverHeld } from "../ledger/guard.js"
import { LedgerWriter } from "../ledger/writer.js"

/** Settles what every lapsed owner left held; answers how many reservations were settled. */
export const sweepLapsed = Effect.gen(function*() {
  const lease = yield* OwnerLease
  const writer = yield* LedgerWriter
  let settled = 0
  for (const gone of yield* lease.claimLapsed) {
    settled += yield* recoverHeld(yield* writer.held(gone), "keep")
    yield* lease.forget(gone)
  }
  return settled
}).pipe(Effect.withSpan("gateway.sweepLapsed"))

/** At start, then once per lease period for the life of the scope: a failed sweep is logged and tried again. */
export const recoverContinuously = Effect.gen(function*() {
  const lease = yield* OwnerLease
  const once = Effect.catchAll(sweepLapsed, (e) => Effect.as(Effect.logWarning("gateway: recovery sweep failed; it runs again next period", e), 0))
  yield* once
  yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(Duration.millis(lease.ttlMs))))
})
