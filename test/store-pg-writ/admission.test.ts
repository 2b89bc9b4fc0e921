// A PostgreSQL admission in one round trip (src/store/postgres/writ-admit.ts): the statements a
// call sends are counted on the pool's sockets, and every refusal the one statement can give is
// checked against the composed step (the same executor with the gate's `admitInOne` taken away),
// on the real database: the same reason code, in section 7's first-failure order.
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Layer, Scope } from "effect"
import { afterAll } from "vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { statementCounter } from "../../src/store/postgres/statement-counter.js"
import * as PgWrit from "../../src/store/postgres/writ-stores.js"
import { AdmissionGate } from "../../src/writ/executor/admission-gate.js"
import type { CallAnswer } from "../../src/writ/executor/executor.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { type Outcome, Peer, STORE_UNAVAILABLE } from "../../src/writ/executor/services.js"
import { identity } from "../../src/writ/sign.js"
import { act, call, key, nonce, revoke, rig, settable, writ } from "../writ-executor/fixtures.js"
import { dropSchema, pgReachable, uniqueSchema } from "./support.js"

const up = await pgReachable()
const schemas: Array<string> = []
afterAll(async () => {
  if (up) for (const s of schemas) await dropSchema(s)
})

const ROOT = key(61)
const EXEC = key(62)
const OTHER = key(63)

const tallyOf = (a: CallAnswer): JsonObject => {
  if (a._tag !== "tally") throw new Error(`expected a tally, got error ${a.reason}`)
  return a.tally
}
const codeOf = (a: CallAnswer) => (tallyOf(a).err as { code?: string } | null)?.code ?? null

/** A statement's first words. */
const head = (s: string) => s.trim().split(/\s+/).slice(0, 4).join(" ")

/** An executor on a fresh schema, one step per admission or (`composed`) the composed step. */
const worker = (
  composed: boolean,
  perform: (sent: ReadonlyArray<string>) => Effect.Effect<Outcome> = () => Effect.succeed({ st: "ok" })
) =>
  Effect.gen(function*() {
    const schema = uniqueSchema(composed ? "admc" : "adm1")
    schemas.push(schema)
    const counter = statementCounter()
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    let context = yield* Layer.buildWithScope(
      PgWrit.layer({ schema, maxConnections: 4, connectTimeoutMs: 60_000, stream: counter.stream }),
      scope
    ).pipe(Effect.orDie)
    if (composed) {
      const { admitInOne: _, ...gate } = Context.get(context, AdmissionGate)
      context = Context.add(context, AdmissionGate, gate)
    }
    const executor = yield* rig(context as unknown as Context.Context<StoreContext>, {
      executorKey: EXEC,
      accept: [ROOT],
      app: { perform: () => Effect.suspend(() => perform(counter.statements())) },
      peers: { bound: [ROOT.did] }
    }).pipe(Scope.extend(scope))
    return { executor, counter, context }
  })

describe.skipIf(!up)("a PostgreSQL admission in one round trip", () => {
  it.live("an accepted call's admission is one statement, a refused call's that statement and its audit row", () =>
    Effect.gen(function*() {
      const atPerform = yield* Deferred.make<ReadonlyArray<string>>()
      const w = yield* worker(false, (sent) => Effect.as(Deferred.succeed(atPerform, [...sent]), { st: "ok" }))
      const counted = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 1 }, amount: { t: "total", v: 9 } })
      w.counter.reset()
      expect(tallyOf(yield* w.executor.call(call(ROOT, [counted], "k/one", { amount: 2 }))).st).toBe("ok")
      // Everything sent before the operation ran (but the LISTEN of the revoke notices, which the
      // executor starts beside its first call): one round trip, the function's.
      const before = yield* Deferred.await(atPerform)
      expect(before.filter((s) => !s.startsWith("LISTEN ")).map(head)).toEqual(["SELECT * FROM writ_admit("])
      expect(w.counter.roundTrips()).toBeGreaterThan(before.length)
      w.counter.reset()
      expect(codeOf(yield* w.executor.call(call(ROOT, [counted], "k/two", { amount: 2 })))).toBe("count_exhausted")
      expect(w.counter.roundTrips()).toBe(2)
      expect(w.counter.statements().map(head)).toEqual([
        "SELECT * FROM writ_admit(",
        "INSERT INTO writ_audit (time,"
      ])
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 60_000)

  // Each case: a call made on a fresh writ, what happens first, and the code both paths answer.
  const cases: ReadonlyArray<{
    readonly name: string
    readonly code: string
    readonly run: (w: Effect.Effect.Success<ReturnType<typeof worker>>) => Effect.Effect<CallAnswer>
  }> = [
    {
      name: "step 7: a revoked writ",
      code: "revoked",
      run: (w) => Effect.gen(function*() {
        const v = writ(ROOT, EXEC, { act: act("k") })
        yield* w.executor.revoke(revoke(ROOT, [v]))
        return yield* w.executor.call(call(ROOT, [v], "k/x"))
      })
    },
    {
      name: "step 7 before step 8: a revoked writ and an op its act does not match",
      code: "revoked",
      run: (w) => Effect.gen(function*() {
        const v = writ(ROOT, EXEC, { act: act("k") })
        yield* w.executor.revoke(revoke(ROOT, [v]))
        return yield* w.executor.call(call(ROOT, [v], "other/x"))
      })
    },
    {
      name: "step 7 before the peer binding: a revoked writ delivered by the wrong peer",
      code: "revoked",
      run: (w) => Effect.gen(function*() {
        const v = writ(ROOT, EXEC, { act: act("k") })
        yield* w.executor.revoke(revoke(ROOT, [v]))
        return yield* w.executor.call(call(ROOT, [v], "k/x"), Peer.named("stranger"))
      })
    },
    {
      name: "step 8: the peer does not speak for `from`",
      code: "peer_mismatch",
      run: (w) => w.executor.call(call(ROOT, [writ(ROOT, EXEC, { act: act("k") })], "k/x"), Peer.named("stranger"))
    },
    {
      name: "step 8: an op the leaf's act does not match",
      code: "forbidden_op",
      run: (w) => w.executor.call(call(ROOT, [writ(ROOT, EXEC, { act: act("k") })], "other/x"))
    },
    {
      name: "step 8, standing: signed by a key that issued no writ of the chain (not revocable)",
      code: "no_standing",
      run: (w) => Effect.gen(function*() {
        const v = writ(ROOT, EXEC, { act: act("k") })
        yield* w.executor.revoke(revoke(ROOT, [v]))
        return yield* w.executor.call(call(OTHER, [v], "sys/tallies"))
      })
    },
    {
      name: "step 10: the count is spent",
      code: "count_exhausted",
      run: (w) => Effect.gen(function*() {
        const v = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 1 } })
        yield* w.executor.call(call(ROOT, [v], "k/x"))
        return yield* w.executor.call(call(ROOT, [v], "k/x"))
      })
    },
    {
      name: "step 10: the total is spent (counts first, then totals)",
      code: "total_exhausted",
      run: (w) => Effect.gen(function*() {
        const v = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 5 }, amount: { t: "total", v: 5 } })
        yield* w.executor.call(call(ROOT, [v], "k/x", { amount: 3 }))
        return yield* w.executor.call(call(ROOT, [v], "k/x", { amount: 3 }))
      })
    },
    {
      name: "step 10: the call's reservation id is taken with other limits",
      code: STORE_UNAVAILABLE,
      run: (w) => Effect.gen(function*() {
        const v = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 5 } })
        const id = nonce()
        yield* Effect.orDie(Context.get(w.context, Reservations).reserve({
          id: `writ/call/${identity(v)}/${id}`,
          limits: [{ key: "elsewhere", limit: 5n, amount: 1n }],
          onFailure: "consume"
        }))
        return yield* w.executor.call(call(ROOT, [v], "k/x", {}, id))
      })
    }
  ]

  for (const path of ["one statement", "composed step"] as const) {
    it.live(`every refusal keeps its reason code (${path})`, () =>
      Effect.gen(function*() {
        const w = yield* worker(path === "composed step")
        for (const c of cases) {
          expect([c.name, codeOf(yield* c.run(w))]).toEqual([c.name, c.code])
        }
      }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 120_000)
  }

  it.live("step 9: a recorded call is answered from the record, byte for byte, before step 10 refuses", () =>
    Effect.gen(function*() {
      const w = yield* worker(false)
      const v = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 1 } })
      const c = call(ROOT, [v], "k/x")
      const first = tallyOf(yield* w.executor.call(c))
      expect(first.st).toBe("ok")
      // The count is spent, but the call is recorded: its final tally again, not a refusal.
      const again = tallyOf(yield* w.executor.call(c))
      expect(encodeCanonical(again, "utf16")).toBe(encodeCanonical(first, "utf16"))
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 60_000)
})
