// Where a ledger lives, as the `mandate ledger` commands, the tests and the benchmark name it:
//   FILE.db / FILE.sqlite            the embedded SQLite store (several processes may write);
//   postgres://...#SCHEMA            PostgreSQL, for many workers (the schema isolates a deployment);
// and the Layers that open it: Reservations, Atomic, the LedgerStore and, once created, the writer;
// and `recordDecisions`, the DecisionEvents Layer a composition root (writ serve, the demos) gives a
// protocol so that its decisions land in the ledger (issue 9 item 9).
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { DecisionEvents } from "../accounting/decision-events.js"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { RandomBytes } from "../kernel/index.js"
import { ledgerSubscriber } from "../ledger/subscriber.js"
import type { LedgerError } from "../ledger/reason.js"
import { createLedger, LedgerStore, LedgerWriter, makeWriter } from "../ledger/writer.js"
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

/**
 * The DecisionEvents Layer that writes every published decision into the ledger at `where`,
 * creating it (`local_full`) when the store holds none yet. Several processes may do this at once
 * on one store: the one that loses the creation race opens what the other created. Only
 * DecisionEvents leaves this Layer, so the ledger's Reservations never replace a protocol's own.
 */
export const recordDecisions = (where: LedgerLocation, options: OpenOptions = {}): Layer.Layer<DecisionEvents, StoreError | LedgerError> => {
  const ledger = options.ledger ?? "default"
  const created = Effect.gen(function*() {
    const store = yield* LedgerStore
    const info = yield* store.info
    if (info._tag === "None") {
      yield* createLedger({ ledger, mode: "local_full", key: undefined }).pipe(
        Effect.catchIf((e) => e._tag === "LedgerError" && e.reason === "ledger_exists", () => Effect.void)
      )
    }
    return yield* makeWriter
  })
  return ledgerSubscriber.pipe(Layer.provide(Layer.effect(LedgerWriter, created)), Layer.provide(openStores(where, options)))
}
