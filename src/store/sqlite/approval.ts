// The approval store (SPEC-approval §8) on SQLite: one file a local stdio server shares with
// `mandate yea approve` (the CLI writes consents, the server consumes them). Tables come from the
// @effect/sql Migrator; each method is one statement, or one IMMEDIATE transaction where it reads
// then writes (reserve), so concurrent processes on the file can't both pass a total. Rows keep a
// receipt as its Schema's JSON. Any SQL failure is `ApprovalStoreError`: callers fail closed.
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Option, Schema } from "effect"
import { Atomic } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import { ApprovalStore, JobReceipt, storeUnavailable, type ApprovalStoreShape } from "../../yea/approval/index.js"
import type { StoreMigrations } from "../sql/migrations.js"
import { migrate } from "./client.js"

export const approvalMigrations: StoreMigrations = {
  table: "mandate_migrations_approval",
  migrations: {
    "1_approval": [
      `CREATE TABLE IF NOT EXISTS approval_consumed (nonce TEXT PRIMARY KEY, expires BIGINT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS approval_receipts (id TEXT PRIMARY KEY, record TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS approval_undo (id TEXT PRIMARY KEY, done INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS approval_consents (plan_hash TEXT PRIMARY KEY, grant_token TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS approval_settled (block TEXT NOT NULL, measure TEXT NOT NULL, amount TEXT NOT NULL, PRIMARY KEY (block, measure))`,
      `CREATE TABLE IF NOT EXISTS approval_reservation_ids (id INTEGER PRIMARY KEY AUTOINCREMENT)`,
      `CREATE TABLE IF NOT EXISTS approval_reserved (id TEXT NOT NULL, block TEXT NOT NULL, measure TEXT NOT NULL, amount TEXT NOT NULL, PRIMARY KEY (id, block, measure))`
    ]
  }
}

const ReceiptJson = Schema.parseJson(JobReceipt)

const fail = (op: string) => (e: unknown) => storeUnavailable(`sqlite approval store: ${op}: ${e instanceof Error ? e.message : String(e)}`)

export const makeSqliteApprovalStore = (sql: SqlClient.SqlClient, transaction: <A, E, R>(eff: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>): ApprovalStoreShape => {
  const used = (block: string, of: string) =>
    Effect.gen(function* () {
      const s = yield* sql<{ amount: string }>`SELECT amount FROM approval_settled WHERE block = ${block} AND measure = ${of}`
      const r = yield* sql<{ amount: string }>`SELECT amount FROM approval_reserved WHERE block = ${block} AND measure = ${of}`
      return [...s, ...r].reduce((n, row) => n + BigInt(row.amount), 0n)
    })
  return {
    kind: "sqlite",
    consumeOnce: (nonce, exp) =>
      Effect.map(sql<{ nonce: string }>`INSERT INTO approval_consumed (nonce, expires) VALUES (${nonce}, ${exp}) ON CONFLICT DO NOTHING RETURNING nonce`, (rows) => rows.length === 1).pipe(
        Effect.mapError(fail("consumeOnce"))
      ),
    putReceipt: (r) =>
      Effect.flatMap(Schema.encode(ReceiptJson)(r), (json) => sql`INSERT INTO approval_receipts (id, record) VALUES (${r.id}, ${json})`).pipe(Effect.asVoid, Effect.mapError(fail("putReceipt"))),
    getReceipt: (id) =>
      Effect.flatMap(sql<{ record: string }>`SELECT record FROM approval_receipts WHERE id = ${id}`, (rows) =>
        rows.length === 0 ? Effect.succeed(Option.none()) : Effect.map(Schema.decode(ReceiptJson)(rows[0].record), Option.some)
      ).pipe(Effect.mapError(fail("getReceipt"))),
    claimUndo: (id) =>
      Effect.map(sql<{ id: string }>`INSERT INTO approval_undo (id, done) VALUES (${id}, 0) ON CONFLICT DO NOTHING RETURNING id`, (rows) => rows.length === 1).pipe(Effect.mapError(fail("claimUndo"))),
    markUndone: (id) => sql`UPDATE approval_undo SET done = 1 WHERE id = ${id}`.pipe(Effect.asVoid, Effect.mapError(fail("markUndone"))),
    isUndone: (id) => Effect.map(sql<{ id: string }>`SELECT id FROM approval_undo WHERE id = ${id}`, (rows) => rows.length > 0).pipe(Effect.mapError(fail("isUndone"))),
    putConsent: (h, g) =>
      sql`INSERT INTO approval_consents (plan_hash, grant_token) VALUES (${h}, ${g}) ON CONFLICT (plan_hash) DO UPDATE SET grant_token = excluded.grant_token`.pipe(
        Effect.asVoid,
        Effect.mapError(fail("putConsent"))
      ),
    getConsent: (h) =>
      Effect.map(sql<{ grant_token: string }>`SELECT grant_token FROM approval_consents WHERE plan_hash = ${h}`, (rows) => Option.fromNullable(rows[0]?.grant_token)).pipe(
        Effect.mapError(fail("getConsent"))
      ),
    used: (block, of) => used(block, of).pipe(Effect.mapError(fail("used"))),
    reserve: (draws) =>
      transaction(
        Effect.gen(function* () {
          for (const d of draws) if ((yield* used(d.key.block, d.key.of)) + d.amount > d.max) return Option.none<string>()
          // Ids come from the file itself, so two processes never pick the same one.
          const [row] = yield* sql<{ id: number }>`INSERT INTO approval_reservation_ids DEFAULT VALUES RETURNING id`
          const id = `s${row.id}`
          for (const d of draws) yield* sql`INSERT INTO approval_reserved (id, block, measure, amount) VALUES (${id}, ${d.key.block}, ${d.key.of}, ${d.amount.toString()})`
          return Option.some(id)
        })
      ).pipe(Effect.mapError(fail("reserve"))),
    settle: (id) =>
      transaction(
        Effect.gen(function* () {
          const rows = yield* sql<{ block: string; measure: string; amount: string }>`SELECT block, measure, amount FROM approval_reserved WHERE id = ${id}`
          for (const r of rows) {
            const prev = yield* sql<{ amount: string }>`SELECT amount FROM approval_settled WHERE block = ${r.block} AND measure = ${r.measure}`
            const total = (prev.length === 0 ? 0n : BigInt(prev[0].amount)) + BigInt(r.amount)
            yield* sql`INSERT INTO approval_settled (block, measure, amount) VALUES (${r.block}, ${r.measure}, ${total.toString()}) ON CONFLICT (block, measure) DO UPDATE SET amount = excluded.amount`
          }
          yield* sql`DELETE FROM approval_reserved WHERE id = ${id}`
        })
      ).pipe(Effect.mapError(fail("settle"))),
    release: (id) => sql`DELETE FROM approval_reserved WHERE id = ${id}`.pipe(Effect.asVoid, Effect.mapError(fail("release")))
  }
}

/** The approval store on the SQLite database in context (SqliteStore.layer); applies its migrations. */
export const approvalLayer: Layer.Layer<ApprovalStore, StoreError, SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic> = Layer.effect(
  ApprovalStore,
  Effect.gen(function* () {
    yield* migrate(approvalMigrations)
    const sql = yield* SqlClient.SqlClient
    const atomic = yield* Atomic
    return makeSqliteApprovalStore(sql, atomic.transaction)
  })
)
