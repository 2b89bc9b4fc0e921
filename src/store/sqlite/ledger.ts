// The SQLite ledger store, the embedded default: several processes may append to one file; every
// append is one transaction that holds the file's write lock from its first statement (client.ts),
// so the head read and the lines written cannot interleave with another process's.
//
// An append here is three statements (statements.ts, sent to the step's connection): the head
// row moved from the head this store last wrote to the new one, the lines, the held index. The
// head row is only read when that move finds another head (another process appended, or a step
// that wrote the remembered head was rolled back): the UPDATE's WHERE is the check, inside the
// step that holds the write lock, so the chain is built on the head that is really stored. The
// append joins the caller's atomic step without a savepoint of its own (transaction.ts `makeJoin`).
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Schema } from "effect"
import { Atomic } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import { ledgerError, type LedgerError } from "../../ledger/reason.js"
import { type Head, LedgerStore, type StoredLine } from "../../ledger/writer.js"
import { ledgerMigrations, makeSqlLedger, metaFinder } from "../sql/ledger.js"
import { makeJoin } from "../sql/transaction.js"
import { migrate } from "./client.js"
import { inList, onConnection, placeholders } from "./statements.js"

export const migrations = ledgerMigrations

const HeadRow = Schema.Struct({ head_seq: Schema.Number, head_hash: Schema.NullOr(Schema.String) })
const decodeHead = Schema.decodeUnknownEither(HeadRow)

/** Rows per INSERT (4 parameters each), well under SQLite's limit on parameters. */
const CHUNK = 200

const op = <A, E>(eff: Effect.Effect<A, E>): Effect.Effect<A, StoreError | Extract<E, LedgerError>> =>
  Effect.mapError(eff, (e) => (typeof e === "object" && e !== null && "_tag" in e && (e._tag === "LedgerError" || e._tag === "StoreError") ? e : storeError("ledger.append")(e))) as never

/** The ledger named `ledger` on the SQLite database in context (SqliteStore.layer); applies its migrations. */
export const layer = (ledger: string): Layer.Layer<LedgerStore, StoreError, SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic> =>
  Layer.effect(LedgerStore, Effect.gen(function*() {
    yield* migrate(ledgerMigrations)
    const sql = yield* SqlClient.SqlClient
    const atomic = (yield* Atomic).transaction
    const join = makeJoin(atomic)
    // The write lock is already held by the atomic step: nothing more to lock.
    const base = makeSqlLedger(sql, atomic, ledger, metaFinder(sql, false))
    /** The head this store last wrote: a guess, checked by the UPDATE that moves it. */
    let written: Head | undefined
    const append = (build: (head: Head) => ReadonlyArray<StoredLine>) =>
      op(join(onConnection(sql, (conn) =>
        Effect.gen(function*() {
          const write = (from: Head | undefined, lines: ReadonlyArray<StoredLine>) =>
            Effect.gen(function*() {
              const last = lines[lines.length - 1]
              const moved = (yield* conn.executeRaw(
                from === undefined
                  ? "UPDATE ledger_meta SET head_seq = ?, head_hash = ? WHERE ledger = ?"
                  : "UPDATE ledger_meta SET head_seq = ?, head_hash = ? WHERE ledger = ? AND head_seq = ? AND head_hash IS ?",
                from === undefined ? [last.seq, last.hash, ledger] : [last.seq, last.hash, ledger, from.seq, from.hash]
              )) as { readonly changes?: number }
              if (moved.changes !== 1) return false
              for (let i = 0; i < lines.length; i += CHUNK) {
                const ls = lines.slice(i, i + CHUNK)
                yield* conn.execute(`INSERT INTO ledger_lines (ledger, seq, hash, line) VALUES ${placeholders(ls.length, 4)}`, ls.flatMap((l) => [ledger, l.seq, l.hash, l.line]), undefined)
              }
              const holds = lines.flatMap((l) => (l.hold !== undefined ? [ledger, l.hold.id, l.hold.owner, l.hold.action_id, l.hold.run_id] : []))
              if (holds.length > 0) yield* conn.execute(`INSERT INTO ledger_held (ledger, id, owner, action_id, run_id) VALUES ${placeholders(holds.length / 5, 5)}`, holds, undefined)
              const settles = lines.flatMap((l) => (l.settle !== undefined ? [l.settle] : []))
              if (settles.length > 0) yield* conn.execute(`DELETE FROM ledger_held WHERE ledger = ? AND id IN (${inList(settles.length)})`, [ledger, ...settles], undefined)
              written = { seq: last.seq, hash: last.hash }
              return true
            })
          if (written !== undefined) {
            const lines = build(written)
            if (lines.length === 0) return
            if (yield* write(written, lines)) return
          }
          // Not the head this store wrote last: read it (nothing was written above).
          const rows = yield* conn.execute("SELECT head_seq, head_hash FROM ledger_meta WHERE ledger = ?", [ledger], undefined)
          if (rows.length === 0) return yield* ledgerError("ledger_missing", `no ledger ${ledger} in this store`)
          const row = yield* decodeHead(rows[0])
          const head: Head = { seq: row.head_seq, hash: row.head_hash }
          const lines = build(head)
          if (lines.length === 0) return
          if (!(yield* write(undefined, lines))) return yield* ledgerError("ledger_missing", `no ledger ${ledger} in this store`)
        }))))
    return { ...base, append }
  }))
