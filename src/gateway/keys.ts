// Gateway keys, users and teams (issue 29): who a bearer key is, and which budgets bind it.
//
// A key's secret is shown once, when it is created or rotated; the store keeps only its SHA-256
// (hex), a short display prefix and a stable key id. The key level's limit is named by that id,
// never by the secret's hash, so a rotated key keeps what it has spent. A key belongs to at most one
// user and one team; a key with a user and no team of its own takes its user's team. Every level
// that applies (key, user, team) must hold: the server reserves on all of them in one step
// (budget.ts reserveCall). Retired secrets (rotated away) and revoked keys answer "revoked", never
// "unknown": an unknown key may get the gateway's default budget, a retired one must not.
import { Context, Effect, Schema } from "effect"
import type { StoreError } from "../accounting/store-error.js"
import { encodeBase64url, RandomBytes } from "../kernel/index.js"
import { Reservations } from "../accounting/reservations.js"
import { LedgerWriter } from "../ledger/writer.js"
import { type BudgetSpec, type Level, type Mode, type Period, UNLIMITED } from "./budget.js"
import { levelKey, NANOS_PER_MICRO } from "./guarded-call.js"
import { sha256Hex } from "./http.js"
import type { KeyInfo, KeyLookup } from "./server.js"

export const PeriodSchema = Schema.Literal("hour", "day", "week", "month")
export const ModeSchema = Schema.Literal("enforce", "shadow", "recommend")

/** micro-USD as the stores keep it: a decimal string in a TEXT column (exact on both stores). */
const Micro = Schema.BigInt
/** Milliseconds since the epoch in a BIGINT column (PostgreSQL's driver reads it as a string). */
const Millis = Schema.Union(Schema.Number, Schema.NumberFromString)

/** A gateway_keys row. `models` is a JSON array of model names (null: any model). */
export const KeyRow = Schema.Struct({
  id: Schema.String,
  hash: Schema.String,
  prefix: Schema.String,
  name: Schema.NullOr(Schema.String),
  user_name: Schema.NullOr(Schema.String),
  team_name: Schema.NullOr(Schema.String),
  mode: ModeSchema,
  models: Schema.NullOr(Schema.parseJson(Schema.Array(Schema.String))),
  ceiling_micro: Schema.NullOr(Micro),
  budget_micro: Schema.NullOr(Micro),
  period: Schema.NullOr(PeriodSchema),
  created_ms: Millis,
  revoked_ms: Schema.NullOr(Millis)
})
export type KeyRow = typeof KeyRow.Type

/** A gateway_users row. */
export const UserRow = Schema.Struct({
  name: Schema.String,
  team_name: Schema.NullOr(Schema.String),
  budget_micro: Schema.NullOr(Micro),
  period: Schema.NullOr(PeriodSchema)
})
export type UserRow = typeof UserRow.Type

/** A gateway_teams row. */
export const TeamRow = Schema.Struct({
  name: Schema.String,
  budget_micro: Schema.NullOr(Micro),
  period: Schema.NullOr(PeriodSchema)
})
export type TeamRow = typeof TeamRow.Type

/** What `lookup` reads for one key: its row with its user's and team's. */
export interface KeyWithOwners {
  readonly key: KeyRow
  readonly user: UserRow | undefined
  readonly team: TeamRow | undefined
}

/** Reason codes of the key administration (`mandate gateway keys|users|teams`). */
export const GatewayKeysCode = Schema.Literal(
  "gateway/key_not_found",
  "gateway/user_not_found",
  "gateway/team_not_found",
  "gateway/team_conflict",
  "gateway/no_budget",
  "gateway/key_revoked"
)
export type GatewayKeysCode = typeof GatewayKeysCode.Type

export class GatewayKeysError extends Schema.TaggedError<GatewayKeysError>()("GatewayKeysError", {
  code: GatewayKeysCode,
  message: Schema.String
}) {}

export interface KeySpec {
  readonly name?: string | undefined
  readonly user?: string | undefined
  readonly team?: string | undefined
  readonly mode?: Mode | undefined
  readonly models?: ReadonlyArray<string> | undefined
  /** micro-USD */
  readonly ceiling?: bigint | undefined
  readonly budget?: BudgetSpec | undefined
}

/** A key as created or rotated: the only time its secret exists outside the client. */
export interface IssuedKey {
  readonly id: string
  readonly secret: string
  readonly prefix: string
}

/** The store's side: rows in, rows out; the rules live in `GatewayKeys` below. */
export interface GatewayKeyStoreShape {
  readonly insertKey: (row: KeyRow) => Effect.Effect<void, StoreError>
  readonly keys: () => Effect.Effect<ReadonlyArray<KeyRow>, StoreError>
  readonly keyById: (id: string) => Effect.Effect<KeyRow | undefined, StoreError>
  /** The key whose current secret hashes to `hash`, with its user and team. */
  readonly byHash: (hash: string) => Effect.Effect<KeyWithOwners | undefined, StoreError>
  /** Whether `hash` is a secret retired by a rotation. */
  readonly retired: (hash: string) => Effect.Effect<boolean, StoreError>
  /** Replaces the key's secret, retiring the old one, in one atomic step. */
  readonly replaceSecret: (id: string, oldHash: string, hash: string, prefix: string, atMs: number) => Effect.Effect<void, StoreError>
  readonly revoke: (id: string, atMs: number) => Effect.Effect<void, StoreError>
  readonly user: (name: string) => Effect.Effect<UserRow | undefined, StoreError>
  readonly team: (name: string) => Effect.Effect<TeamRow | undefined, StoreError>
  readonly putUser: (row: UserRow) => Effect.Effect<void, StoreError>
  readonly putTeam: (row: TeamRow) => Effect.Effect<void, StoreError>
  readonly users: () => Effect.Effect<ReadonlyArray<UserRow>, StoreError>
  readonly teams: () => Effect.Effect<ReadonlyArray<TeamRow>, StoreError>
}

export class GatewayKeyStore extends Context.Tag("mandate/GatewayKeyStore")<GatewayKeyStore, GatewayKeyStoreShape>() {}

const budgetOf = (micro: bigint | null, period: Period | null): BudgetSpec | undefined =>
  micro === null ? undefined : { limit: micro, period: period ?? undefined }

/** The levels that bind a key: its own (accounted even without a budget), its user's, its team's. */
export const keyInfoOf = (found: KeyWithOwners): KeyInfo => {
  const { key, team, user } = found
  const levels: Array<Level> = [{ level: "key", id: key.id, budget: budgetOf(key.budget_micro, key.period) ?? { limit: UNLIMITED } }]
  const userBudget = user === undefined ? undefined : budgetOf(user.budget_micro, user.period)
  if (user !== undefined && userBudget !== undefined) levels.push({ level: "user", id: user.name, budget: userBudget })
  const teamBudget = team === undefined ? undefined : budgetOf(team.budget_micro, team.period)
  if (team !== undefined && teamBudget !== undefined) levels.push({ level: "team", id: team.name, budget: teamBudget })
  return {
    hash: key.hash,
    mode: key.mode,
    levels,
    models: key.models ?? undefined,
    ceiling: key.ceiling_micro ?? undefined,
    user: key.user_name ?? undefined,
    team: team?.name ?? key.team_name ?? undefined
  }
}

/** Secrets: `mk-` and 32 random bytes, base64url; the prefix shown in lists is its first 10 characters. */
const mint = Effect.gen(function*() {
  const bytes = yield* Effect.flatMap(RandomBytes, (r) => r.bytes(32))
  const secret = `mk-${encodeBase64url(bytes)}`
  return { secret, hash: sha256Hex(secret), prefix: secret.slice(0, 10) }
})

const fail = (code: GatewayKeysCode, message: string) => Effect.fail(new GatewayKeysError({ code, message }))

/** The lookup the server asks before each call. */
export const storeLookup = (store: GatewayKeyStoreShape): KeyLookup => (hash) =>
  Effect.flatMap(store.byHash(hash), (found) => {
    if (found !== undefined) return Effect.succeed(found.key.revoked_ms !== null ? "revoked" as const : keyInfoOf(found))
    return Effect.map(store.retired(hash), (r) => (r ? "revoked" as const : undefined))
  })

/** Creates a key. Its team is its own or its user's (both given and different: team_conflict). */
export const createKey = Effect.fn("gateway.keys.create")(function*(spec: KeySpec) {
  const store = yield* GatewayKeyStore
  const user = spec.user === undefined ? undefined : yield* store.user(spec.user)
  if (spec.user !== undefined && user === undefined) return yield* fail("gateway/user_not_found", `no user ${spec.user}: create it with mandate gateway users set`)
  const teamName = spec.team ?? user?.team_name ?? undefined
  if (spec.team !== undefined && user?.team_name != null && user.team_name !== spec.team) {
    return yield* fail("gateway/team_conflict", `user ${spec.user} belongs to team ${user.team_name}, not ${spec.team}`)
  }
  const team = teamName === undefined ? undefined : yield* store.team(teamName)
  if (teamName !== undefined && team === undefined) return yield* fail("gateway/team_not_found", `no team ${teamName}: create it with mandate gateway teams set`)
  if (spec.budget === undefined && user?.budget_micro == null && team?.budget_micro == null) {
    return yield* fail("gateway/no_budget", "a key needs a budget of its own, or a user or team with one")
  }
  const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
  const m = yield* mint
  const id = `gk-${encodeBase64url(yield* Effect.flatMap(RandomBytes, (r) => r.bytes(9)))}`
  yield* store.insertKey({
    id, hash: m.hash, prefix: m.prefix, name: spec.name ?? null, user_name: spec.user ?? null, team_name: spec.team ?? null,
    mode: spec.mode ?? "enforce", models: spec.models === undefined ? null : [...spec.models], ceiling_micro: spec.ceiling ?? null,
    budget_micro: spec.budget?.limit ?? null, period: spec.budget?.period ?? null, created_ms: now, revoked_ms: null
  })
  return { id, secret: m.secret, prefix: m.prefix } satisfies IssuedKey
})

const existing = (store: GatewayKeyStoreShape, id: string) =>
  Effect.flatMap(store.keyById(id), (k) => (k === undefined ? fail("gateway/key_not_found", `no gateway key ${id}`) : Effect.succeed(k)))

/** A new secret for the same key id (budgets and spend kept); the old secret answers key_revoked. */
export const rotateKey = Effect.fn("gateway.keys.rotate")(function*(id: string) {
  const store = yield* GatewayKeyStore
  const key = yield* existing(store, id)
  if (key.revoked_ms !== null) return yield* fail("gateway/key_revoked", `gateway key ${id} is revoked; create a new one`)
  const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
  const m = yield* mint
  yield* store.replaceSecret(id, key.hash, m.hash, m.prefix, now)
  return { id, secret: m.secret, prefix: m.prefix } satisfies IssuedKey
})

/** Revokes a key for good (revoking twice is not an error: the first time stays). */
export const revokeKey = Effect.fn("gateway.keys.revoke")(function*(id: string) {
  const store = yield* GatewayKeyStore
  const key = yield* existing(store, id)
  if (key.revoked_ms !== null) return key
  const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
  yield* store.revoke(id, now)
  return { ...key, revoked_ms: now }
})

export const listKeys = Effect.fn("gateway.keys.list")(function*() {
  return yield* (yield* GatewayKeyStore).keys()
})

/** Creates or replaces a user (its team must exist). */
export const setUser = Effect.fn("gateway.users.set")(function*(row: UserRow) {
  const store = yield* GatewayKeyStore
  if (row.team_name !== null && (yield* store.team(row.team_name)) === undefined) {
    return yield* fail("gateway/team_not_found", `no team ${row.team_name}: create it with mandate gateway teams set`)
  }
  yield* store.putUser(row)
  return row
})

/** Creates or replaces a team. */
export const setTeam = Effect.fn("gateway.teams.set")(function*(row: TeamRow) {
  yield* (yield* GatewayKeyStore).putTeam(row)
  return row
})

export const listUsers = Effect.fn("gateway.users.list")(function*() {
  return yield* (yield* GatewayKeyStore).users()
})

export const listTeams = Effect.fn("gateway.teams.list")(function*() {
  return yield* (yield* GatewayKeyStore).teams()
})

/**
 * What a level has spent in its current window (the window its period holds now, in `timeZone`):
 * committed and failed settlements plus what is held by calls in flight, in micro-USD.
 */
export const spentNow = (level: Level["level"], id: string, period: Period | null, timeZone: string) =>
  Effect.gen(function*() {
    const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
    const reservations = yield* Reservations
    const writer = yield* LedgerWriter
    const key = levelKey({ level, id, budget: { limit: 0n, period: period ?? undefined } }, writer.limitNamespace, timeZone, now)
    // The ledger's draws count nano-USD; a call is priced in whole micro-USD, so this is exact.
    return (yield* reservations.used(key)) / NANOS_PER_MICRO
  })

