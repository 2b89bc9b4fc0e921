// Owners of pending records on a SQLite file that several `writ serve` processes share (spec
// section 9, recovery after restart, with many processes). Each process holds an OwnerLease
// (src/accounting/owner-lease.ts, kept by src/store/sql/owner-leases.ts: a row per process whose
// `lease_until` a heartbeat moves forward every third of the period) and stamps its id on the
// pending calls and begun reversals it is running. Recovery, at start and on every sweep, takes
// over only records whose owner's lease has lapsed (or that name no owner: written before owners
// were kept), each with one conditional UPDATE: under SQLite's write lock two processes claiming
// at once cannot both take a record, and a record once taken names its new, live owner. A final
// tally is written only by the record's owner, so an owner taken for gone (a lease lapsed while
// it ran) finds its record resolved and answers with that resolution (src/writ/executor/
// ownership.ts), never a second tally.
import type { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import type { OwnerLeaseService } from "../../accounting/owner-lease.js"
import type { LocalProcessesService } from "./local-processes.js"
import type { CallStoreService, ReversalStoreService, WritStoreServices } from "../../writ/executor/stores.js"
import { acceptedFromRow, CallRow, pendingRow } from "../sql/writ-rows.js"
import { json, makeStores, notPendingHere, op, optionalJson, type AuditWrite, type WritDialect } from "../sql/writ-stores.js"

/** The lease scope of Writ executor processes (the gateway's are "gateway"). */
export const LEASE_SCOPE = "writ"

const encodeCall = Schema.encode(CallRow)
const Claimed = Schema.Array(Schema.extend(CallRow, Schema.Struct({ rowid: Schema.Number })))

const Holders = Schema.Array(Schema.Struct({
  owner: Schema.String,
  lease_until: Schema.NullOr(Schema.Number),
  host: Schema.NullOr(Schema.String),
  pid: Schema.NullOr(Schema.Number)
}))

/** What tells this process whether another owner is gone: its lease, and this host's processes. */
export interface Owners {
  readonly lease: OwnerLeaseService
  readonly local: LocalProcessesService
}

/**
 * The owners other than this one holding records of `table` in `state` that are gone: lease
 * lapsed or dropped, or a process of this host that no longer exists (local-processes.ts).
 */
const goneOwners = (sql: SqlClient.SqlClient, o: Owners, table: "writ_calls" | "writ_reversals", state: string) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const rows = yield* Effect.flatMap(
      sql`SELECT DISTINCT r.owner AS owner, l.lease_until AS lease_until, p.host AS host, p.pid AS pid
        FROM ${sql(table)} r
        LEFT JOIN mandate_owner_leases l ON l.scope = ${LEASE_SCOPE} AND l.owner = r.owner
        LEFT JOIN writ_owners p ON p.owner = r.owner
        WHERE r.state = ${state} AND r.owner IS NOT NULL AND r.owner <> ${o.lease.owner}`,
      Schema.decodeUnknown(Holders)
    )
    return rows.filter((r) =>
      r.lease_until === null || r.lease_until < now || (r.host === o.local.host && r.pid !== null && !o.local.alive(r.pid))
    ).map((r) => r.owner)
  })

/** `owner` is NULL (written before owners were kept) or one of `gone`. */
const ownedBy = (sql: SqlClient.SqlClient, gone: ReadonlyArray<string>) =>
  gone.length === 0 ? sql`owner IS NULL` : sql`(owner IS NULL OR owner IN ${sql.in(gone)})`

/** The call store with owners: stamped on insert, checked on finalize, claimed when gone. */
export const makeCallStore = (sql: SqlClient.SqlClient, base: CallStoreService, o: Owners): CallStoreService => ({
  ...base,
  insertPending: (a) =>
    Effect.flatMap(encodeCall(pendingRow(a)), (row) => sql`INSERT INTO writ_calls ${sql.insert({ ...row, owner: o.lease.owner })}`).pipe(
      Effect.asVoid,
      op("writ.callStore.insertPending")
    ),
  finalize: (leaf, id, tally, res) =>
    Effect.gen(function*() {
      const rows = yield* sql`UPDATE writ_calls SET state = 'final', tally = ${yield* json(tally)},
        res = ${yield* optionalJson(res)}
        WHERE leaf = ${leaf} AND id = ${id} AND state = 'pending' AND owner = ${o.lease.owner} RETURNING id`
      return rows.length === 1 || (yield* notPendingHere(sql, leaf, id))
    }).pipe(op("writ.callStore.finalize")),
  // Each record is taken by one conditional UPDATE, under the file's write lock: of two processes
  // claiming at once, the second finds it already named by the first (alive) and leaves it.
  claimOrphans: Effect.gen(function*() {
    const gone = yield* goneOwners(sql, o, "writ_calls", "pending")
    const rows = yield* sql`UPDATE writ_calls SET owner = ${o.lease.owner}
      WHERE state = 'pending' AND ${ownedBy(sql, gone)} RETURNING rowid, *`
    const claimed = yield* Schema.decodeUnknown(Claimed)(rows)
    // What is known of owners that hold nothing any more is dropped (this one's is kept).
    const now = yield* Clock.currentTimeMillis
    const idle = sql`owner <> ${o.lease.owner}
      AND NOT EXISTS (SELECT 1 FROM writ_calls c WHERE c.owner = x.owner AND c.state = 'pending')
      AND NOT EXISTS (SELECT 1 FROM writ_reversals r WHERE r.owner = x.owner AND r.state = 'begun')`
    yield* sql`DELETE FROM mandate_owner_leases AS x WHERE scope = ${LEASE_SCOPE} AND lease_until < ${now} AND ${idle}`
    yield* sql`DELETE FROM writ_owners AS x WHERE NOT EXISTS (SELECT 1 FROM mandate_owner_leases l
      WHERE l.scope = ${LEASE_SCOPE} AND l.owner = x.owner) AND ${idle}`
    // In acceptance order (rowid), as `pending`.
    return [...claimed].sort((x, y) => x.rowid - y.rowid).map(acceptedFromRow)
  }).pipe(op("writ.callStore.claimOrphans"))
})

/** The reversal store with owners: a begun reversal is unknown only once its owner is gone (8.1). */
export const makeReversalStore = (sql: SqlClient.SqlClient, base: ReversalStoreService, o: Owners): ReversalStoreService => ({
  ...base,
  begin: (target, call) =>
    sql`INSERT INTO writ_reversals (target, state, call, res, owner) VALUES (${target}, 'begun', ${call}, NULL, ${o.lease.owner})
      ON CONFLICT (target) DO UPDATE SET state = 'begun', call = excluded.call, res = NULL, owner = excluded.owner`.pipe(
      Effect.asVoid,
      op("writ.reversalStore.begin")
    ),
  markBegunUnknown: Effect.gen(function*() {
    const gone = yield* goneOwners(sql, o, "writ_reversals", "begun")
    const rows = yield* sql`UPDATE writ_reversals SET state = 'unknown'
      WHERE state = 'begun' AND ${ownedBy(sql, gone)} RETURNING target`
    return rows.length
  }).pipe(op("writ.reversalStore.markBegunUnknown"))
})

/** Every Writ store on `sql`, the call and reversal stores kept by this process's `lease`. */
export const makeOwnedStores = (sql: SqlClient.SqlClient, d: WritDialect, o: Owners, audit?: AuditWrite): WritStoreServices => {
  const stores = makeStores(sql, d, audit)
  return {
    ...stores,
    calls: makeCallStore(sql, stores.calls, o),
    reversals: makeReversalStore(sql, stores.reversals, o)
  }
}

/** Records where this process runs, beside its lease, for the others' liveness check. */
export const registerOwner = (sql: SqlClient.SqlClient, o: Owners) =>
  sql`INSERT OR REPLACE INTO writ_owners (owner, host, pid) VALUES (${o.lease.owner}, ${o.local.host}, ${o.local.pid})`.pipe(
    Effect.asVoid,
    op("writ.owners.register")
  )
