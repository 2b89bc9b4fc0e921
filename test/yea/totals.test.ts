// `total` limits through the accounting core's Reservations (SPEC §6.3): keyed by block id and
// measure, reserved atomically before execution, released when execution fails, exact across scales.
import { Effect, Either, Fiber } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"
import { authorizeWithReservations, executeWithTotals, reserveTotals, totalKey, TOTAL_SCALE } from "../../src/yea/authorize.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { decodeGrant } from "../../src/yea/grant.js"
import { NOW, agentKey, commit, principalKey, rawRoot } from "./_helpers.js"

const limit = { total: { of: "spend", max: 5000, scale: 2, unit: "USD" } }
const grant = rawRoot([limit])
const id = Either.getOrThrow(decodeGrant(grant)).root.id
const usd = (amount: number, scale: number) => ({ spend: { amount, scale, unit: "USD" } })

const auth = (uses: unknown) =>
  authorizeWithReservations({ grants: [grant], proofKey: agentKey, trusted: [principalKey], request: commit({ uses }) }).pipe(
    Effect.withClock(fixedClock(NOW))
  )

/** Authorize then execute under the reservation; `run` decides whether execution succeeds. */
const commitOnce = (rid: string, uses: unknown, run: Effect.Effect<string, string> = Effect.succeed("done")) =>
  Effect.flatMap(auth(uses), (a) => executeWithTotals(rid, a.draws, run))

const used = Effect.flatMap(Reservations, (r) => r.used(totalKey(id, "spend")))
/** A fresh in-memory Reservations per test, so no test sees another's totals. */
const run = <A, E>(eff: Effect.Effect<A, E, Reservations>) => Effect.provide(eff, MemoryReservations.layer)
const scaled = (units: bigint, scale: number) => units * 10n ** BigInt(TOTAL_SCALE - scale)

describe("total through Reservations", () => {
  it.effect("reserves and commits under yea/total/<block id>/<of>, at scale 18", () =>
    run(
      Effect.gen(function* () {
        expect(yield* commitOnce("c1", usd(2000, 2))).toBe("done")
        expect(yield* used).toBe(scaled(2000n, 2))
        expect(totalKey(id, "spend")).toBe(`yea/total/${id}/spend`)
      })
    ))
  it.effect("adds values of any scale exactly and refuses what would pass the limit (consent_required)", () =>
    run(
      Effect.gen(function* () {
        yield* commitOnce("c1", usd(20, 0)) // 20
        yield* commitOnce("c2", usd(29999, 3)) // 29.999 → 49.999
        const r = yield* Effect.either(commitOnce("c3", usd(2, 3))) // 50.001
        expect(Either.isLeft(r) && (r.left as { reason?: string }).reason).toBe("consent_required")
        yield* commitOnce("c4", usd(1, 3)) // exactly 50
        expect(yield* used).toBe(scaled(50n, 0))
      })
    ))
  it.effect("releases the reservation when execution fails", () =>
    run(
      Effect.gen(function* () {
        const r = yield* Effect.either(commitOnce("c1", usd(4000, 2), Effect.fail("boom")))
        expect(r).toEqual(Either.left("boom"))
        expect(yield* used).toBe(0n)
        yield* commitOnce("c2", usd(5000, 2))
        expect(yield* used).toBe(scaled(5000n, 2))
      })
    ))
  // Live clock: the forked execution must really start before it is interrupted.
  it.live("releases the reservation when execution is interrupted", () =>
    run(
      Effect.gen(function* () {
        const a = yield* auth(usd(4000, 2))
        const fiber = yield* Effect.fork(executeWithTotals("c1", a.draws, Effect.never))
        yield* Effect.yieldNow()
        yield* Effect.sleep(10)
        expect(yield* used).toBe(scaled(4000n, 2))
        yield* Fiber.interrupt(fiber)
        expect(yield* used).toBe(0n)
      })
    ))
  it.effect("two commits checked against the same total cannot both reserve past it", () =>
    run(
      Effect.gen(function* () {
        // Both pass the check (nothing used yet); the atomic reservation lets only one through.
        const a = yield* auth(usd(3000, 2))
        const b = yield* auth(usd(3000, 2))
        yield* reserveTotals("a", a.draws)
        const r = yield* Effect.either(reserveTotals("b", b.draws))
        expect(Either.isLeft(r) && r.left.reason).toBe("consent_required")
        expect(Either.isLeft(r) && r.left.need).toEqual([limit])
        expect(yield* used).toBe(scaled(3000n, 2))
      })
    ))
  it.effect("nothing is reserved when the proposal does not report the measure", () =>
    run(
      Effect.gen(function* () {
        const a = yield* auth({ emails: { amount: 3 } })
        expect(a.draws).toEqual([])
        expect(yield* commitOnce("c1", { emails: { amount: 3 } })).toBe("done")
        expect(yield* used).toBe(0n)
      })
    ))
  it.effect("a delegated block's total is counted under its own block id", () =>
    run(
      Effect.gen(function* () {
        yield* commitOnce("c1", usd(1000, 2))
        const other = rawRoot([{ total: { of: "spend", max: 5000, scale: 2, unit: "USD" } }, { svc: ["shop.example"] }])
        const otherId = Either.getOrThrow(decodeGrant(other)).root.id
        expect(otherId).not.toBe(id)
        const r = yield* Effect.flatMap(Reservations, (res) => res.used(totalKey(otherId, "spend")))
        expect(r).toBe(0n)
      })
    ))
})
