// The gateway's keys, users and teams on SQL (SQLite and PostgreSQL share these statements). Rows
// are decoded and encoded by the Schemas of src/gateway/keys.ts; the secret itself is never here,
// only its SHA-256 (gateway_keys.hash, and gateway_key_retired for secrets a rotation replaced).
// Amounts are TEXT (exact micro-USD on both stores), times BIGINT milliseconds.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { Atomic } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import { GatewayKeyStore, type GatewayKeyStoreShape, KeyRow, TeamRow, UserRow } from "../../gateway/keys.js"
import { GatewayRevokes, type GatewayRevokesShape, RevokeRow } from "../../gateway/writ-revocations.js"
import type { StoreMigrations } from "./migrations.js"

export const gatewayKeyMigrations: StoreMigrations = {
  table: "mandate_migrations_gateway",
  migrations: {
    "1_gateway_keys": [
      `CREATE TABLE gateway_teams (name TEXT PRIMARY KEY, budget_micro TEXT, period TEXT)`,
      `CREATE TABLE gateway_users (name TEXT PRIMARY KEY, team_name TEXT, budget_micro TEXT, period TEXT)`,
      `CREATE TABLE gateway_keys (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, name TEXT,
        user_name TEXT, team_name TEXT, mode TEXT NOT NULL, models TEXT, ceiling_micro TEXT, budget_micro TEXT,
        period TEXT, created_ms BIGINT NOT NULL, revoked_ms BIGINT)`,
      `CREATE TABLE gateway_key_retired (hash TEXT PRIMARY KEY, key_id TEXT NOT NULL, retired_ms BIGINT NOT NULL)`
    ],
    // Writ revocations (src/gateway/writ-revocations.ts): appended, never rewritten (section 12).
    "2_writ_revokes": [
      `CREATE TABLE gateway_writ_revokes (revoke TEXT NOT NULL, writ TEXT NOT NULL, iss TEXT NOT NULL, exp BIGINT, rcv BIGINT NOT NULL)`,
      `CREATE INDEX gateway_writ_revokes_writ ON gateway_writ_revokes (writ, iss)`
    ]
  }
}

const KEY_COLUMNS = "id, hash, prefix, name, user_name, team_name, mode, models, ceiling_micro, budget_micro, period, created_ms, revoked_ms"
const decodeKey = Schema.decodeUnknown(KeyRow)
const encodeKey = Schema.encode(KeyRow)
const decodeUser = Schema.decodeUnknown(UserRow)
const encodeUser = Schema.encode(UserRow)
const decodeTeam = Schema.decodeUnknown(TeamRow)
const encodeTeam = Schema.encode(TeamRow)

const op = <A, E>(name: string, eff: Effect.Effect<A, E>): Effect.Effect<A, StoreError> =>
  Effect.mapError(eff, storeError(`gateway.keys.${name}`))

/** The store on `sql`; multi-statement writes run in `transaction`. */
export const makeGatewayKeyStore = (
  sql: SqlClient.SqlClient,
  transaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
): GatewayKeyStoreShape => {
  const oneKey = (rows: ReadonlyArray<unknown>) => (rows.length === 0 ? Effect.succeed(undefined) : decodeKey(rows[0]))
  const user = (name: string) =>
    op("user", Effect.flatMap(sql`SELECT name, team_name, budget_micro, period FROM gateway_users WHERE name = ${name}`,
      (rows) => (rows.length === 0 ? Effect.succeed(undefined) : decodeUser(rows[0]))))
  const team = (name: string) =>
    op("team", Effect.flatMap(sql`SELECT name, budget_micro, period FROM gateway_teams WHERE name = ${name}`,
      (rows) => (rows.length === 0 ? Effect.succeed(undefined) : decodeTeam(rows[0]))))
  return {
    insertKey: (row) =>
      op("insert", Effect.flatMap(encodeKey(row), (r) =>
        sql`INSERT INTO gateway_keys ${sql.insert({ ...r })}`)).pipe(Effect.asVoid),
    keys: () =>
      op("list", Effect.flatMap(sql`SELECT ${sql.literal(KEY_COLUMNS)} FROM gateway_keys ORDER BY created_ms, id`, (rows) => Effect.forEach(rows, (r) => decodeKey(r)))),
    keyById: (id) => op("byId", Effect.flatMap(sql`SELECT ${sql.literal(KEY_COLUMNS)} FROM gateway_keys WHERE id = ${id}`, oneKey)),
    // The call path's one read: the key with its user and its team (its own, else its user's).
    byHash: (hash) =>
      op("lookup", Effect.flatMap(
        sql`SELECT ${sql.literal(KEY_COLUMNS.split(", ").map((c) => `k.${c}`).join(", "))},
            u.name AS u_name, u.team_name AS u_team_name, u.budget_micro AS u_budget_micro, u.period AS u_period,
            t.name AS t_name, t.budget_micro AS t_budget_micro, t.period AS t_period
          FROM gateway_keys k
          LEFT JOIN gateway_users u ON u.name = k.user_name
          LEFT JOIN gateway_teams t ON t.name = COALESCE(k.team_name, u.team_name)
          WHERE k.hash = ${hash}`,
        (rows) => {
          if (rows.length === 0) return Effect.succeed(undefined)
          const r = rows[0] as Record<string, unknown>
          return Effect.all({
            key: decodeKey(r),
            user: r.u_name === null ? Effect.succeed(undefined) : decodeUser({ name: r.u_name, team_name: r.u_team_name, budget_micro: r.u_budget_micro, period: r.u_period }),
            team: r.t_name === null ? Effect.succeed(undefined) : decodeTeam({ name: r.t_name, budget_micro: r.t_budget_micro, period: r.t_period })
          })
        }
      )),
    retired: (hash) => op("retired", Effect.map(sql`SELECT 1 AS one FROM gateway_key_retired WHERE hash = ${hash}`, (rows) => rows.length > 0)),
    replaceSecret: (id, oldHash, hash, prefix, atMs) =>
      transaction(op("rotate", Effect.zipRight(
        sql`INSERT INTO gateway_key_retired (hash, key_id, retired_ms) VALUES (${oldHash}, ${id}, ${atMs})`,
        sql`UPDATE gateway_keys SET hash = ${hash}, prefix = ${prefix} WHERE id = ${id}`
      ))).pipe(Effect.asVoid),
    revoke: (id, atMs) => op("revoke", sql`UPDATE gateway_keys SET revoked_ms = ${atMs} WHERE id = ${id} AND revoked_ms IS NULL`).pipe(Effect.asVoid),
    user,
    team,
    putUser: (row) =>
      op("putUser", Effect.flatMap(encodeUser(row), (r) =>
        sql`INSERT INTO gateway_users (name, team_name, budget_micro, period) VALUES (${r.name}, ${r.team_name}, ${r.budget_micro}, ${r.period})
          ON CONFLICT (name) DO UPDATE SET team_name = excluded.team_name, budget_micro = excluded.budget_micro, period = excluded.period`)).pipe(Effect.asVoid),
    putTeam: (row) =>
      op("putTeam", Effect.flatMap(encodeTeam(row), (r) =>
        sql`INSERT INTO gateway_teams (name, budget_micro, period) VALUES (${r.name}, ${r.budget_micro}, ${r.period})
          ON CONFLICT (name) DO UPDATE SET budget_micro = excluded.budget_micro, period = excluded.period`)).pipe(Effect.asVoid),
    users: () => op("users", Effect.flatMap(sql`SELECT name, team_name, budget_micro, period FROM gateway_users ORDER BY name`, (rows) => Effect.forEach(rows, (r) => decodeUser(r)))),
    teams: () => op("teams", Effect.flatMap(sql`SELECT name, budget_micro, period FROM gateway_teams ORDER BY name`, (rows) => Effect.forEach(rows, (r) => decodeTeam(r))))
  }
}

const encodeRevoke = Schema.encode(RevokeRow)

/** The Writ revoke store on `sql`: step 7's one read is an indexed lookup of the chain's writs and issuers. */
export const makeGatewayRevokes = (sql: SqlClient.SqlClient): GatewayRevokesShape => ({
  record: (row) =>
    Effect.mapError(Effect.flatMap(encodeRevoke(row), (r) => sql`INSERT INTO gateway_writ_revokes ${sql.insert({ ...r })}`), storeError("gateway.writRevokes.record")).pipe(Effect.asVoid),
  covers: (writs, issuers) =>
    Effect.mapError(
      Effect.map(
        sql`SELECT 1 AS hit FROM gateway_writ_revokes WHERE (writ <> '*' AND ${sql.in("writ", writs)}) OR (writ = '*' AND ${sql.in("iss", issuers)}) LIMIT 1`,
        (rows) => rows.length > 0
      ),
      storeError("gateway.writRevokes.covers")
    )
})

/** GatewayKeyStore and the Writ revoke store on the SQL database in context, after their migrations (`migrate` is the store's own). */
export const gatewayKeyStoreLayer = <R>(
  migrate: (migrations: StoreMigrations) => Effect.Effect<void, StoreError, R>
): Layer.Layer<GatewayKeyStore | GatewayRevokes, StoreError, SqlClient.SqlClient | Atomic | R> =>
  Layer.effectContext(
    Effect.gen(function*() {
      yield* migrate(gatewayKeyMigrations)
      const sql = yield* SqlClient.SqlClient
      return Context.make(GatewayKeyStore, makeGatewayKeyStore(sql, (yield* Atomic).transaction)).pipe(
        Context.add(GatewayRevokes, makeGatewayRevokes(sql))
      )
    })
  )
