// Several executor workers on one PostgreSQL schema serve one executor key.
// In-process workers (each its own pool, worker identity and executor) over the real database:
// exactly-once `count`, exact `total` and byte-identical replays when the calls of a race land on
// different workers; a revoke recorded by one worker refuses the next admission on every worker
// and stops an operation running on another; recovery resolves only the records of a worker that
// is gone, and a worker taken for gone cannot overwrite the answer another gave; a replay after a
// revoke acked by another worker is refused (the revocation sequence number, issue 32).
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Deferred, Effect, Option, Scope } from "effect"
import { afterAll } from "vitest"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import type { CallAnswer } from "../../src/writ/executor/executor.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import { statementCounter } from "../../src/store/postgres/statement-counter.js"
import { admissionLocks, revokeLocks } from "../../src/store/postgres/writ-gate.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { Received } from "../../src/writ/verify.js"
import { CallStore, ReversalStore } from "../../src/writ/executor/stores.js"
import { act, call, key, revoke, rig, settable, writ } from "../writ-executor/fixtures.js"
import { accepted as storedCall } from "../writ-executor/stores-cases.js"
import { dropSchema, openStores, pgReachable, startWorker, uniqueSchema } from "./support.js"

const up = await pgReachable()
const schemas: Array<string> = []
const fresh = (label: string) => {
  const s = uniqueSchema(label)
  schemas.push(s)
  return s
}
afterAll(async () => {
  if (up) for (const s of schemas) await dropSchema(s)
})

const ROOT = key(41)
const EXEC = key(42)
const MID = key(43)

const tallyOf = (a: CallAnswer): JsonObject => {
  if (a._tag !== "tally") throw new Error(`expected a tally, got error ${a.reason}`)
  return a.tally
}
const codeOf = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null
const bytes = (a: CallAnswer) => encodeCanonical(tallyOf(a) as JsonObject, "utf16")

/** Completes every operation at once, reporting `amount` as consumed. */
const instant = {
  perform: (op: { readonly args: JsonObject }) =>
    Effect.succeed<Outcome>({ st: "ok", res: { n: op.args.n ?? null }, used: typeof op.args.amount === "number" ? { amount: op.args.amount } : {} })
}

describe.skipIf(!up)("N executor workers on one PostgreSQL schema", () => {
  it.live("a count and a total race spread over 3 workers admit exactly the bound, and every replay is byte-identical", () =>
    Effect.gen(function*() {
      const schema = fresh("wrace")
      const workers = yield* Effect.all([1, 2, 3].map(() => startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: instant })))
      const counted = writ(ROOT, EXEC, { act: act("k"), uses: { t: "count", v: 7 } })
      const totaled = writ(ROOT, EXEC, { act: act("k"), amount: { t: "total", v: 50 } })
      const calls = [
        ...Array.from({ length: 24 }, (_, n) => call(ROOT, [counted], "k/count", { n })),
        ...Array.from({ length: 24 }, (_, n) => call(ROOT, [totaled], "k/total", { n, amount: 6 }))
      ]
      const answers = yield* Effect.forEach(calls, (c, i) => workers[i % 3].executor.call(c), { concurrency: "unbounded" })
      const tallies = answers.map(tallyOf)
      const okCount = tallies.slice(0, 24).filter((t) => t.st === "ok").length
      const okTotal = tallies.slice(24).filter((t) => t.st === "ok").length
      expect(okCount).toBe(7)
      expect(okTotal).toBe(8) // 8 * 6 = 48 <= 50 < 54
      expect(tallies.slice(0, 24).filter((t) => codeOf(t) === "count_exhausted").length).toBe(17)
      expect(tallies.slice(24).filter((t) => codeOf(t) === "total_exhausted").length).toBe(16)
      // Replays on another worker than the one that answered: the same bytes.
      const again = yield* Effect.forEach(calls, (c, i) => workers[(i + 1) % 3].executor.call(c), { concurrency: 6 })
      for (const [i, a] of again.entries()) {
        if (tallies[i].st === "ok") expect(bytes(a)).toBe(bytes(answers[i]))
      }
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 120_000)

  it.live("a revoke on one worker stops an operation running on another and refuses the next admission on every worker", () =>
    Effect.gen(function*() {
      const schema = fresh("wrevoke")
      const started = yield* Deferred.make<void>()
      const held = {
        perform: (op: { readonly op: string; readonly stopSignal: Effect.Effect<void> }) =>
          op.op === "k/hold"
            ? Effect.zipRight(Deferred.succeed(started, undefined), Effect.as(op.stopSignal, { st: "canceled", code: "test/stopped" } as Outcome))
            : Effect.succeed<Outcome>({ st: "ok" })
      }
      const a = yield* startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: held })
      const b = yield* startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: held })
      const w = writ(ROOT, EXEC, { act: act("k") })
      const running = yield* Effect.fork(a.executor.call(call(ROOT, [w], "k/hold")))
      yield* Deferred.await(started)
      // A notice that is not a revoke's keys is dropped; the listener goes on.
      const sql = Context.get(b.context, SqlClient.SqlClient)
      yield* Effect.orDie(sql`SELECT pg_notify(${`mandate_writ_revoke_${schema}`}, 'not json')`)
      const answer = yield* b.executor.revoke(revoke(ROOT, [w]))
      expect(answer._tag).toBe("recorded")
      // Worker A learns of it by its LISTEN: the operation sees its stop signal and ends.
      const stopped = tallyOf(yield* running.await.pipe(Effect.flatten))
      expect([stopped.st, codeOf(stopped)]).toEqual(["canceled", "test/stopped"])
      for (const worker of [a, b]) {
        const t = tallyOf(yield* worker.executor.call(call(ROOT, [w], "k/after")))
        expect([t.st, codeOf(t)]).toEqual(["failed", "revoked"])
      }
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 60_000)

  it.live("a starting worker leaves a live worker's pending records alone and resolves those of a worker that is gone", () =>
    Effect.gen(function*() {
      const schema = fresh("wrecover")
      const release = yield* Deferred.make<Outcome>()
      const started = yield* Deferred.make<void>()
      const blocked = { perform: () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)) }
      const live = yield* startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: blocked })
      const w = writ(ROOT, EXEC, { act: act("k") })
      const c1 = call(ROOT, [w], "k/slow")
      const running = yield* Effect.fork(live.executor.call(c1))
      yield* Deferred.await(started)
      // A second worker starts while the first is running c1: nothing of the first is its to resolve.
      const second = yield* startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: instant })
      expect(second.resolved).toBe(0)
      yield* Deferred.succeed(release, { st: "ok", res: "done" })
      const t1 = tallyOf(yield* Effect.flatten(running.await))
      expect(t1.st).toBe("ok")
      // A worker that dies with a call pending: the next worker to start resolves it (section 9).
      const started2 = yield* Deferred.make<void>()
      const never = { perform: () => Effect.zipRight(Deferred.succeed(started2, undefined), Effect.never) }
      const doomed = yield* startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: never })
      const c2 = call(ROOT, [w], "k/lost")
      yield* Effect.fork(doomed.executor.call(c2))
      yield* Deferred.await(started2)
      yield* doomed.crash
      const third = yield* startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: instant })
      expect(third.resolved).toBe(1)
      const t2 = tallyOf(yield* second.executor.call(c2))
      expect([t2.st, codeOf(t2)]).toEqual(["failed", "unknown_outcome"])
      // The first worker's answer to c1 is still the one it gave.
      expect(bytes(yield* third.executor.call(c1))).toBe(encodeCanonical(t1, "utf16"))
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 60_000)

  it.live("a worker cannot finalize a record another worker holds (a worker taken for gone cannot overwrite)", () =>
    Effect.gen(function*() {
      const schema = fresh("wfence")
      const one = yield* openStores(schema)
      const two = yield* openStores(schema)
      const calls1 = yield* Effect.provide(CallStore, one.context)
      const calls2 = yield* Effect.provide(CallStore, two.context)
      yield* calls1.insertPending(storedCall)
      // Answered false, writing nothing: the caller answers the holder's resolution instead.
      expect(yield* calls2.finalize(storedCall.leaf, storedCall.id, { st: "ok" }, Option.none())).toBe(false)
      expect((yield* calls2.get(storedCall.leaf, storedCall.id)).pipe(Option.map((e) => e.state))).toEqual(Option.some("pending"))
      // The holder of the record is live: a claim by the second finds nothing to resolve.
      expect(yield* calls2.claimOrphans!).toEqual([])
      yield* one.close
      const claimed = yield* calls2.claimOrphans!
      expect(claimed.map((c) => c.id)).toEqual([storedCall.id])
      expect(yield* calls2.finalize(storedCall.leaf, storedCall.id, { st: "failed" }, Option.none())).toBe(true)
      yield* two.close
    }).pipe(Effect.scoped, Effect.orDie), 60_000)

  it.live("a reversal another live worker began stays begun at a restart; one of a worker that is gone becomes unknown (8.1)", () =>
    Effect.gen(function*() {
      const schema = fresh("wreversal")
      const one = yield* openStores(schema)
      const two = yield* openStores(schema)
      const r1 = yield* Effect.provide(ReversalStore, one.context)
      const r2 = yield* Effect.provide(ReversalStore, two.context)
      yield* r1.begin("T".repeat(43), "C".repeat(43))
      expect(yield* r2.markBegunUnknown).toBe(0)
      expect(yield* r2.get("T".repeat(43))).toEqual(Option.some({ state: "begun", call: "C".repeat(43) }))
      yield* one.close
      expect(yield* r2.markBegunUnknown).toBe(1)
      expect(yield* r2.get("T".repeat(43))).toEqual(Option.some({ state: "unknown", call: "C".repeat(43) }))
      yield* two.close
    }).pipe(Effect.scoped, Effect.orDie), 60_000)

  it.live("admissions on chains that share writs and issuers, and revokes of a leaf and of a key, on 2 workers: none waits forever, every acknowledged revoke refuses", () =>
    Effect.gen(function*() {
      const schema = fresh("wlocks")
      const [a, b] = yield* Effect.all([1, 2].map(() => startWorker(schema, { executorKey: EXEC, accept: [ROOT], app: instant })))
      const parent = writ(ROOT, MID, { act: act("k") })
      const leaves = Array.from({ length: 4 }, () => writ(MID, EXEC, { act: act("k") }, parent))
      const calls = Array.from({ length: 40 }, (_, n) => call(MID, [parent, leaves[n % 4]], "k/x", { n }))
      const [answers, revoked] = yield* Effect.all([
        Effect.forEach(calls, (c, i) => [a, b][i % 2].executor.call(c), { concurrency: "unbounded" }),
        Effect.forEach([0, 1], (i) => [b, a][i].executor.revoke(revoke(MID, [parent, leaves[i]])), { concurrency: "unbounded" })
      ], { concurrency: "unbounded" })
      expect(revoked.map((r) => r._tag)).toEqual(["recorded", "recorded"])
      for (const t of answers.map(tallyOf)) expect(t.st === "ok" || codeOf(t) === "revoked").toBe(true)
      // A key-wide revoke by MID covers every writ MID issued, on both workers.
      expect((yield* a.executor.revoke(revoke(MID, [])))._tag).toBe("recorded")
      for (const [i, leaf] of leaves.entries()) {
        const t = tallyOf(yield* [a, b][i % 2].executor.call(call(MID, [parent, leaf], "k/after")))
        expect([t.st, codeOf(t)]).toEqual(["failed", "revoked"])
      }
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 120_000)

  it("an admission locks the leaf exclusively and the rest of its chain and its issuers shared; a revoke locks what it revokes exclusively", () => {
    expect(admissionLocks({ writs: ["r", "m", "l"], issuers: ["A", "B", "B"] })).toEqual([
      ["w/r", false], ["w/m", false], ["w/l", true], ["i/A", false], ["i/B", false], ["i/B", false]
    ])
    expect(revokeLocks({ writs: ["m"], issuers: [] })).toEqual([["w/m", true]])
    expect(revokeLocks({ writs: [], issuers: ["A"] })).toEqual([["i/A", true]])
  })
})

/** The call as received bytes: replays are looked up by them (replays.ts). */
const received = (o: JsonObject) => new Received(new TextEncoder().encode(encodeCanonical(o, "utf16")))

/** A worker on `schema` whose statements are counted, its executor over them. */
const countedWorker = (schema: string) =>
  Effect.gen(function*() {
    const counter = statementCounter()
    const stores = yield* openStores(schema, counter.stream)
    yield* Effect.addFinalizer(() => stores.close)
    const executor = yield* rig(stores.context as unknown as Context.Context<StoreContext>, {
      executorKey: EXEC,
      accept: [ROOT],
      app: instant
    }).pipe(Scope.extend(stores.scope))
    return { executor, counter, context: stores.context }
  })

// A replay's step 7 by the schema's revocation sequence number (issue 32; section 7: revocation
// before step 9's stored answer; src/store/postgres/revocation-seq.ts): while no revoke is
// recorded, a worker's replays read the number and not the revoke store; a revoke recorded and
// acked by another worker (or written to the schema by any writer) moves it, and the very next
// replay asks the revoke store and is refused.
const readsSeq = (s: ReadonlyArray<string>) => s.some((t) => t.includes("writ_revocation_seq"))
const readsRevokes = (s: ReadonlyArray<string>) => s.some((t) => /FROM writ_revokes/.test(t))

describe.skipIf(!up)("replays on PostgreSQL by the revocation sequence number", () => {
  it.live("no revoke since: the number, not the revoke store; a revoke acked by another worker refuses the next replay", () =>
    Effect.gen(function*() {
      const schema = fresh("wseq")
            const a = yield* countedWorker(schema)
      const b = yield* countedWorker(schema)
      const w = writ(ROOT, EXEC, { act: act("k") })
      const c = received(call(ROOT, [w], "k/one"))
      const first = yield* a.executor.call(c)
      expect(tallyOf(first).st).toBe("ok")
      // The first replay finds the chain not revoked in the store, and takes the number before.
      a.counter.reset()
      expect(bytes(yield* a.executor.call(c))).toBe(bytes(first))
      expect(readsRevokes(a.counter.statements())).toBe(true)
      // Later ones: only the number, while it stays.
      for (let i = 0; i < 3; i++) {
        a.counter.reset()
        expect(bytes(yield* a.executor.call(c))).toBe(bytes(first))
        expect(readsSeq(a.counter.statements())).toBe(true)
        expect(readsRevokes(a.counter.statements())).toBe(false)
      }
      // An unrelated admission at B moves nothing the replay relies on.
      expect(tallyOf(yield* b.executor.call(call(ROOT, [w], "k/two"))).st).toBe("ok")
      a.counter.reset()
      expect(bytes(yield* a.executor.call(c))).toBe(bytes(first))
      expect(readsRevokes(a.counter.statements())).toBe(false)

      // B records and acks a revoke; A's very next replay is refused (no wait for B's notice).
      expect(yield* b.executor.revoke(revoke(ROOT, [w]))).toMatchObject({ _tag: "recorded" })
      a.counter.reset()
      const after = tallyOf(yield* a.executor.call(c))
      expect([after.st, codeOf(after)]).toEqual(["failed", "revoked"])
      expect(readsRevokes(a.counter.statements())).toBe(true)
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 60_000)

  it.live("a revoke written to the schema by any writer moves the number (the trigger), and the replay is refused", () =>
    Effect.gen(function*() {
      const schema = fresh("wseqt")
            const a = yield* countedWorker(schema)
      const w = writ(ROOT, EXEC, { act: act("k") })
      const c = received(call(ROOT, [w], "k/one"))
      const first = yield* a.executor.call(c)
      expect(tallyOf(first).st).toBe("ok")
      expect(bytes(yield* a.executor.call(c))).toBe(bytes(first))
      const sql = Context.get(a.context, SqlClient.SqlClient)
      const before = yield* Effect.orDie(sql<{ n: number }>`SELECT n::float8 AS n FROM writ_revocation_seq`)
      // A key-wide revoke of the root's key, recorded as another process's store would record it.
      yield* Effect.orDie(sql`INSERT INTO writ_revokes (revoke, writ, iss, exp, rcv) VALUES ('x', '*', ${ROOT.did}, NULL, 0)`)
      const moved = yield* Effect.orDie(sql<{ n: number }>`SELECT n::float8 AS n FROM writ_revocation_seq`)
      expect(moved[0].n).toBe(before[0].n + 1)
      const after = tallyOf(yield* a.executor.call(c))
      expect([after.st, codeOf(after)]).toEqual(["failed", "revoked"])
    }).pipe(Effect.scoped, Effect.withClock(settable().clock)), 60_000)
})
