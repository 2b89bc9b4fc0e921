// The executor over group commit: a batch whose COMMIT fails fails every call and
// revoke in it with section 9's rule, and leaves no in-memory state claiming otherwise. One batch
// is held open by a step of the test, a call and a revoke covering its chain queue behind it (the
// call first: accepted inside the batch, then told to stop by the revoke), and a last step makes
// the store file read-only, so the batch's COMMIT fails for real. Then: the call is refused with
// the executor's code and ran nothing, its running entry is gone, nothing of it is in the store;
// the revoke is answered unsaved and still honored while the process runs.
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Reservations } from "../../src/accounting/reservations.js"
import { GroupCommit } from "../../src/store/sqlite/group-commit.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import { admit } from "../../src/writ/executor/admission.js"
import { revoke as recordRevoke } from "../../src/writ/executor/revocation.js"
import { STORE_UNAVAILABLE, Peer } from "../../src/writ/executor/services.js"
import { makeEnv } from "../../src/writ/executor/state.js"
import { CallStore } from "../../src/writ/executor/stores.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { act, call, executorContext, identity, key, ok, revoke, scripted, settable, writ } from "./fixtures.js"
import { chattr, immutableSupported as supportsImmutable } from "../support/immutable.js"

const A = key(1)
const B = key(2)
const E = key(3)

const dir = mkdtempSync(join(tmpdir(), "mandate-executor-group-"))
const immutableSupported = supportsImmutable(dir, "the failed group COMMIT test is")

const suspended = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
  Effect.gen(function*() {
    for (;;) {
      if ((yield* Fiber.status(fiber))._tag === "Suspended") return
      yield* Effect.yieldNow()
    }
  })

describe("the executor on group commit, a batch whose COMMIT fails", () => {
  it.scopedLive.skipIf(!immutableSupported)("fails the call and the revoke in it by section 9, and takes back the running entry", () =>
    Effect.gen(function*() {
      const file = join(dir, "executor.db")
      const locked = [file, `${file}-wal`]
      yield* Effect.addFinalizer(() => Effect.sync(() => chattr("-i", locked)))
      const stores = (yield* Layer.build(SqliteWrit.layer(file))) as Context.Context<StoreContext | GroupCommit>
      const g = Context.get(stores, GroupCommit)
      const app = scripted(() => Effect.succeed(ok()))
      const env = yield* makeEnv({}).pipe(
        Effect.provide(executorContext(stores as Context.Context<StoreContext>, { executorKey: E, accept: [A], app: app.service }))
      )
      const w1 = writ(A, B, { act: act("travel") })
      const w2 = writ(B, E, { act: act("travel"), uses: { t: "count", v: 1 } }, w1)
      const c = call(B, [w1, w2], "travel/x")

      // A batch held open by the test; behind it the call, then the revoke, then the fault.
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(g.run(Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))))
      yield* Deferred.await(started)
      const admission = yield* Effect.fork(admit(env, c, Peer.none))
      yield* suspended(admission)
      const revoked = yield* Effect.fork(recordRevoke(env, revoke(A, [w1]), Peer.none))
      yield* suspended(revoked)
      const fault = yield* Effect.fork(g.run(Effect.sync(() => expect(chattr("+i", locked)).toBe(true))))
      yield* suspended(fault)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)

      const answered = yield* Fiber.join(admission)
      if (answered._tag !== "answered" || answered.answer._tag !== "tally") throw new Error(`expected a refusal, got ${answered._tag}`)
      expect([answered.answer.tally.st, answered.answer.tally.err]).toEqual(["failed", { code: STORE_UNAVAILABLE }])
      expect(yield* Fiber.join(revoked)).toEqual({ _tag: "unsaved", code: STORE_UNAVAILABLE })
      // No in-memory state says the call was accepted; nothing ran.
      expect(env.state.running.size).toBe(0)
      expect(app.log.length).toBe(0)
      expect(chattr("-i", locked)).toBe(true)
      // Nothing of the batch was kept: no entry, no use consumed, no revoke recorded.
      const calls = Context.get(stores, CallStore)
      expect(yield* calls.get(identity(w2), c.id as string)).toEqual(Option.none())
      expect(yield* Context.get(stores, Reservations).used(`writ/count/${identity(w2)}`)).toBe(0n)
      // The unsaved revoke is still honored (section 9): the call, retried on a working store, is refused.
      const retried = yield* admit(env, c, Peer.none)
      if (retried._tag !== "answered" || retried.answer._tag !== "tally") throw new Error("expected a refusal")
      expect(retried.answer.tally.err).toEqual({ code: "revoked" })
      expect(app.log.length).toBe(0)
    }).pipe(Effect.withClock(settable().clock)))
})
