// PostgreSQL's reserve is one statement (accounting_reserve, a migration). What that
// must keep, on a schema of this file's own: exactly floor(limit/amount) of many fibers on one hot
// limit, all or nothing over several limits, one draw per id under concurrent same-id reserves,
// settlement racing reserves on the same rows, real faults refused by the database mid-statement
// (alone and inside a caller's step), and a store migrated before the function gaining it.
import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Metric } from "effect"
import { Atomic, Reservations } from "../../src/accounting/reservations.js"
import * as PgStore from "../../src/store/postgres/client.js"
import { batchFallbacks, sentStatements } from "../../src/store/postgres/reserve-batch.js"
import * as PgReservations from "../../src/store/postgres/reservations.js"
import { reservationMigrations } from "../../src/store/sql/reservations.js"
import { pgReachable, uniqueSchema } from "./pg.js"
import { fresh } from "./suite.js"

const up = await pgReachable()
const schema = uniqueSchema("acchot")
const client = (s: string) => PgStore.layer({ schema: s, maxConnections: 8 })
const open = (s: string = schema) => PgReservations.layer.pipe(Layer.provideMerge(client(s)))
const dropped: Array<string> = [schema]

afterAll(async () => {
  if (!up) return
  for (const s of dropped) {
    await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${s} CASCADE`)).pipe(
      Effect.provide(PgStore.layer())
    ))
  }
})

const failure = <A, E>(exit: Exit.Exit<A, E>) => (Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined)

describe.skipIf(!up)("postgres hot limits (one-statement reserve)", () => {
  it.live("many fibers on one hot limit: exactly floor(limit/amount) draw, all or nothing, once per id", () =>
    Effect.gen(function*() {
      const r = yield* Reservations
      const [hot, tight] = [fresh("hot"), fresh("tight")]
      // The second limit binds first: 900/9 = 100 draws, while the hot one alone would let 142.
      const limits = [{ key: hot, limit: 1000n, amount: 7n }, { key: tight, limit: 900n, amount: 9n }]
      const ids = Array.from({ length: 200 }, (_, i) => `${hot}-${i}`)
      // Every id is reserved twice at once: the second must answer the first, never draw again.
      const results = yield* Effect.forEach([...ids, ...ids], (id) => Effect.either(r.reserve({ id, limits, onFailure: "consume" })), {
        concurrency: "unbounded"
      })
      expect(results.filter((e) => e._tag === "Left" && e.left._tag !== "LimitExhausted")).toEqual([])
      const drawn = results.filter((e) => e._tag === "Right" && !e.right.replayed).map((e) => e._tag === "Right" ? e.right.id : "")
      expect(drawn.length).toBe(100)
      expect(new Set(drawn).size).toBe(100)
      expect(results.filter((e) => e._tag === "Right" && e.right.replayed).length).toBe(100)
      for (const e of results) {
        if (e._tag === "Left" && e.left._tag === "LimitExhausted") expect(e.left).toMatchObject({ key: tight, used: 900n })
      }
      expect([yield* r.used(hot), yield* r.used(tight)]).toEqual([700n, 900n])

      // Half released while 100 new ids race for what that gives back: exactly 50 more fit.
      const more = Array.from({ length: 100 }, (_, i) => `${hot}-more-${i}`)
      const [released, second] = yield* Effect.all([
        Effect.forEach(drawn.slice(0, 50), (id) => r.release(id), { concurrency: "unbounded" }),
        Effect.forEach(more, (id) => Effect.either(r.reserve({ id, limits, onFailure: "consume" })), { concurrency: "unbounded" })
      ], { concurrency: 2 })
      expect(released.every((x) => x.state === "released")).toBe(true)
      expect(second.filter((e) => e._tag === "Left" && e.left._tag !== "LimitExhausted")).toEqual([])
      const late = second.filter((e) => e._tag === "Right").length
      // Reserves that ran before the releases committed were refused; none drew beyond the limits.
      expect(late).toBeLessThanOrEqual(50)
      expect([yield* r.used(hot), yield* r.used(tight)]).toEqual([BigInt(350 + 7 * late), BigInt(450 + 9 * late)])
      // And once every release has committed, exactly what is left fits.
      const rest = yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => `${hot}-rest-${i}`),
        (id) => Effect.either(r.reserve({ id, limits, onFailure: "consume" })),
        { concurrency: "unbounded" }
      )
      expect(rest.filter((e) => e._tag === "Right").length).toBe(50 - late)
      expect([yield* r.used(hot), yield* r.used(tight)]).toEqual([700n, 900n])
    }).pipe(Effect.provide(open())))

  it.scopedLive("a write the database refuses mid-statement draws nothing, alone or inside a caller's step", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(open())
      const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
      const r = Effect.provide(Reservations, ctx)
      const [k1, k2] = [fresh("a"), fresh("z")]
      // The second key's draw fails after the first key's row was written in the same statement.
      yield* sql.unsafe(`CREATE FUNCTION refuse_usage() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = '${k2}' AND NEW.used > 0 THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER refuse_usage BEFORE UPDATE ON accounting_usage FOR EACH ROW EXECUTE FUNCTION refuse_usage()`)
      const limits = [{ key: k1, limit: 10n, amount: 4n }, { key: k2, limit: 10n, amount: 4n }]
      const res = yield* r
      const alone = yield* Effect.exit(res.reserve({ id: fresh("alone"), limits, onFailure: "consume" }))
      expect(failure(alone)).toMatchObject({ _tag: "StoreError", operation: "reservations.reserve" })
      expect(failure(alone)).toMatchObject({ message: expect.stringContaining("injected fault") })
      const atomic = yield* Effect.provide(Atomic, ctx)
      const inStep = yield* Effect.exit(atomic.transaction(Effect.gen(function*() {
        yield* res.reserve({ id: fresh("first"), limits: [{ key: k1, limit: 10n, amount: 1n }], onFailure: "consume" })
        return yield* res.reserve({ id: fresh("step"), limits, onFailure: "consume" })
      })).pipe(Effect.provide(ctx)))
      expect(failure(inStep)).toMatchObject({ _tag: "StoreError", operation: "reservations.reserve" })
      expect([yield* res.used(k1), yield* res.used(k2)]).toEqual([0n, 0n])
      expect((yield* sql`SELECT count(*)::int AS n FROM accounting_reservations WHERE id LIKE ${"alone-%"} OR id LIKE ${"step-%"} OR id LIKE ${"first-%"}`)[0]).toEqual({ n: 0 })
      yield* sql.unsafe("DROP TRIGGER refuse_usage ON accounting_usage")
      yield* res.reserve({ id: fresh("after"), limits, onFailure: "consume" })
      expect([yield* res.used(k1), yield* res.used(k2)]).toEqual([4n, 4n])
    }))

  it.scopedLive("reserves made together share one statement; one the database refuses fails alone", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(open())
      const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
      const r = yield* Effect.provide(Reservations, ctx)
      const atomic = yield* Effect.provide(Atomic, ctx)
      const [blocker, k] = [fresh("blocker"), fresh("k")]
      const refused = `${k}-refused`
      yield* sql.unsafe(`CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.id = '${refused}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER refuse_one BEFORE INSERT ON accounting_reservations FOR EACH ROW EXECUTE FUNCTION refuse_one()`)
      yield* r.reserve({ id: fresh("seed"), limits: [{ key: blocker, limit: 10n, amount: 1n }], onFailure: "consume" })
      // Another session holds the blocker's row, so the first reserve on it keeps the sending fiber
      // waiting while the next 20 queue up behind it, to be sent together when it is released.
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(atomic.transaction(Effect.gen(function*() {
        yield* sql`SELECT used FROM accounting_usage WHERE key = ${blocker} FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(locked)
      const first = yield* Effect.fork(r.reserve({ id: fresh("first"), limits: [{ key: blocker, limit: 10n, amount: 1n }], onFailure: "consume" }))
      const [sent0, fallbacks0] = [(yield* Metric.value(sentStatements)).count, (yield* Metric.value(batchFallbacks)).count]
      const ids = Array.from({ length: 20 }, (_, i) => (i === 10 ? refused : `${k}-${i}`))
      const racing = yield* Effect.fork(Effect.forEach(ids, (id) =>
        Effect.either(r.reserve({ id, limits: [{ key: k, limit: 100n, amount: 1n }], onFailure: "consume" })), { concurrency: "unbounded" }))
      // The reserves queue behind the blocked one; nothing here is timed, the pause only lets them.
      yield* Effect.sleep("300 millis")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(first)
      const results = yield* Fiber.join(racing)
      const sent = (yield* Metric.value(sentStatements)).count - sent0
      const fallbacks = (yield* Metric.value(batchFallbacks)).count - fallbacks0
      expect(results[10]).toMatchObject({ _tag: "Left", left: { _tag: "StoreError", operation: "reservations.reserve" } })
      expect(results[10]._tag === "Left" ? results[10].left : undefined).toMatchObject({ message: expect.stringContaining("injected fault") })
      expect(results.filter((e) => e._tag === "Right").length).toBe(19)
      expect(yield* r.used(k)).toBe(19n)
      // At least one batch held the refused reserve with others: it was refused whole, and its
      // reserves were sent again alone (one statement each, besides the batches).
      expect(fallbacks).toBeGreaterThanOrEqual(1)
      expect(sent).toBeLessThan(2 * ids.length)
      yield* sql.unsafe("DROP TRIGGER refuse_one ON accounting_reservations")
    }))

  it.live("a store migrated before the reserve function gains it, keeping what it held", () =>
    Effect.gen(function*() {
      const old = uniqueSchema("accold")
      dropped.push(old)
      const k = fresh("k")
      // The tables as the first migration made them, with consumption already recorded.
      yield* Effect.gen(function*() {
        yield* PgStore.migrate(reservationMigrations("NUMERIC"))
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO accounting_usage (key, used) VALUES (${k}, 6)`
        expect(yield* sql`SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
          WHERE p.proname = 'accounting_reserve' AND s.nspname = ${old}`).toEqual([{ n: 0 }])
      }).pipe(Effect.provide(client(old)))
      const after = yield* Effect.gen(function*() {
        const r = yield* Reservations
        const refused = yield* Effect.exit(r.reserve({ id: fresh("id"), limits: [{ key: k, limit: 10n, amount: 5n }], onFailure: "consume" }))
        const taken = yield* r.reserve({ id: fresh("id"), limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" })
        const migrations = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`SELECT migration_id, name FROM mandate_migrations_accounting ORDER BY migration_id`)
        return { refused: failure(refused), taken: taken.replayed, used: yield* r.used(k), migrations }
      }).pipe(Effect.provide(open(old)))
      expect(after.refused).toMatchObject({ _tag: "LimitExhausted", used: 6n, amount: 5n })
      expect(after.taken).toBe(false)
      expect(after.used).toBe(10n)
      expect(after.migrations).toEqual([
        { migration_id: 1, name: "reservations" },
        { migration_id: 2, name: "reserve_function" },
        { migration_id: 3, name: "reserve_batch" }
      ])
    }))
})
