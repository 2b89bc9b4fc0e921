// The reference model of the Reservations suite's property test: plain maps, written from the
// service's specification (src/accounting/reservations.ts), not from core.ts, and the random
// operations it is compared on.
import { type Effect, FastCheck as fc } from "effect"
import type { OnFailure, Reservation, ReservationsService } from "../../src/accounting/reservations.js"

export const modelKeys = ["k0", "k1", "k2"] as const

const amount = fc.oneof(fc.bigInt({ min: 0n, max: 8n }), fc.constant(10n ** 20n))
const limits = fc.uniqueArray(
  fc.record({
    key: fc.constantFrom(...modelKeys),
    limit: fc.oneof(fc.bigInt({ min: 0n, max: 20n }), fc.constant(3n * 10n ** 20n)),
    amount
  }),
  { selector: (l) => l.key, minLength: 0, maxLength: 3 }
)
const actual = fc.option(
  fc.dictionary(fc.constantFrom<string>(...modelKeys, "kx"), fc.bigInt({ min: -1n, max: 9n }), { maxKeys: 2 }),
  { nil: undefined }
)
const id = fc.integer({ min: 0, max: 5 })

export const operation = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("reserve" as const),
      id,
      limits,
      onFailure: fc.constantFrom<OnFailure>("consume", "release")
    })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("commit" as const), id, actual }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("release" as const), id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("settleFailure" as const), id, actual }) }
)
export type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never

/** A model over keys and ids namespaced by `ns`, so runs sharing one store never collide. */
export const referenceModel = (ns: string) => {
  const key = (k: string) => (k === "kx" ? "kx" : `${ns}/${k}`)
  const idOf = (i: number) => `${ns}#${i}`
  const usedBy = new Map<string, bigint>()
  const reservations = new Map<string, Reservation>()
  const used = (k: string) => usedBy.get(k) ?? 0n
  const actualOf = (o: Operation) =>
    o.op !== "reserve" && o.op !== "release" && o.actual !== undefined
      ? Object.fromEntries(Object.entries(o.actual).map(([k, v]) => [key(k), v]))
      : undefined

  /** What the service must answer: "ok", `LimitExhausted:<key>`, or the error's tag. */
  const apply = (o: Operation): string => {
    if (o.op === "reserve") {
      const ls = o.limits.map((l) => ({ ...l, key: key(l.key) }))
      const ex = reservations.get(idOf(o.id))
      if (ex) {
        const same = ex.onFailure === o.onFailure && ex.limits.length === ls.length &&
          ex.limits.every((l, i) => l.key === ls[i].key && l.limit === ls[i].limit && l.amount === ls[i].amount)
        return same ? "ok" : "ReservationConflict"
      }
      for (const l of ls) if (used(l.key) + l.amount > l.limit) return `LimitExhausted:${l.key}`
      for (const l of ls) usedBy.set(l.key, used(l.key) + l.amount)
      reservations.set(idOf(o.id), {
        id: idOf(o.id),
        limits: ls,
        onFailure: o.onFailure,
        state: "held",
        consumed: ls.map((l) => l.amount)
      })
      return "ok"
    }
    const r = reservations.get(idOf(o.id))
    if (!r) return "ReservationNotFound"
    const target = o.op === "commit" ? "committed" : o.op === "release" ? "released" : "failed"
    if (r.state !== "held") return r.state === target ? "ok" : "ReservationSettled"
    const a = actualOf(o)
    if (a) {
      for (const [k, v] of Object.entries(a)) {
        const i = r.limits.findIndex((l) => l.key === k)
        // An actual above the reservation is charged in full (reservations.ts, Settled.overrun).
        if (i < 0 || v < 0n) return "SettlementInvalid"
      }
    }
    const consumed = r.limits.map((l, i) =>
      a && l.key in a
        ? a[l.key]
        : o.op === "release"
        ? 0n
        : o.op === "commit" || r.onFailure === "consume"
        ? r.consumed[i]
        : 0n
    )
    r.limits.forEach((l, i) => usedBy.set(l.key, used(l.key) + consumed[i] - r.consumed[i]))
    reservations.set(r.id, { ...r, state: target, consumed })
    return "ok"
  }

  /** The same operation on the service. */
  const run = (s: ReservationsService, o: Operation): Effect.Effect<unknown, { _tag: string; key?: string }> =>
    o.op === "reserve"
      ? s.reserve({ id: idOf(o.id), limits: o.limits.map((l) => ({ ...l, key: key(l.key) })), onFailure: o.onFailure })
      : o.op === "commit"
      ? s.commit(idOf(o.id), actualOf(o))
      : o.op === "release"
      ? s.release(idOf(o.id))
      : s.settleFailure(idOf(o.id), actualOf(o))

  return { key, used, apply, run, reservations }
}
