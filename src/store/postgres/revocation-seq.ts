// Freshness of a replay's step 7 on PostgreSQL, for several workers on one schema (issue 32; spec
// section 7: step 7, revocation, before step 9's stored answer). A replay reads the schema's
// revocation sequence number (`writ_revocation_seq`, moved by every revoke recorded, in commit
// order: writ-migrations.ts) and trusts the store's last "not revoked" for its chain only while
// the number is the one read just before that answer (src/writ/executor/replays.ts); otherwise it
// asks the revoke store again. One cheap read in place of the revoke store's lookup, and shared:
// the replays waiting at once take one read between them.
//
// A read may be shared only by requests that arrived before it was sent: a worker that answers a
// replay after a revoke's ack (by any worker) must have read the number after the ack's commit.
// So a request joins the batch that has not been sent yet, or opens one, which is sent when the
// read in flight (if any) has returned; never a read already on its way.
import { Deferred, Effect, FiberId } from "effect"

/**
 * `read`, shared by the requests that wait at once: each request's answer comes from a run of
 * `read` that began after the request was made.
 */
export const freshRead = <A, E>(read: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  // The batch not sent yet, and the signal that the read in flight has returned.
  let waiting: Deferred.Deferred<A, E> | undefined = undefined
  let inFlight: Deferred.Deferred<void> | undefined = undefined
  return Effect.suspend(() => {
    if (waiting !== undefined) return Deferred.await(waiting)
    // Made synchronously, so no other request can open a second batch meanwhile.
    const batch = Deferred.unsafeMake<A, E>(FiberId.none)
    waiting = batch
    const before = inFlight
    // The batch's opener sends it for everyone in it: not interrupted halfway, or they would wait
    // forever; its own wait stays interruptible.
    const send = Effect.uninterruptible(Effect.gen(function*() {
      if (before !== undefined) yield* Deferred.await(before)
      waiting = undefined
      const done = Deferred.unsafeMake<void>(FiberId.none)
      inFlight = done
      const exit = yield* Effect.exit(read)
      if (inFlight === done) inFlight = undefined
      yield* Deferred.succeed(done, undefined)
      yield* Deferred.done(batch, exit)
    }))
    return Effect.zipRight(
      Effect.forkDaemon(send),
      Deferred.await(batch)
    )
  })
}

