// The SQLite ledger store, the embedded default: several processes may append to one file; every
// append is one transaction that holds the file's write lock from its first statement (client.ts),
// so the head read and the lines written cannot interleave with another process's.
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import { Atomic } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import { LedgerStore } from "../../ledger/writer.js"
import { ledgerMigrations, makeSqlLedger, metaFinder } from "../sql/ledger.js"
import { migrate } from "./client.js"

export const migrations = ledgerMigrations

/** The ledger named `ledger` on the SQLite database in context (SqliteStore.layer); applies its migrations. */
export const layer = (ledger: string): Layer.Layer<LedgerStore, StoreError, SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic> =>
  Layer.effect(LedgerStore, Effect.gen(function*() {
    yield* migrate(ledgerMigrations)
    const sql = yield* SqlClient.SqlClient
    // The write lock is already held by the atomic step: nothing more to lock.
    return makeSqlLedger(sql, (yield* Atomic).transaction, ledger, metaFinder(sql, false))
  }))
