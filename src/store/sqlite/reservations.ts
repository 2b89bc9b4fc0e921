// SQLite Reservations. Isolation: every operation is one SQLite transaction that holds the file's
// write lock from its first statement (client.ts), so the read-check-write of accounting/core.ts runs
// alone against the file, whichever process or connection made it. Amounts are stored as decimal
// text: they are bigints and may exceed SQLite's 64-bit integers (YEA amounts at a common scale).
//
// The hot statements go to the step's connection directly (statements.ts), and the whole reserve is
// one step of this store (`reserveStep`): one read of the reservation id and of every limit's
// consumption, core.ts's rule, then one write of the new consumptions and one of the reservation.
// Settlements and reserves join the caller's atomic step without a savepoint of their own
// (transaction.ts `makeJoin`); each checks everything before its first write.
import type { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, type Layer, Option, Schema } from "effect"
import type { ReservationBackend, ReservationStore, ReserveStep } from "../../accounting/backend.js"
import { firstShort } from "../../accounting/core.js"
import type { Atomic, AtomicService, Reservation, Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import type { StoreMigrations } from "../sql/migrations.js"
import {
  reservationMigrations,
  reservationOp as op,
  reservationsLayer,
  reservationStoreLayer,
  usageReader
} from "../sql/reservations.js"
import { decodeReservationRow, encodeReservationRow } from "../sql/reservation-row-codec.js"
import { reservationFromRow, rowFromReservation, UsageRow } from "../sql/rows.js"
import { makeJoin } from "../sql/transaction.js"
import { migrate } from "./client.js"
import { inList, onConnection, placeholders } from "./statements.js"

export const migrations: StoreMigrations = reservationMigrations("TEXT")

// The Schema codec of ReservationRow, on its direct path for the rows the store writes (issue 30).
const decodeReservation = decodeReservationRow
const encodeReservation = encodeReservationRow
const KeyedUsage = Schema.extend(Schema.Struct({ key: Schema.String }), UsageRow)
const decodeUsage = Schema.decodeUnknownEither(KeyedUsage)

const SELECT_RESERVATION = "SELECT id, on_failure, state, limits, consumed FROM accounting_reservations WHERE id = ?"

/**
 * The reservation `id` and the consumption of `keys` in one read: the reservation's row is tagged
 * `r`, each usage row `u`.
 */
const readReserve = (keys: number) =>
  `SELECT 'r' AS t, id, on_failure, state, limits, consumed, NULL AS key, NULL AS used FROM accounting_reservations WHERE id = ?
   UNION ALL SELECT 'u', NULL, NULL, NULL, NULL, NULL, key, used FROM accounting_usage WHERE key IN (${inList(keys)})`

const upsertUsage = (rows: number) =>
  `INSERT INTO accounting_usage (key, used) VALUES ${placeholders(rows, 2)} ON CONFLICT (key) DO UPDATE SET used = excluded.used`

const sortedDistinct = (keys: Iterable<string>): Array<string> => Array.from(new Set(keys)).sort()

export const makeSqliteBackend = (sql: SqlClient.SqlClient, atomic: AtomicService["transaction"]): ReservationBackend => {
  const join = makeJoin(atomic)
  const findUsed = usageReader((key) => sql`SELECT used FROM accounting_usage WHERE key = ${key}`)
  const readUsed = (key: string) => Effect.map(findUsed(key), Option.match({ onNone: () => 0n, onSome: (r) => r.used }))
  const usageOf = (keys: ReadonlyArray<string>) =>
    keys.length === 0 ? Effect.succeed(new Map<string, bigint>()) : onConnection(sql, (conn) =>
      Effect.flatMap(conn.execute(`SELECT key, used FROM accounting_usage WHERE key IN (${inList(keys.length)})`, keys, undefined), (rows) =>
        Effect.gen(function*() {
          // Unknown keys read as 0 (ReservationBackend.lockUsage).
          const out = new Map<string, bigint>(keys.map((k) => [k, 0n] as const))
          for (const row of rows) {
            const u = yield* decodeUsage(row)
            out.set(u.key, u.used)
          }
          return out
        })))
  /** Writes each key's new consumption (`before` + delta), one statement for all. */
  const writeUsage = (deltas: ReadonlyArray<readonly [string, bigint]>, before: ReadonlyMap<string, bigint>) =>
    deltas.length === 0 ? Effect.void : onConnection(sql, (conn) =>
      conn.execute(upsertUsage(deltas.length), deltas.flatMap(([key, delta]) => [key, ((before.get(key) ?? 0n) + delta).toString()]), undefined))
  const writeReservation = (r: Reservation, verb: "INSERT" | "UPDATE") =>
    Effect.flatMap(encodeReservation(rowFromReservation(r)), (row) =>
      onConnection(sql, (conn) =>
        verb === "INSERT"
          ? conn.execute("INSERT INTO accounting_reservations (id, on_failure, state, limits, consumed) VALUES (?, ?, ?, ?, ?)",
            [row.id, row.on_failure, row.state, row.limits, row.consumed], undefined)
          : conn.execute("UPDATE accounting_reservations SET state = ?, consumed = ? WHERE id = ?", [row.state, row.consumed, row.id], undefined)))
  const reserveStep = (reservation: Reservation): Effect.Effect<ReserveStep, StoreError> =>
    join(op("reserve", onConnection(sql, (conn) =>
      Effect.gen(function*() {
        const keys = sortedDistinct(reservation.limits.map((l) => l.key))
        const rows = yield* op("load", conn.execute(readReserve(keys.length), [reservation.id, ...keys], undefined))
        const usage = new Map<string, bigint>()
        for (const row of rows as ReadonlyArray<{ readonly t: string }>) {
          if (row.t === "r") return { _tag: "Existing", reservation: reservationFromRow(yield* op("load", decodeReservation(row))) } as const
          const u = yield* op("lockUsage", decodeUsage(row))
          usage.set(u.key, u.used)
        }
        const used = reservation.limits.map((l) => usage.get(l.key) ?? 0n)
        // All or nothing (core.ts's rule, whose verdict core.ts checks again): nothing is written when short.
        if (firstShort(reservation.limits, used) >= 0) return { _tag: "Short", used } as const
        yield* op("addUsage", writeUsage(reservation.limits.filter((l) => l.amount !== 0n).map((l) => [l.key, l.amount] as const), usage))
        yield* op("insert", writeReservation(reservation, "INSERT"))
        return { _tag: "Drawn", used } as const
      }))))
  return {
    atomic,
    join,
    // The transaction already holds the file's write lock: nothing more to serialize.
    lockId: () => Effect.void,
    load: (id) =>
      op("load", onConnection(sql, (conn) =>
        Effect.flatMap(conn.execute(SELECT_RESERVATION, [id], undefined), (rows) =>
          rows.length === 0 ? Effect.succeed(Option.none()) : Effect.map(decodeReservation(rows[0]), (r) => Option.some(reservationFromRow(r)))))),
    insert: (r) => op("insert", writeReservation(r, "INSERT")),
    update: (r) => op("update", writeReservation(r, "UPDATE")),
    lockUsage: (keys) => op("lockUsage", usageOf(keys)),
    addUsage: (deltas, locked) =>
      op("addUsage", Effect.flatMap(
        locked !== undefined && deltas.every(([k]) => locked.has(k)) ? Effect.succeed(locked) : usageOf(deltas.map(([k]) => k)),
        (before) => writeUsage(deltas, before)
      )),
    used: (key) => op("used", readUsed(key)),
    reserveStep
  }
}

/** The SQLite ReservationStore on the database in context (SqliteStore.layer); applies its migrations. */
export const storeLayer: Layer.Layer<
  ReservationStore,
  StoreError,
  SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic
> = reservationStoreLayer(
  migrate,
  migrations,
  makeSqliteBackend
)

/** Reservations (and its ReservationStore) on the SQLite database in context. */
export const layer: Layer.Layer<
  Reservations | ReservationStore,
  StoreError,
  SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic
> = reservationsLayer(storeLayer)
