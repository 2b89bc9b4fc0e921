// The Reservations suite on PostgreSQL, plus two separate pools and several processes racing on one
// key, restart (pool closed and reopened), a crash mid-transaction, and a trigger that refuses a write.
// Skipped, with a notice, when PostgreSQL is not reachable. Each run uses its own schema, dropped after.
import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { type Atomic, Reservations } from "../../src/accounting/reservations.js"
import * as PgStore from "../../src/store/postgres/client.js"
import * as PgReservations from "../../src/store/postgres/reservations.js"
import { pgReachable, uniqueSchema } from "./pg.js"
import { killMidTransaction, raceProcess } from "./processes.js"
import { sqlHarness, withCallerTable } from "./sql-harness.js"
import { fresh, reservationSuite } from "./suite.js"

const up = await pgReachable()
const schema = uniqueSchema("acc")

const open = () =>
  withCallerTable(PgReservations.layer, PgStore.migrate, PgStore.layer({ schema, maxConnections: 8 }))

afterAll(async () => {
  if (!up) return
  await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).pipe(
    Effect.provide(PgStore.layer())
  ))
})

const harness = sqlHarness({ name: "postgres", layer: open(), propertyRuns: 40 })

const failure = <A, E>(exit: Exit.Exit<A, E>) => (Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined)

describe.skipIf(!up)("postgres", () => {
  reservationSuite(harness)

  describe("Reservations (postgres, shared by many workers)", () => {
    /** One pool: opened, used, closed. */
    const withStore = <A, E>(eff: Effect.Effect<A, E, Reservations | Atomic | SqlClient.SqlClient>) =>
      Effect.provide(eff, open())
    const used = (key: string) => withStore(Effect.flatMap(Reservations, (r) => r.used(key)))

    it.live("lets exactly floor(limit/amount) through across two separate pools", () =>
      Effect.gen(function*() {
        const k = fresh("pools")
        const race = (side: string) =>
          withStore(Effect.flatMap(Reservations, (r) =>
            Effect.forEach(Array.from({ length: 40 }, (_, i) => i), (i) =>
              Effect.either(r.reserve({
                id: `${k}-${side}-${i}`,
                limits: [{ key: k, limit: 100n, amount: 7n }, { key: `${k}-b`, limit: 1000n, amount: 1n }],
                onFailure: "consume"
              })), { concurrency: "unbounded" })))
        const [ra, rb] = yield* Effect.all([race("a"), race("b")], { concurrency: 2 })
        const all = [...ra, ...rb]
        expect(all.filter((e) => e._tag === "Left" && e.left._tag !== "LimitExhausted")).toEqual([])
        expect(all.filter((e) => e._tag === "Right").length).toBe(14)
        expect(yield* used(k)).toBe(98n)
        expect(yield* used(`${k}-b`)).toBe(14n)
      }))

    it.live("lets exactly floor(limit/amount) through across several processes", () =>
      Effect.gen(function*() {
        const k = fresh("procs")
        // Processes take about a second to start; all of them begin reserving at one instant.
        const startAt = Date.now() + 2500
        const tallies = yield* Effect.promise(() =>
          Promise.all([0, 1, 2].map((p) =>
            raceProcess({ store: "pg", target: schema, key: k, idPrefix: `${k}-p${p}`, n: 60, limit: "300", amount: "3", slowMs: 2, startAt })
          ))
        )
        expect(tallies.flatMap((t) => t.other)).toEqual([])
        expect(tallies.reduce((s, t) => s + t.ok, 0)).toBe(100)
        expect(tallies.reduce((s, t) => s + t.exhausted, 0)).toBe(180 - 100)
        expect(yield* used(k)).toBe(300n)
      }))

    it.live("keeps consumption and reservations across closing and reopening the pool", () =>
      Effect.gen(function*() {
        const [k, held, done] = [fresh("k"), fresh("id"), fresh("id")]
        yield* withStore(Effect.flatMap(Reservations, (r) =>
          Effect.all([
            r.reserve({ id: held, limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" }),
            r.reserve({ id: done, limits: [{ key: k, limit: 10n, amount: 5n }], onFailure: "consume" }),
            r.commit(done, { [k]: 3n })
          ])))
        const after = yield* withStore(Effect.flatMap(Reservations, (r) =>
          Effect.all({
            used: r.used(k),
            replay: r.reserve({ id: held, limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" }),
            release: r.release(held),
            usedAfter: r.used(k)
          })))
        expect(after.used).toBe(7n)
        expect(after.replay).toMatchObject({ replayed: true, state: "held" })
        expect(after.usedAfter).toBe(3n)
      }))

    it.live("leaves nothing behind when a worker is killed mid-transaction", () =>
      Effect.gen(function*() {
        const [k, id] = [fresh("k"), fresh("crash")]
        yield* Effect.promise(() =>
          killMidTransaction({ store: "pg", target: schema, key: k, idPrefix: id, limit: "10", amount: "5" })
        )
        const state = yield* withStore(Effect.flatMap(Reservations, (r) => Effect.all({ used: r.used(k), crash: r.get(id) })))
        expect(state.used).toBe(0n)
        expect(state.crash._tag).toBe("None")
      }))

    it.scopedLive("answers a write the database refuses with StoreError and consumes nothing (trigger)", () =>
      Effect.gen(function*() {
        const ctx = yield* Layer.build(open())
        const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
        const r = yield* Effect.provide(Reservations, ctx)
        const k = fresh("trig")
        yield* sql.unsafe(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.id LIKE 'trig-%' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$`)
        yield* sql.unsafe(`CREATE TRIGGER refuse BEFORE INSERT ON accounting_reservations
          FOR EACH ROW EXECUTE FUNCTION refuse()`)
        const id = fresh("trig")
        const exit = yield* Effect.exit(r.reserve({ id, limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" }))
        // The reserve is one statement (accounting_reserve): its failure is the step's, named so.
        expect(failure(exit)).toMatchObject({ _tag: "StoreError", operation: "reservations.reserve" })
        expect(yield* r.used(k)).toBe(0n)
        yield* sql.unsafe("DROP TRIGGER refuse ON accounting_reservations")
        yield* r.reserve({ id, limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" })
        expect(yield* r.used(k)).toBe(4n)
      }))

    it.scopedLive("a corrupted row is a StoreError, never a wrong value", () =>
      Effect.gen(function*() {
        const ctx = yield* Layer.build(open())
        const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
        const r = yield* Effect.provide(Reservations, ctx)
        const [k, id] = [fresh("k"), fresh("id")]
        yield* r.reserve({ id, limits: [{ key: k, limit: 10n, amount: 4n }], onFailure: "consume" })
        yield* sql`UPDATE accounting_reservations SET state = 'half' WHERE id = ${id}`
        expect(failure(yield* Effect.exit(r.get(id)))).toMatchObject({ _tag: "StoreError", operation: "reservations.load" })
        expect(failure(yield* Effect.exit(r.commit(id)))).toMatchObject({ _tag: "StoreError", operation: "reservations.load" })
        yield* sql`UPDATE accounting_usage SET used = -1 WHERE key = ${k}`
        expect(failure(yield* Effect.exit(r.used(k)))).toMatchObject({ _tag: "StoreError", operation: "reservations.used" })
      }))

    it.live("fails to open an unreachable server with StoreError", () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Effect.provide(
          Reservations,
          PgReservations.layer.pipe(Layer.provideMerge(PgStore.layer({ url: "postgres://postgres@127.0.0.1:1/test", connectTimeoutMs: 500 })))
        ))
        expect(failure(exit)).toMatchObject({ _tag: "StoreError", operation: "postgres.open" })
      }))
  })
})
