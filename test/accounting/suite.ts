// One behavioural suite for every Reservations store (memory, SQLite, PostgreSQL). Each store's test
// file supplies a Harness: a Layer over fresh state, the raw backend over the same state (for fault
// injection by wrapping), and a "caller's own store" (a table, or a journaled map) to show that
// Atomic makes the caller's write and the reserve one step.
import { Cause, Deferred, Effect, Exit, Fiber, Layer, ManagedRuntime, Option } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ReservationBackend } from "../../src/accounting/backend.js"
import { makeReservations } from "../../src/accounting/core.js"
import {
  type Actual,
  Atomic,
  type LimitSpec,
  type OnFailure,
  type Reservation,
  Reservations,
  type ReservationsService
} from "../../src/accounting/reservations.js"
import { StoreError } from "../../src/accounting/store-error.js"

export interface Harness<R> {
  readonly name: string
  /** Fresh state; built once for the describe block. */
  readonly layer: Layer.Layer<R | Reservations | Atomic, StoreError>
  /** The store's raw backend over the same state as `layer`. */
  readonly backend: Effect.Effect<ReservationBackend, never, R>
  /** A write to a store of the caller's own that joins Atomic.transaction. */
  readonly callerWrite: (name: string) => Effect.Effect<void, StoreError, R>
  readonly callerHas: (name: string) => Effect.Effect<boolean, StoreError, R>
  readonly propertyRuns: number
  readonly racers: number
}

let unique = 0
/** Keys and ids unique within this process run, so tests sharing one store never collide. */
export const fresh = (label: string): string => `${label}-${process.pid}-${++unique}`

const err = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

const lim = (key: string, limit: number | bigint, amount: number | bigint): LimitSpec => ({
  key,
  limit: BigInt(limit),
  amount: BigInt(amount)
})

export const reservationSuite = <R>(h: Harness<R>) =>
  describe(`Reservations (${h.name})`, () => {
    let rt: ManagedRuntime.ManagedRuntime<R | Reservations | Atomic, StoreError>
    beforeAll(async () => {
      rt = ManagedRuntime.make(h.layer)
      await rt.runPromise(Effect.void)
    })
    afterAll(async () => {
      await rt?.dispose()
    })
    const run = <A, E>(eff: Effect.Effect<A, E, R | Reservations | Atomic>) => rt.runPromise(eff)
    const exit = <A, E>(eff: Effect.Effect<A, E, R | Reservations | Atomic>) => rt.runPromiseExit(eff)
    const svc = <A, E>(f: (r: ReservationsService) => Effect.Effect<A, E>) => run(Effect.flatMap(Reservations, f))
    const svcExit = <A, E>(f: (r: ReservationsService) => Effect.Effect<A, E>) =>
      exit(Effect.flatMap(Reservations, f))
    const used = (key: string) => svc((r) => r.used(key))

    it("reserves several limits all or nothing", async () => {
      const [a, b] = [fresh("a"), fresh("b")]
      await svc((r) => r.reserve({ id: fresh("id"), limits: [lim(b, 5, 4)], onFailure: "consume" }))
      // a fits, b does not: nothing of either is consumed.
      const e = err(await svcExit((r) =>
        r.reserve({ id: fresh("id"), limits: [lim(a, 10, 3), lim(b, 5, 2)], onFailure: "consume" })
      ))
      expect(e).toMatchObject({ _tag: "LimitExhausted", key: b, limit: 5n, used: 4n, amount: 2n })
      expect(await used(a)).toBe(0n)
      expect(await used(b)).toBe(4n)
      // both fit: both are consumed.
      const ok = await svc((r) =>
        r.reserve({ id: fresh("id"), limits: [lim(a, 10, 3), lim(b, 5, 1)], onFailure: "consume" })
      )
      expect(ok).toMatchObject({ state: "held", consumed: [3n, 1n], replayed: false })
      expect(await used(a)).toBe(3n)
      expect(await used(b)).toBe(5n)
    })

    it("reports the first failing limit in request order, not key order", async () => {
      const z = `z-${fresh("k")}`
      const a = `a-${fresh("k")}`
      await svc((r) => r.reserve({ id: fresh("id"), limits: [lim(z, 1, 1), lim(a, 1, 1)], onFailure: "consume" }))
      const e1 = err(await svcExit((r) =>
        r.reserve({ id: fresh("id"), limits: [lim(z, 1, 1), lim(a, 1, 1)], onFailure: "consume" })
      ))
      expect(e1).toMatchObject({ _tag: "LimitExhausted", key: z })
      const e2 = err(await svcExit((r) =>
        r.reserve({ id: fresh("id"), limits: [lim(a, 1, 1), lim(z, 1, 1)], onFailure: "consume" })
      ))
      expect(e2).toMatchObject({ _tag: "LimitExhausted", key: a })
      // A zero amount against a limit already exceeded for this caller is refused too.
      const e3 = err(await svcExit((r) => r.reserve({ id: fresh("id"), limits: [lim(a, 0, 0)], onFailure: "consume" })))
      expect(e3).toMatchObject({ _tag: "LimitExhausted", key: a, limit: 0n, used: 1n, amount: 0n })
    })

    it("is idempotent per id and refuses a conflicting re-use", async () => {
      const [k, id] = [fresh("k"), fresh("id")]
      const req = { id, limits: [lim(k, 10, 4)], onFailure: "consume" as OnFailure }
      const first = await svc((r) => r.reserve(req))
      const again = await svc((r) => r.reserve(req))
      expect(first.replayed).toBe(false)
      expect(again).toMatchObject({ replayed: true, state: "held", consumed: [4n] })
      expect(await used(k)).toBe(4n)
      for (
        const other of [
          { ...req, limits: [lim(k, 10, 5)] },
          { ...req, limits: [lim(k, 11, 4)] },
          { ...req, limits: [lim(k, 10, 4), lim(fresh("k"), 1, 1)] },
          { ...req, onFailure: "release" as OnFailure }
        ]
      ) {
        expect(err(await svcExit((r) => r.reserve(other)))).toMatchObject({ _tag: "ReservationConflict", id })
      }
      expect(await used(k)).toBe(4n)
      // A replay after settlement answers the settled reservation and consumes nothing.
      await svc((r) => r.commit(id, { [k]: 1n }))
      expect(await svc((r) => r.reserve(req))).toMatchObject({ replayed: true, state: "committed", consumed: [1n] })
      expect(await used(k)).toBe(1n)
    })

    it("commit keeps, settles smaller, and refuses bad actual amounts", async () => {
      const [k1, k2, id] = [fresh("k"), fresh("k"), fresh("id")]
      await svc((r) => r.reserve({ id, limits: [lim(k1, 100, 40), lim(k2, 100, 10)], onFailure: "release" }))
      for (
        const [actual, reason, key] of [
          [{ [k1]: 41n }, "exceeds_reserved", k1],
          [{ [k2]: -1n }, "negative_amount", k2],
          [{ nope: 1n }, "unknown_key", "nope"]
        ] as Array<[Actual, string, string]>
      ) {
        expect(err(await svcExit((r) => r.commit(id, actual)))).toMatchObject({ _tag: "SettlementInvalid", reason, key })
      }
      expect(await svc((r) => r.get(id))).toMatchObject({ value: { state: "held" } })
      const c = await svc((r) => r.commit(id, { [k1]: 25n }))
      expect(c).toMatchObject({ state: "committed", consumed: [25n, 10n] })
      expect(await used(k1)).toBe(25n)
      expect(await used(k2)).toBe(10n)
      // Same settlement again: the first one stands; another kind of settlement is refused.
      expect(await svc((r) => r.commit(id, { [k1]: 1n }))).toMatchObject({ consumed: [25n, 10n] })
      expect(err(await svcExit((r) => r.release(id)))).toMatchObject({ _tag: "ReservationSettled", state: "committed" })
      expect(err(await svcExit((r) => r.settleFailure(id)))).toMatchObject({ _tag: "ReservationSettled" })
      expect(await used(k1)).toBe(25n)
    })

    it("release gives everything back", async () => {
      const [k, id] = [fresh("k"), fresh("id")]
      await svc((r) => r.reserve({ id, limits: [lim(k, 5, 5)], onFailure: "consume" }))
      expect(err(await svcExit((r) => r.reserve({ id: fresh("id"), limits: [lim(k, 5, 1)], onFailure: "consume" }))))
        .toMatchObject({ _tag: "LimitExhausted" })
      expect(await svc((r) => r.release(id))).toMatchObject({ state: "released", consumed: [0n] })
      expect(await used(k)).toBe(0n)
      expect(await svc((r) => r.release(id))).toMatchObject({ state: "released" })
      expect(err(await svcExit((r) => r.commit(id)))).toMatchObject({ _tag: "ReservationSettled", state: "released" })
      await svc((r) => r.reserve({ id: fresh("id"), limits: [lim(k, 5, 5)], onFailure: "consume" }))
      expect(await used(k)).toBe(5n)
    })

    it("settleFailure keeps (Writ §7.3) or gives back (YEA §6.3) as the reservation says, or keeps a measured amount", async () => {
      const [k, a, b, c] = [fresh("k"), fresh("id"), fresh("id"), fresh("id")]
      await svc((r) => r.reserve({ id: a, limits: [lim(k, 100, 10)], onFailure: "consume" }))
      await svc((r) => r.reserve({ id: b, limits: [lim(k, 100, 20)], onFailure: "release" }))
      await svc((r) => r.reserve({ id: c, limits: [lim(k, 100, 30)], onFailure: "release" }))
      expect(await used(k)).toBe(60n)
      expect(await svc((r) => r.settleFailure(a))).toMatchObject({ state: "failed", consumed: [10n] })
      expect(await used(k)).toBe(60n)
      expect(await svc((r) => r.settleFailure(b))).toMatchObject({ state: "failed", consumed: [0n] })
      expect(await used(k)).toBe(40n)
      expect(await svc((r) => r.settleFailure(c, { [k]: 7n }))).toMatchObject({ state: "failed", consumed: [7n] })
      expect(await used(k)).toBe(17n)
      expect(err(await svcExit((r) => r.commit(c)))).toMatchObject({ _tag: "ReservationSettled", state: "failed" })
    })

    it("answers unknown ids and malformed requests with typed errors, touching nothing", async () => {
      const k = fresh("k")
      for (const f of [(r: ReservationsService) => r.commit("nope"), (r: ReservationsService) => r.release("nope"), (r: ReservationsService) => r.settleFailure("nope")]) {
        expect(err(await svcExit(f))).toMatchObject({ _tag: "ReservationNotFound", id: "nope" })
      }
      expect(await svc((r) => r.get("nope"))).toEqual(Option.none())
      const bad: Array<[Array<LimitSpec>, string, string]> = [
        [[lim(k, 1, 1), lim(k, 2, 1)], "duplicate_key", fresh("id")],
        [[lim(k, 1, -1)], "negative_amount", fresh("id")],
        [[lim(k, -1, 0)], "negative_limit", fresh("id")],
        [[lim("", 1, 1)], "empty_key", fresh("id")],
        [[lim(k, 1, 1)], "empty_id", ""]
      ]
      for (const [limits, reason, id] of bad) {
        expect(err(await svcExit((r) => r.reserve({ id, limits, onFailure: "consume" }))))
          .toMatchObject({ _tag: "ReservationInvalid", reason })
        if (id !== "") expect(await svc((r) => r.get(id))).toEqual(Option.none())
      }
      expect(await used(k)).toBe(0n)
    })

    it("keeps a verification reserve with per-call limits (ledger budgets)", async () => {
      // Budget 100 tokens, 30 of them only for verification actions.
      const k = fresh("ledger/budget/tokens")
      const gen = (n: number) => svcExit((r) => r.reserve({ id: fresh("gen"), limits: [lim(k, 70, n)], onFailure: "consume" }))
      const ver = (n: number) => svcExit((r) => r.reserve({ id: fresh("ver"), limits: [lim(k, 100, n)], onFailure: "consume" }))
      expect(Exit.isSuccess(await gen(60))).toBe(true)
      expect(err(await gen(11))).toMatchObject({ _tag: "LimitExhausted", used: 60n, limit: 70n })
      expect(Exit.isSuccess(await gen(10))).toBe(true)
      expect(Exit.isSuccess(await ver(25))).toBe(true)
      expect(err(await gen(1))).toMatchObject({ _tag: "LimitExhausted", used: 95n })
      expect(err(await ver(6))).toMatchObject({ _tag: "LimitExhausted", used: 95n, limit: 100n })
      expect(Exit.isSuccess(await ver(5))).toBe(true)
    })

    it("handles amounts beyond 64 bits exactly", async () => {
      const k = fresh("k")
      const big = 10n ** 30n
      await svc((r) => r.reserve({ id: fresh("id"), limits: [lim(k, big, big - 1n)], onFailure: "consume" }))
      expect(err(await svcExit((r) => r.reserve({ id: fresh("id"), limits: [lim(k, big, 2n)], onFailure: "consume" }))))
        .toMatchObject({ _tag: "LimitExhausted", used: big - 1n })
      await svc((r) => r.reserve({ id: fresh("id"), limits: [lim(k, big, 1n)], onFailure: "consume" }))
      expect(await used(k)).toBe(big)
    })

    it("makes the caller's own write and the reserve one atomic step", async () => {
      const [k, id, rec] = [fresh("k"), fresh("id"), fresh("rec")]
      // The caller fails after both writes: neither stays.
      const failed = await exit(Effect.flatMap(Atomic, (a) =>
        a.transaction(Effect.gen(function*() {
          yield* h.callerWrite(rec)
          yield* Effect.flatMap(Reservations, (r) => r.reserve({ id, limits: [lim(k, 1, 1)], onFailure: "consume" }))
          return yield* Effect.fail("handler refused" as const)
        }))
      ))
      expect(err(failed)).toBe("handler refused")
      expect(await run(h.callerHas(rec))).toBe(false)
      expect(await svc((r) => r.get(id))).toEqual(Option.none())
      expect(await used(k)).toBe(0n)
      // The reserve is refused after the caller wrote: the caller's write goes too.
      await svc((r) => r.reserve({ id: fresh("id"), limits: [lim(k, 1, 1)], onFailure: "consume" }))
      const refused = await exit(Effect.flatMap(Atomic, (a) =>
        a.transaction(Effect.gen(function*() {
          yield* h.callerWrite(rec)
          return yield* Effect.flatMap(Reservations, (r) => r.reserve({ id, limits: [lim(k, 1, 1)], onFailure: "consume" }))
        }))
      ))
      expect(err(refused)).toMatchObject({ _tag: "LimitExhausted" })
      expect(await run(h.callerHas(rec))).toBe(false)
      // Success: both are kept.
      const k2 = fresh("k")
      await run(Effect.flatMap(Atomic, (a) =>
        a.transaction(Effect.gen(function*() {
          yield* h.callerWrite(rec)
          return yield* Effect.flatMap(Reservations, (r) => r.reserve({ id, limits: [lim(k2, 1, 1)], onFailure: "consume" }))
        }))
      ))
      expect(await run(h.callerHas(rec))).toBe(true)
      expect(await used(k2)).toBe(1n)
      // A nested step that fails and is caught undoes only its own writes (savepoint).
      const [k3, rec2] = [fresh("k"), fresh("rec")]
      await run(Effect.flatMap(Atomic, (a) =>
        a.transaction(Effect.gen(function*() {
          yield* h.callerWrite(rec2)
          yield* a.transaction(Effect.gen(function*() {
            yield* Effect.flatMap(Reservations, (r) => r.reserve({ id: fresh("id"), limits: [lim(k3, 9, 9)], onFailure: "consume" }))
            return yield* Effect.fail("inner")
          })).pipe(Effect.ignore)
        }))
      ))
      expect(await run(h.callerHas(rec2))).toBe(true)
      expect(await used(k3)).toBe(0n)
    })

    it("undoes an interrupted step", async () => {
      const [k, id, rec] = [fresh("k"), fresh("id"), fresh("rec")]
      await run(Effect.gen(function*() {
        const a = yield* Atomic
        const r = yield* Reservations
        const reserved = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(a.transaction(Effect.gen(function*() {
          yield* h.callerWrite(rec)
          yield* r.reserve({ id, limits: [lim(k, 5, 5)], onFailure: "consume" })
          yield* Deferred.succeed(reserved, undefined)
          return yield* Effect.never
        })))
        yield* Deferred.await(reserved)
        yield* Fiber.interrupt(fiber)
      }))
      expect(await used(k)).toBe(0n)
      expect(await svc((r) => r.get(id))).toEqual(Option.none())
      expect(await run(h.callerHas(rec))).toBe(false)
    })

    it("lets exactly floor(limit/amount) of many racing fibers reserve", async () => {
      const k = fresh("race")
      const results = await run(Effect.flatMap(Reservations, (r) =>
        Effect.forEach(
          Array.from({ length: h.racers }, (_, i) => i),
          (i) => Effect.either(r.reserve({ id: `${k}-${i}`, limits: [lim(k, 10, 3)], onFailure: "consume" })),
          { concurrency: "unbounded" }
        )
      ))
      const ok = results.filter((e) => e._tag === "Right").length
      const exhausted = results.filter((e) => e._tag === "Left" && e.left._tag === "LimitExhausted").length
      expect(ok).toBe(3)
      expect(exhausted).toBe(h.racers - 3)
      expect(await used(k)).toBe(9n)
    })

    it("leaves no half-state when a write fails mid-step (fault injection)", async () => {
      for (const failAt of ["addUsage", "insert", "update"] as const) {
        const [k1, k2, id] = [fresh("k"), fresh("k"), fresh("id")]
        if (failAt === "update") await svc((r) => r.reserve({ id, limits: [lim(k1, 10, 4), lim(k2, 10, 4)], onFailure: "consume" }))
        const faulty = await run(Effect.map(h.backend, (b): ReservationsService => {
          let writes = 0
          const fail = (op: string) => Effect.fail(new StoreError({ operation: `reservations.${op}`, message: "injected" }))
          return makeReservations({
            ...b,
            // The second key's usage write fails after the first key's was made.
            addUsage: (deltas) =>
              failAt === "addUsage"
                ? Effect.flatMap(b.addUsage(deltas.slice(0, 1)), () => fail("addUsage"))
                : b.addUsage(deltas),
            insert: (r) => (failAt === "insert" ? Effect.flatMap(Effect.sync(() => writes++), () => fail("insert")) : b.insert(r)),
            update: (r) => (failAt === "update" ? fail("update") : b.update(r))
          })
        }))
        const e = failAt === "update"
          ? err(await exit(faulty.commit(id, { [k1]: 1n })))
          : err(await exit(faulty.reserve({ id, limits: [lim(k1, 10, 4), lim(k2, 10, 4)], onFailure: "consume" })))
        expect(e).toMatchObject({ _tag: "StoreError", operation: `reservations.${failAt}` })
        const expected = failAt === "update" ? 4n : 0n
        expect(await used(k1)).toBe(expected)
        expect(await used(k2)).toBe(expected)
        expect(await svc((r) => r.get(id))).toMatchObject(
          failAt === "update" ? { value: { state: "held", consumed: [4n, 4n] } } : { _tag: "None" }
        )
      }
    })

    it(`matches a reference model over random operation sequences (${h.propertyRuns} runs)`, async () => {
      const keys = ["k0", "k1", "k2"]
      const amountArb = fc.oneof(fc.bigInt({ min: 0n, max: 8n }), fc.constant(10n ** 20n))
      const limitsArb = fc.uniqueArray(
        fc.record({ key: fc.constantFrom(...keys), limit: fc.oneof(fc.bigInt({ min: 0n, max: 20n }), fc.constant(3n * 10n ** 20n)), amount: amountArb }),
        { selector: (l) => l.key, minLength: 0, maxLength: 3 }
      )
      const actualArb = fc.option(fc.dictionary(fc.constantFrom(...keys, "kx"), fc.bigInt({ min: -1n, max: 9n }), { maxKeys: 2 }), { nil: undefined })
      const opArb = fc.oneof(
        { weight: 3, arbitrary: fc.record({ op: fc.constant("reserve" as const), id: fc.integer({ min: 0, max: 5 }), limits: limitsArb, onFailure: fc.constantFrom<OnFailure>("consume", "release") }) },
        { weight: 1, arbitrary: fc.record({ op: fc.constant("commit" as const), id: fc.integer({ min: 0, max: 5 }), actual: actualArb }) },
        { weight: 1, arbitrary: fc.record({ op: fc.constant("release" as const), id: fc.integer({ min: 0, max: 5 }) }) },
        { weight: 1, arbitrary: fc.record({ op: fc.constant("settleFailure" as const), id: fc.integer({ min: 0, max: 5 }), actual: actualArb }) }
      )
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { maxLength: 12 }), async (ops) => {
          const ns = fresh("p")
          const K = (k: string) => `${ns}/${k}`
          const I = (i: number) => `${ns}#${i}`
          // Reference model: plain maps, written from the spec of the service, not from core.ts.
          const mUsed = new Map<string, bigint>()
          const mRes = new Map<string, Reservation>()
          const u = (k: string) => mUsed.get(k) ?? 0n
          const model = (o: typeof ops[number]): string => {
            if (o.op === "reserve") {
              const limits = o.limits.map((l) => ({ ...l, key: K(l.key) }))
              const ex = mRes.get(I(o.id))
              if (ex) {
                const same = ex.onFailure === o.onFailure && ex.limits.length === limits.length &&
                  ex.limits.every((l, i) => l.key === limits[i].key && l.limit === limits[i].limit && l.amount === limits[i].amount)
                return same ? "ok" : "ReservationConflict"
              }
              for (const l of limits) if (u(l.key) + l.amount > l.limit) return `LimitExhausted:${l.key}`
              for (const l of limits) mUsed.set(l.key, u(l.key) + l.amount)
              mRes.set(I(o.id), { id: I(o.id), limits, onFailure: o.onFailure, state: "held", consumed: limits.map((l) => l.amount) })
              return "ok"
            }
            const r = mRes.get(I(o.id))
            if (!r) return "ReservationNotFound"
            const target = o.op === "commit" ? "committed" : o.op === "release" ? "released" : "failed"
            if (r.state !== "held") return r.state === target ? "ok" : "ReservationSettled"
            const actual = "actual" in o && o.actual !== undefined ? Object.fromEntries(Object.entries(o.actual).map(([k, v]) => [k === "kx" ? "kx" : K(k), v])) : undefined
            if (actual) {
              for (const [k, v] of Object.entries(actual)) {
                const i = r.limits.findIndex((l) => l.key === k)
                if (i < 0) return "SettlementInvalid"
                if (v < 0n || v > r.consumed[i]) return "SettlementInvalid"
              }
            }
            const consumed = r.limits.map((l, i) =>
              actual && l.key in actual ? actual[l.key]
              : o.op === "release" ? 0n
              : o.op === "commit" ? r.consumed[i]
              : r.onFailure === "consume" ? r.consumed[i] : 0n
            )
            r.limits.forEach((l, i) => mUsed.set(l.key, u(l.key) + consumed[i] - r.consumed[i]))
            mRes.set(r.id, { ...r, state: target, consumed })
            return "ok"
          }
          for (const o of ops) {
            const expected = model(o)
            const got = await exit(Effect.flatMap(Reservations, (r): Effect.Effect<unknown, { _tag: string; key?: string }> => {
              if (o.op === "reserve") return r.reserve({ id: I(o.id), limits: o.limits.map((l) => ({ ...l, key: K(l.key) })), onFailure: o.onFailure })
              const actual = o.op !== "release" && o.actual !== undefined
                ? Object.fromEntries(Object.entries(o.actual).map(([k, v]) => [k === "kx" ? "kx" : K(k), v]))
                : undefined
              return o.op === "commit" ? r.commit(I(o.id), actual) : o.op === "release" ? r.release(I(o.id)) : r.settleFailure(I(o.id), actual)
            }))
            const e = err(got)
            const tag = e === undefined ? "ok" : e._tag === "LimitExhausted" ? `LimitExhausted:${e.key}` : e._tag
            expect(tag).toBe(expected)
            for (const k of keys) {
              const actualUsed = await used(K(k))
              expect(actualUsed).toBe(u(K(k)))
            }
            // used <= limit, checked against the store, for every limit a new reservation drew on.
            if (o.op === "reserve" && Exit.isSuccess(got) && !(got.value as { replayed: boolean }).replayed) {
              for (const l of o.limits) expect(await used(K(l.key)) <= l.limit).toBe(true)
            }
          }
          for (const [id, r] of mRes) expect(await svc((s) => s.get(id))).toEqual(Option.some(r))
        }),
        { numRuns: h.propertyRuns, seed: 20261129 }
      )
    })
  })
