// The admission gate (src/writ/executor/admission-gate.ts) in PostgreSQL, for several worker
// processes serving one executor key. Section 7: "steps 7 to 10 MUST be atomic with respect to
// other calls and to recording a revoke". Each gated step is one transaction (`Atomic.transaction`;
// the step's own transactions nest as savepoints) that first takes transaction-scoped advisory locks:
//   - an admission: shared on every writ of the chain and on every issuer, exclusive on the leaf
//     (one admission at a time per leaf: the replay check of step 9 and the pending entry it
//     guards; count and total consumption are made exact by the Reservations row locks);
//   - a revoke of a writ: exclusive on that writ; a key-wide revoke (`*`): exclusive on the issuer.
// So a revoke waits for every admission under it that is in flight and every later admission sees
// it (step 7), on whichever worker. Locks are taken in one statement in ascending 64-bit hash
// order, the same in every transaction, so two steps cannot deadlock each other; keys whose hashes
// collide share one lock in the stronger mode (only less concurrency, never less isolation).
// Advisory locks rather than SERIALIZABLE: a waiter proceeds on the committed state, where a
// serialization failure would make us retry the step (and its reservation) under load.
//
// A step succeeds only after COMMIT returned: PostgreSQL's default synchronous_commit = on has
// flushed the WAL, so the writes are durable when the call is answered.
//
// Revokes reach the running operations of every worker (section 9.1) by NOTIFY on a channel of the
// schema, sent inside the revoke's transaction: PostgreSQL delivers it at commit, only if the
// revoke was recorded. Every worker LISTENs and stops its operations under the revoked writ.
// A notice can arrive after the ack has reached the client, so replays do not wait for it: each
// reads the schema's revocation sequence number (`revocationSeq`, revocation-seq.ts), one cheap
// read shared by the replays waiting at once.
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Schedule, Schema, Stream } from "effect"
import { Atomic } from "../../accounting/reservations.js"
import { storeError } from "../../accounting/store-error.js"
import { AdmissionGate, type AdmissionGateService, type GateKeys } from "../../writ/executor/admission-gate.js"
import { PgLocation } from "./client.js"
import { freshRead } from "./revocation-seq.js"
import { admissionLocks, type LockKeys, makeAdmitInOne, revokeLocks } from "./writ-admit.js"
import { WritWorker } from "./writ-worker.js"

const Keys = Schema.parseJson(Schema.Struct({ writs: Schema.Array(Schema.String), issuers: Schema.Array(Schema.String) }))
const decodeKeys = Schema.decodeUnknown(Keys)
const encodeKeys = Schema.encode(Keys)

export { admissionLocks, type LockKeys, revokeLocks } from "./writ-admit.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = yield* PgClient.PgClient
  const atomic = yield* Atomic
  const location = yield* PgLocation
  const worker = yield* WritWorker
  const failed = storeError("writ.gate", location)
  const schema = yield* Effect.mapError(
    Effect.flatMap(sql`SELECT current_schema() AS s`, Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ s: Schema.String })))),
    failed
  )
  // The schema names the deployment: its locks and its channel are its own.
  const space = `mandate/writ/${schema[0].s}/`
  const channel = `mandate_writ_revoke_${schema[0].s}`.slice(0, 63)
  const lock = (keys: LockKeys) =>
    keys.length === 0 ? Effect.void : sql`
      SELECT CASE WHEN l.x THEN pg_advisory_xact_lock(l.h) ELSE pg_advisory_xact_lock_shared(l.h) END
      FROM (SELECT h, bool_or(x) AS x
            FROM unnest(${keys.map(([k]) => space + k)}::text[], ${keys.map(([, x]) => x)}::boolean[]) AS t(k, x),
                 LATERAL hashtextextended(t.k, 0) AS h
            GROUP BY h ORDER BY h OFFSET 0) l`.pipe(Effect.asVoid, Effect.mapError(failed))
  const notify = (keys: GateKeys) =>
    Effect.flatMap(encodeKeys(keys), (payload) => sql`SELECT pg_notify(${channel}, ${payload})`).pipe(
      Effect.asVoid,
      Effect.mapError(failed)
    )
  const Seq = Schema.Tuple(Schema.Struct({ n: Schema.Number }))
  // The number moved by every revoke recorded on the schema (writ-migrations.ts), or undefined
  // when unreadable now (the replay then asks the revoke store, which answers or fails).
  const revocationSeq = freshRead(
    Effect.flatMap(sql`SELECT n::float8 AS n FROM writ_revocation_seq`, Schema.decodeUnknown(Seq)).pipe(
      Effect.map((rows): number | undefined => rows[0].n),
      Effect.orElseSucceed(() => undefined)
    )
  )
  const gate: AdmissionGateService = {
    admit: (keys, step) => atomic.transaction(Effect.zipRight(lock(admissionLocks(keys)), step)),
    // The same locks and steps 7 to 10 as one statement (writ-admit.ts).
    admitInOne: makeAdmitInOne(sql, { space, worker: worker.id }),
    revocationSeq,
    revoke: (keys, step) => atomic.transaction(Effect.zipRight(lock(revokeLocks(keys)), Effect.tap(step, () => notify(keys)))),
    revokedElsewhere: (onRevoke) =>
      pg.listen(channel).pipe(
        Stream.runForEach((payload) =>
          decodeKeys(payload).pipe(
            Effect.flatMap(onRevoke),
            Effect.catchAll((e) => Effect.logWarning(`unreadable revoke notice on ${channel}: ${e.message}`))
          )
        ),
        // A lost connection: listen again (revokes recorded meanwhile still refuse admissions).
        Effect.tapError((e) => Effect.logWarning(`revoke notices lost (${e.message}); listening again`)),
        Effect.retry(Schedule.spaced("1 second")),
        Effect.ignore,
        Effect.forkScoped,
        Effect.asVoid
      )
  }
  return gate
})

/** The PostgreSQL admission gate on the database in context (PgStore.layer), for this worker. */
export const layer = Layer.effect(AdmissionGate, make)
