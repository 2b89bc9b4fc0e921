// The PostgreSQL ledger store, for many workers appending to one ledger: every append locks the
// ledger's head row (FOR UPDATE) inside its transaction, so appends from all workers form one chain;
// a reserve and its lines commit together when the guard appends inside Atomic.transaction.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { Atomic } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import { LedgerStore } from "../../ledger/writer.js"
import { ledgerMigrations, makeSqlLedger, metaFinder } from "../sql/ledger.js"
import { migrate, type PgLocation } from "./client.js"

export const migrations = ledgerMigrations

/** The ledger named `ledger` on the PostgreSQL database in context (PgStore.layer); applies its migrations. */
export const layer = (ledger: string): Layer.Layer<LedgerStore, StoreError, SqlClient.SqlClient | PgLocation | Atomic> =>
  Layer.effect(LedgerStore, Effect.gen(function*() {
    yield* migrate(ledgerMigrations)
    const sql = yield* SqlClient.SqlClient
    return makeSqlLedger(sql, (yield* Atomic).transaction, ledger, metaFinder(sql, true))
  }))
