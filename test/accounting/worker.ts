// A separate OS process that uses a Reservations store, for the cross-process tests: "race" makes
// many concurrent reserves on one key and prints its tally as JSON; "hang" reserves inside a
// transaction, says so, and waits to be killed before committing.
// Run: node --import tsx test/accounting/worker.ts '<json args>'
import { Effect, Layer } from "effect"
import { ReservationStore } from "../../src/accounting/backend.js"
import { makeReservations } from "../../src/accounting/core.js"
import { Atomic, Reservations } from "../../src/accounting/reservations.js"
import type { StoreError } from "../../src/accounting/store-error.js"
import * as PgStore from "../../src/store/postgres/client.js"
import * as PgReservations from "../../src/store/postgres/reservations.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as SqliteReservations from "../../src/store/sqlite/reservations.js"

interface Args {
  readonly mode: "race" | "hang"
  readonly store: "sqlite" | "pg"
  /** SQLite file, or PostgreSQL schema. */
  readonly target: string
  readonly key: string
  readonly idPrefix: string
  readonly n: number
  readonly limit: string
  readonly amount: string
  /** Pause inside each reserve's transaction after reading usage, so processes overlap (race mode). */
  readonly slowMs?: number
  /** Wall-clock ms at which to start, so that every process races at once (race mode). */
  readonly startAt?: number
}

const args = JSON.parse(process.argv[2]) as Args

const storeLayer = (store: Args["store"], target: string): Layer.Layer<ReservationStore | Atomic, StoreError> =>
  store === "sqlite"
    ? SqliteReservations.storeLayer.pipe(Layer.provideMerge(SqliteStore.layer(target)))
    // A generous connect timeout: on a loaded machine a new connection can take seconds, and this
    // test is about the race on the row locks, not about how fast a connection opens.
    : PgReservations.storeLayer.pipe(Layer.provideMerge(PgStore.layer({ schema: target, maxConnections: 4, connectTimeoutMs: 60_000 })))

// The real decision over the real store, with an optional pause between reading and writing that
// widens the window in which another process could interleave. PostgreSQL's reserve is one
// statement (ReservationBackend.reserveStep) with no such window on the client: there the pause
// does not apply and the processes race on the server's row lock itself.
const reservations = Layer.effect(
  Reservations,
  Effect.map(ReservationStore, (b) =>
    makeReservations({
      ...b,
      lockUsage: (keys) => Effect.tap(b.lockUsage(keys), () => Effect.sleep(args.slowMs ?? 0))
    }))
)

const race = Effect.gen(function*() {
  const r = yield* Reservations
  yield* Effect.sleep(Math.max(0, (args.startAt ?? 0) - Date.now()))
  const results = yield* Effect.forEach(
    Array.from({ length: args.n }, (_, i) => i),
    (i) =>
      Effect.either(r.reserve({
        id: `${args.idPrefix}-${i}`,
        limits: [{ key: args.key, limit: BigInt(args.limit), amount: BigInt(args.amount) }],
        onFailure: "consume"
      })),
    { concurrency: "unbounded" }
  )
  const tally = { ok: 0, exhausted: 0, other: [] as Array<string> }
  for (const e of results) {
    if (e._tag === "Right") tally.ok++
    else if (e.left._tag === "LimitExhausted") tally.exhausted++
    else tally.other.push(`${e.left._tag}: ${"message" in e.left ? e.left.message : ""}`)
  }
  process.stdout.write(JSON.stringify(tally) + "\n")
})

const hang = Effect.gen(function*() {
  const r = yield* Reservations
  const a = yield* Atomic
  yield* a.transaction(Effect.gen(function*() {
    yield* r.reserve({
      id: args.idPrefix,
      limits: [{ key: args.key, limit: BigInt(args.limit), amount: BigInt(args.amount) }],
      onFailure: "consume"
    })
    process.stdout.write("reserved\n")
    // Killed here, before the transaction commits.
    yield* Effect.never
  }))
})

Effect.runPromise((args.mode === "race" ? race : hang).pipe(Effect.provide(reservations.pipe(Layer.provideMerge(storeLayer(args.store, args.target)))))).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(String(e) + "\n")
    process.exit(1)
  }
)
