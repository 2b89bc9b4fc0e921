// A store's own reserve step (ReservationBackend.reserveStep, PostgreSQL's one statement) is held
// to core.ts's rule: its verdict is answered as the rule says, and a verdict the rule contradicts
// is a StoreError (a store bug), never a wrong answer. Steps scripted here over the memory backend.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { ReservationStore, type ReserveStep } from "../../src/accounting/backend.js"
import { firstShort, makeReservations } from "../../src/accounting/core.js"
import type { Reservation } from "../../src/accounting/reservations.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"

const limits = [{ key: "a", limit: 10n, amount: 4n }, { key: "b", limit: 5n, amount: 5n }]

/** Reservations whose reserve step answers `answer` for whatever it is asked. */
const scripted = (answer: (r: Reservation) => ReserveStep) =>
  Effect.map(ReservationStore, (b) => makeReservations({ ...b, reserveStep: (r) => Effect.succeed(answer(r)) }))

const failure = <A, E>(exit: Exit.Exit<A, E>) => Option.getOrUndefined(Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none())

describe("a store's own reserve step", () => {
  it("the rule: the first limit in request order that does not fit, or -1", () => {
    expect(firstShort(limits, [6n, 0n])).toBe(-1)
    expect(firstShort(limits, [7n, 1n])).toBe(0)
    expect(firstShort(limits, [0n, 1n])).toBe(1)
    expect(firstShort([], [])).toBe(-1)
  })

  it.effect("is answered as the rule says: drawn, short (the first failing limit), existing", () =>
    Effect.gen(function*() {
      const drawn = yield* scripted(() => ({ _tag: "Drawn", used: [6n, 0n] }))
      expect(yield* drawn.reserve({ id: "x", limits, onFailure: "consume" })).toMatchObject({ replayed: false, state: "held", consumed: [4n, 5n] })
      const short = yield* scripted(() => ({ _tag: "Short", used: [7n, 1n] }))
      expect(failure(yield* Effect.exit(short.reserve({ id: "x", limits, onFailure: "consume" }))))
        .toMatchObject({ _tag: "LimitExhausted", key: "a", used: 7n, amount: 4n, limit: 10n })
      const held: Reservation = { id: "x", limits, onFailure: "consume", state: "committed", consumed: [4n, 5n] }
      const existing = yield* scripted(() => ({ _tag: "Existing", reservation: held }))
      expect(yield* existing.reserve({ id: "x", limits, onFailure: "consume" })).toMatchObject({ replayed: true, state: "committed" })
      expect(failure(yield* Effect.exit(existing.reserve({ id: "x", limits, onFailure: "release" }))))
        .toMatchObject({ _tag: "ReservationConflict", id: "x" })
    }).pipe(Effect.provide(MemoryReservations.layer)))

  it.effect("a verdict the rule contradicts is a StoreError", () =>
    Effect.gen(function*() {
      const cases: Array<[ReserveStep, string]> = [
        [{ _tag: "Drawn", used: [7n, 0n] }, "drew over the limit of a"],
        [{ _tag: "Short", used: [6n, 0n] }, "refused a reserve that fits every limit"],
        [{ _tag: "Drawn", used: [0n] }, "1 consumptions read for 2 limits"]
      ]
      for (const [answer, message] of cases) {
        const r = yield* scripted(() => answer)
        expect(failure(yield* Effect.exit(r.reserve({ id: "x", limits, onFailure: "consume" }))))
          .toMatchObject({ _tag: "StoreError", operation: "reservations.reserve", message: expect.stringContaining(message) })
      }
    }).pipe(Effect.provide(MemoryReservations.layer)))
})
