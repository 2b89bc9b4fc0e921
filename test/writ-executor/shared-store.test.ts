// Two executor processes on one SQLite file (issue 32, part 2): a revoke recorded and acked by one
// must refuse the other's replays of a call it already answered, on its plain replay path too
// (section 7: step 7, revocation, before step 9, the stored answer). In-process: two executors,
// each on its own connection to the file (its own SqliteWrit.layer), exactly what two `writ serve`
// processes hold; nothing in memory is shared between them.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import { AdmissionGate } from "../../src/writ/executor/admission-gate.js"
import { makeExecutorWith } from "../../src/writ/executor/executor.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { Peer, RootPolicy } from "../../src/writ/executor/services.js"
import { Received } from "../../src/writ/verify.js"
import { act, call, executorContext, key, ok, revoke, scripted, settable, T0, writ } from "./fixtures.js"

const A = key(1)
const B = key(2)
const E = key(3)

const bytesOf = (o: JsonObject) => new Received(new TextEncoder().encode(encodeCanonical(o, "utf16")))
const fileName = () => join(mkdtempSync(join(tmpdir(), "mandate-writ-shared-")), "executor.sqlite")

/** One "process": its own connection to `file` and an executor on it whose plain replay path is on. */
const process_ = (file: string) =>
  Effect.gen(function*() {
    const built = yield* Layer.build(SqliteWrit.layer(file)).pipe(Effect.orDie)
    const stores = built as Context.Context<StoreContext>
    const app = scripted(() => Effect.succeed(ok({ charge: "ch_1" })))
    const options = { executorKey: E, accept: [A], app: app.service }
    // acceptsNow: step 5 answered synchronously, as `writ serve`'s root policy does.
    const context = Context.add(executorContext(stores, options), RootPolicy, {
      accepts: (k: string) => Effect.succeed(k === A.did),
      acceptsNow: (k: string) => k === A.did
    })
    // One audit row for replays, then suppressed: the plain path is the one answering after it.
    const ex = yield* makeExecutorWith({ shutdownGrace: 0, replayAudit: { burst: 1, perSecond: 1 } }).pipe(Effect.provide(context))
    return { ex, app, gate: Context.get(built, AdmissionGate) }
  })

describe("two executors on one SQLite file", () => {
  it.scoped("a revoke acked by one refuses the other's replays, plain path included", () =>
    Effect.gen(function*() {
      const file = fileName()
      const x = yield* process_(file)
      const y = yield* process_(file)
      expect(x.gate.revocationMark).toBeDefined()
      const w1 = writ(A, B, { act: act("travel") })
      const w2 = writ(B, E, { act: act("travel") }, w1)
      const c = call(B, [w1, w2], "travel/x")
      const first = yield* x.ex.call(bytesOf(c))
      expect(first).toMatchObject({ _tag: "tally", tally: { st: "ok" } })
      // The Effect path answers the first replay (and writes its audit row); then the plain path.
      yield* x.ex.call(bytesOf(c))
      const plain = x.ex.replayNow!(bytesOf(c), Peer.none, T0 * 1000)
      expect(plain).toEqual(first)
      // An unrelated commit by the other process moves nothing the plain path relies on.
      const other = call(B, [w1, w2], "travel/y")
      expect(yield* y.ex.call(bytesOf(other))).toMatchObject({ _tag: "tally", tally: { st: "ok" } })
      expect(x.ex.replayNow!(bytesOf(c), Peer.none, T0 * 1000)).toEqual(first)

      expect(yield* y.ex.revoke(revoke(A, [w1]))).toMatchObject({ _tag: "recorded" })
      // Right after the ack: no stored answer from the plain path, and the full path refuses it.
      expect(x.ex.replayNow!(bytesOf(c), Peer.none, T0 * 1000)).toBeUndefined()
      const after = yield* x.ex.call(bytesOf(c))
      expect(after).toMatchObject({ _tag: "tally", tally: { st: "failed", err: { code: "revoked" } } })
      expect(x.ex.replayNow!(bytesOf(c), Peer.none, T0 * 1000)).toBeUndefined()
      // The operation ran once, in the process that accepted it.
      expect([x.app.log.length, y.app.log.length]).toEqual([1, 1])
    }).pipe(Effect.withClock(settable().clock)))
})
