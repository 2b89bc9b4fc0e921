// Where a ledger lives, as the `mandate ledger` commands, the tests and the benchmark name it:
//   FILE.db / FILE.sqlite            the embedded SQLite store (several processes may write);
//   postgres://...#SCHEMA            PostgreSQL, for many workers (the schema isolates a deployment);
// and the Layers that open it: Reservations, Atomic, the LedgerStore and, once created, the writer.
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { RandomBytes } from "../kernel/index.js"
import type { LedgerError } from "../ledger/reason.js"
import { type LedgerStore, LedgerWriter, makeWriter } from "../ledger/writer.js"
import * as PgStore from "../store/postgres/client.js"
import * as PgLedger from "../store/postgres/ledger.js"
import * as PgReservations from "../store/postgres/reservations.js"
import * as SqliteStore from "../store/sqlite/client.js"
import * as SqliteLedger from "../store/sqlite/ledger.js"
import * as SqliteReservations from "../store/sqlite/reservations.js"

export type LedgerLocation =
  | { readonly store: "sqlite"; readonly file: string }
  | { readonly store: "postgres"; readonly url: string; readonly schema: string | undefined }

export const parseLocation = (where: string): LedgerLocation => {
  if (where.startsWith("postgres://") || where.startsWith("postgresql://")) {
    const [url, schema] = where.split("#")
    return { store: "postgres", url, schema: schema === "" ? undefined : schema }
  }
  return { store: "sqlite", file: where }
}

export interface OpenOptions {
  /** The ledger's name inside the store (several ledgers may share one store). Default "default". */
  readonly ledger?: string
  /** SQLite `synchronous` (full by default; normal survives a killed process, not a power loss). */
  readonly synchronous?: "full" | "normal"
  readonly maxConnections?: number
}

export type LedgerStores = Reservations | Atomic | LedgerStore | SqlClient.SqlClient

/** Reservations, Atomic, the LedgerStore and the SqlClient of the ledger at `where`. */
export const openStores = (where: LedgerLocation, options: OpenOptions = {}): Layer.Layer<LedgerStores, StoreError> => {
  const ledger = options.ledger ?? "default"
  if (where.store === "sqlite") {
    return Layer.mergeAll(SqliteReservations.layer, SqliteLedger.layer(ledger)).pipe(
      Layer.provideMerge(SqliteStore.layer(where.file, { synchronous: options.synchronous ?? "full" }))
    )
  }
  return Layer.mergeAll(PgReservations.layer, PgLedger.layer(ledger)).pipe(
    Layer.provideMerge(PgStore.layer({ url: where.url, ...(where.schema !== undefined ? { schema: where.schema } : {}), maxConnections: options.maxConnections ?? 4,
      // Waiting for a pooled connection counts against this too: many guarded actions queue for few connections.
      connectTimeoutMs: 120_000 }))
  )
}

/** The stores plus the writer of an existing ledger and live randomness: what a guard needs. */
export const openLedger = (
  where: LedgerLocation,
  options: OpenOptions = {}
): Layer.Layer<LedgerStores | LedgerWriter | RandomBytes, StoreError | LedgerError> =>
  Layer.effect(LedgerWriter, makeWriter).pipe(Layer.provideMerge(Layer.merge(openStores(where, options), RandomBytes.live)))

export const withLedger = <A, E, R>(where: LedgerLocation, options: OpenOptions, eff: Effect.Effect<A, E, R>) =>
  Effect.provide(eff, openLedger(where, options))
