// OwnerLease (src/accounting/owner-lease.ts) on SQL: one row per live or unrecovered owner,
// `lease_until` in the store's clock-free terms (ms since the epoch, from the Clock of each
// process; the lease period is far longer than the clocks' skew on one machine or a NTP-kept
// fleet). SQLite and PostgreSQL share the statements; the claim is one conditional UPDATE, so two
// claimants of one lapsed owner cannot both win it.
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Schedule, Schema, type Scope } from "effect"
import { OwnerLease, type OwnerLeaseService } from "../../accounting/owner-lease.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import { encodeBase64url, RandomBytes } from "../../kernel/index.js"
import type { StoreMigrations } from "./migrations.js"

export const ownerLeaseMigrations: StoreMigrations = {
  table: "mandate_migrations_owners",
  migrations: {
    "1_owner_leases": [
      `CREATE TABLE mandate_owner_leases (scope TEXT NOT NULL, owner TEXT NOT NULL, lease_until BIGINT NOT NULL, PRIMARY KEY (scope, owner))`
    ]
  }
}

const Owners = Schema.Array(Schema.Struct({ owner: Schema.String }))

export interface OwnerLeaseOptions {
  /** Which processes share the lease table's rows (e.g. "gateway"): a scope recovers only its own. */
  readonly scope: string
  /** The lease period (default 15 s); the heartbeat runs every third of it. */
  readonly ttlMs?: number
}

export const DEFAULT_LEASE_MS = 15_000

/** This process's lease, kept by a heartbeat fiber of the scope; on close the lease is let lapse at once. */
export const make = (
  options: OwnerLeaseOptions
): Effect.Effect<OwnerLeaseService, StoreError, SqlClient.SqlClient | RandomBytes | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ttlMs = options.ttlMs ?? DEFAULT_LEASE_MS
    const scope = options.scope
    const owner = `${scope}-${encodeBase64url(yield* (yield* RandomBytes).bytes(12))}`
    const op = (name: string) => storeError(`owners.${name}`)
    // An upsert: a lease another process claimed and dropped while this one was only slow (its
    // heartbeat late by a period) comes back, so what this process holds from then on is its own.
    const beat = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`INSERT INTO mandate_owner_leases (scope, owner, lease_until) VALUES (${scope}, ${owner}, ${now + ttlMs})
        ON CONFLICT (scope, owner) DO UPDATE SET lease_until = excluded.lease_until`).pipe(Effect.mapError(op("heartbeat")))
    const now0 = yield* Clock.currentTimeMillis
    yield* Effect.mapError(sql`INSERT INTO mandate_owner_leases (scope, owner, lease_until) VALUES (${scope}, ${owner}, ${now0 + ttlMs})`, op("insert"))
    // A missed beat (a busy store) is retried by the next one; the lease lapses only after a full period without one.
    yield* Effect.forkScoped(Effect.repeat(Effect.ignoreLogged(beat), Schedule.spaced(Duration.millis(Math.max(1, Math.floor(ttlMs / 3))))))
    // Closed in order: what is still held after the server closed is recovered by the next sweep, at once.
    yield* Effect.addFinalizer(() =>
      Effect.ignore(sql`UPDATE mandate_owner_leases SET lease_until = 0 WHERE scope = ${scope} AND owner = ${owner}`))
    const claimLapsed = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql`UPDATE mandate_owner_leases SET lease_until = ${now + ttlMs}
        WHERE scope = ${scope} AND owner <> ${owner} AND lease_until < ${now} RETURNING owner`
      return (yield* Schema.decodeUnknown(Owners)(rows)).map((r) => r.owner)
    }).pipe(Effect.mapError(op("claim")))
    const forget = (gone: string) =>
      Effect.asVoid(Effect.mapError(sql`DELETE FROM mandate_owner_leases WHERE scope = ${scope} AND owner = ${gone}`, op("forget")))
    return { owner, ttlMs, claimLapsed, forget }
  })

/** OwnerLease on the SQL database in context, after its migrations (`migrate` is the store's own). */
export const layer = <R>(
  migrate: (migrations: StoreMigrations) => Effect.Effect<void, StoreError, R>,
  options: OwnerLeaseOptions
): Layer.Layer<OwnerLease, StoreError, SqlClient.SqlClient | RandomBytes | R> =>
  Layer.scoped(OwnerLease, Effect.zipRight(migrate(ownerLeaseMigrations), make(options)))
