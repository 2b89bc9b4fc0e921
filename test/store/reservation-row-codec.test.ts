// The reservation row's direct codec (src/store/sql/reservation-row-codec.ts) against the Schema
// codec it stands in for (ReservationRow, rows.ts), on generated rows: the same encoded text,
// the same decoded row, and a Left wherever the Schema gives one (issue 30: the new path is held
// to the old on generated inputs). The generators mix the store's own form with values the direct
// path must hand to the Schema: negative amounts, mismatched lengths, odd number text, bad JSON.
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { decodeReservationRow, encodeReservationRow } from "../../src/store/sql/reservation-row-codec.js"
import { ReservationRow } from "../../src/store/sql/rows.js"

const schemaEncode = Schema.encodeEither(ReservationRow)
const schemaDecode = Schema.decodeUnknownEither(ReservationRow)

const amount = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 70n }), fc.bigInt({ min: -5n, max: -1n }))
const key = fc.oneof(fc.string(), fc.constantFrom("ledger/ns/usd/2026-12", "k\"\\\u0000\u2028"))
const onFailure = fc.constantFrom("consume", "release", "other")
const state = fc.constantFrom("held", "committed", "released", "failed", "nope")

const typeRow = fc.integer({ min: 0, max: 4 }).chain((n) =>
  fc.record({
    id: fc.oneof(fc.string(), fc.constant(7 as unknown as string)),
    on_failure: onFailure,
    state,
    limits: fc.array(fc.tuple(key, amount, amount), { minLength: n, maxLength: n }),
    consumed: fc.oneof(fc.array(amount, { minLength: n, maxLength: n }), fc.array(amount, { maxLength: 5 }))
  })) as unknown as fc.Arbitrary<typeof ReservationRow.Type>

const numberText = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String), fc.constantFrom("-1", "01", " 3", "0x10", "", "1e3", "x"))
const storedRow = fc.integer({ min: 0, max: 4 }).chain((n) =>
  fc.record({
    id: fc.oneof(fc.string(), fc.constant(null)),
    on_failure: onFailure,
    state,
    limits: fc.oneof(
      fc.array(fc.tuple(key, numberText, numberText), { minLength: n, maxLength: n }).map((a) => JSON.stringify(a)),
      fc.constantFrom("not json", "{}", "[[\"k\",\"1\"]]", "[[\"k\",\"1\",\"2\",\"3\"]]", "[[1,\"1\",\"2\"]]")
    ),
    consumed: fc.oneof(
      fc.array(numberText, { minLength: n, maxLength: n }).map((a) => JSON.stringify(a)),
      fc.array(numberText, { maxLength: 5 }).map((a) => JSON.stringify(a)),
      fc.constantFrom("[1]", "nope", "[]")
    ),
    extra: fc.constant("kept out")
  }))

/** The two answers agree: both Right with equal values, or both Left. */
const same = <A>(a: Either.Either<A, unknown>, b: Either.Either<A, unknown>) => {
  expect(Either.isRight(a)).toBe(Either.isRight(b))
  if (Either.isRight(a) && Either.isRight(b)) expect(a.right).toStrictEqual(b.right)
}

describe("reservation row codec", () => {
  it("encodes every generated row as the Schema does (same text, same refusals)", () => {
    fc.assert(fc.property(typeRow, (row) => same(encodeReservationRow(row), schemaEncode(row))), { numRuns: 2000 })
  })

  it("decodes every generated stored row as the Schema does (same row, same refusals)", () => {
    fc.assert(fc.property(storedRow, (row) => same(decodeReservationRow(row), schemaDecode(row))), { numRuns: 2000 })
  })

  it("round-trips the store's own rows on the direct path", () => {
    const good = fc.integer({ min: 0, max: 4 }).chain((n) =>
      fc.record({
        id: fc.string(), on_failure: fc.constantFrom("consume" as const, "release" as const),
        state: fc.constantFrom("held" as const, "committed" as const, "released" as const, "failed" as const),
        limits: fc.array(fc.tuple(fc.string(), fc.bigInt({ min: 0n, max: 2n ** 64n }), fc.bigInt({ min: 0n, max: 2n ** 64n })), { minLength: n, maxLength: n }),
        consumed: fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n }), { minLength: n, maxLength: n })
      }))
    fc.assert(fc.property(good, (row) => {
      const enc = encodeReservationRow(row)
      expect(Either.isRight(enc)).toBe(true)
      expect(Either.getOrThrow(decodeReservationRow(Either.getOrThrow(enc)))).toEqual(row)
    }), { numRuns: 500 })
  })

  it("refuses a negative amount and a consumed list of the wrong length, as the Schema does", () => {
    const base = { id: "r", on_failure: "consume" as const, state: "held" as const }
    expect(Either.isLeft(encodeReservationRow({ ...base, limits: [["k", -1n, 1n]], consumed: [0n] }))).toBe(true)
    expect(Either.isLeft(encodeReservationRow({ ...base, limits: [["k", 1n, 1n]], consumed: [] }))).toBe(true)
    expect(Either.isLeft(decodeReservationRow({ ...base, limits: "[[\"k\",\"1\",\"1\"]]", consumed: "[\"-1\"]" }))).toBe(true)
    expect(Either.isLeft(decodeReservationRow({ ...base, limits: "[[\"k\",\"1\",\"1\"]]", consumed: "[]" }))).toBe(true)
  })
})
