// Reserve, commit, release and settleFailure are named spans carrying the
// reservation id, so a trace shows where a call's spend is decided and settled.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import { Reservations } from "../../src/accounting/reservations.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"

/** Runs `self` with a tracer that records each span's name and reservation attribute. */
const traced = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const base = yield* Effect.tracer
    const spans: Array<Tracer.Span> = []
    const recording = Tracer.make({
      context: base.context,
      span: (...args) => {
        const span = base.span(...args)
        spans.push(span)
        return span
      }
    })
    yield* Effect.withTracer(self, recording)
    return spans.map((s) => [s.name, s.attributes.get("reservation")])
  })

describe("Reservations spans", () => {
  it.effect("each entry point is a span named after it, with the reservation id", () =>
    Effect.gen(function*() {
      const r = yield* Reservations
      const limits = [{ key: "k", limit: 10n, amount: 1n }]
      const spans = yield* traced(Effect.all([
        r.reserve({ id: "a", limits, onFailure: "consume" }),
        r.commit("a"),
        r.reserve({ id: "b", limits, onFailure: "consume" }),
        r.release("b"),
        r.reserve({ id: "c", limits, onFailure: "release" }),
        r.settleFailure("c")
      ]))
      expect(spans).toEqual([
        ["Reservations.reserve", "a"],
        ["Reservations.commit", "a"],
        ["Reservations.reserve", "b"],
        ["Reservations.release", "b"],
        ["Reservations.reserve", "c"],
        ["Reservations.settleFailure", "c"]
      ])
    }).pipe(Effect.provide(MemoryReservations.layer)))
})
