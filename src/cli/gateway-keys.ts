// `mandate gateway keys create|list|rotate|revoke`, `mandate gateway users set|list` and
// `mandate gateway teams set|list` (docs/gateway.md, "Keys, users and teams"). A secret is printed
// once, alone on stdout, when it is created or rotated; the store keeps only its SHA-256. A failure
// prints `error: CODE: message` on stderr and exits 1.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { withGatewayKeys } from "../app/gateway.js"
import type { BudgetSpec, Mode, Period } from "../gateway/budget.js"
import type { StoreError } from "../accounting/store-error.js"
import type { LedgerError } from "../ledger/reason.js"
import { createKey, type GatewayKeysError, type KeyRow, listKeys, spentNow, listTeams, listUsers, revokeKey, rotateKey, setTeam, setUser } from "../gateway/keys.js"
import { fromNanos } from "../ledger/usd.js"
import { timeZoneOf, usdMicro } from "./gateway-input.js"
import { exitFailed } from "./io.js"

const store = Options.text("store").pipe(Options.withDescription("The gateway's store: a SQLite file or postgres://...#SCHEMA"))
const budget = Options.text("budget").pipe(Options.optional, Options.withDescription("Budget in USD (e.g. 5 or 0.25)"))
const period = Options.choice("budget-period", ["hour", "day", "week", "month"]).pipe(Options.optional, Options.withDescription("Reset period of the budget (default: never resets)"))
const json = Options.boolean("json").pipe(Options.withDescription("Print JSON instead of a table"))

const failWith = (code: string, message: string) => Effect.zipRight(Console.error(`error: ${code}: ${message}`), exitFailed)

const budgetOf = (limit: bigint | undefined, p: Option.Option<string>): BudgetSpec | undefined =>
  limit === undefined ? undefined : { limit, period: Option.getOrUndefined(p) as Period | undefined }

/** Runs an administration step and reports its failures as `error: CODE: message`. */
const administer = <A>(where: string, eff: Effect.Effect<A, string | GatewayKeysError | StoreError | LedgerError>) =>
  Effect.catchAll(eff, (e) =>
    typeof e === "string"
      ? failWith("mandate/usage", e)
      : e._tag === "GatewayKeysError"
      ? failWith(e.code, e.message)
      // The ledger the calls are recorded in (e.g. a safe_telemetry ledger's key not found): its own reason.
      : e._tag === "LedgerError"
      ? failWith(e.reason, `${where}: ${e.detail}`)
      : failWith("mandate/store_unavailable", `${where}: ${e.message}`))

/** micro-USD as the project's shortest exact decimal (src/ledger/usd.ts), with a dollar sign. */
const usd = (m: bigint | null) => (m === null ? "-" : `$${fromNanos(m * 1000n)}`)

const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

const keyJson = (k: KeyRow, spent: bigint) => ({
  id: k.id, prefix: k.prefix, name: k.name, user: k.user_name, team: k.team_name, mode: k.mode, models: k.models,
  ceiling_usd: k.ceiling_micro === null ? null : usd(k.ceiling_micro).slice(1), budget_usd: k.budget_micro === null ? null : usd(k.budget_micro).slice(1),
  period: k.period, spent_usd: usd(spent).slice(1), created_ms: k.created_ms, revoked_ms: k.revoked_ms
})

const create = Command.make("create", {
  store,
  name: Options.text("name").pipe(Options.optional, Options.withDescription("A label for lists")),
  user: Options.text("user").pipe(Options.optional, Options.withDescription("The user the key belongs to (mandate gateway users set); its budget binds too")),
  team: Options.text("team").pipe(Options.optional, Options.withDescription("The team the key belongs to (default: its user's team); its budget binds too")),
  budget,
  period,
  mode: Options.choice("mode", ["enforce", "shadow", "recommend"]).pipe(Options.withDefault("enforce" as const), Options.withDescription("enforce refuses; shadow and recommend only account")),
  models: Options.text("models").pipe(Options.optional, Options.withDescription("Comma-separated model allow list (default: any model)")),
  maxCall: Options.text("max-call").pipe(Options.optional, Options.withDescription("Per-call ceiling on a call's worst-case cost, USD"))
}, (o) =>
  administer(o.store, Effect.gen(function*() {
    const limit = yield* usdMicro("budget", o.budget)
    const ceiling = yield* usdMicro("max-call", o.maxCall)
    const models = Option.map(o.models, (m) => m.split(",").map((s) => s.trim()).filter((s) => s.length > 0))
    if (Option.isSome(models) && models.value.length === 0) return yield* Effect.fail("--models names no model")
    const issued = yield* withGatewayKeys(o.store, createKey({
      name: Option.getOrUndefined(o.name), user: Option.getOrUndefined(o.user), team: Option.getOrUndefined(o.team),
      mode: o.mode as Mode, models: Option.getOrUndefined(models), ceiling, budget: budgetOf(limit, o.period)
    }))
    yield* Console.log(issued.secret)
    yield* Console.error(`created ${issued.id} (${issued.prefix}...): the secret above is shown only once`)
  }))).pipe(Command.withDescription("Create a gateway key; prints its secret once on stdout (the store keeps only a hash)"))

const timeZone = Options.text("time-zone").pipe(Options.withDefault("UTC"), Options.withDescription("IANA time zone in which the budget periods start (as the gateway's --time-zone)"))

const list = Command.make("list", { store, json, timeZone }, (o) =>
  administer(o.store, Effect.gen(function*() {
    yield* timeZoneOf(o.timeZone)
    const [keys, spent] = yield* withGatewayKeys(o.store, Effect.flatMap(listKeys(), (ks) =>
      Effect.map(Effect.forEach(ks, (k) => spentNow("key", k.id, k.period, o.timeZone)), (sp) => [ks, sp] as const)))
    if (o.json) return yield* Console.log(JSON.stringify(keys.map((k, i) => keyJson(k, spent[i]!))))
    if (keys.length === 0) return yield* Console.log("no keys")
    yield* Console.log(table([
      ["ID", "PREFIX", "NAME", "USER", "TEAM", "MODE", "BUDGET", "PERIOD", "SPENT", "MAX CALL", "MODELS", "STATE"],
      ...keys.map((k, i) => [
        k.id, `${k.prefix}...`, k.name ?? "-", k.user_name ?? "-", k.team_name ?? "-", k.mode, usd(k.budget_micro), k.period ?? "-", usd(spent[i]!),
        usd(k.ceiling_micro), k.models === null ? "any" : k.models.join(","), k.revoked_ms === null ? "active" : "revoked"
      ])
    ]))
  }))).pipe(Command.withDescription("List the gateway keys (never their secrets) with what each has spent in its current period"))

const keyId = Args.text({ name: "KEY_ID" }).pipe(Args.withDescription("The key's id (gk-..., as keys list shows it)"))

const rotate = Command.make("rotate", { store, id: keyId }, (o) =>
  administer(o.store, Effect.gen(function*() {
    const issued = yield* withGatewayKeys(o.store, rotateKey(o.id))
    yield* Console.log(issued.secret)
    yield* Console.error(`rotated ${issued.id} (${issued.prefix}...): the old secret is refused from now on; budgets and spend stay`)
  }))).pipe(Command.withDescription("Give a key a new secret (printed once); the old secret is refused, budgets and spend stay"))

const revoke = Command.make("revoke", { store, id: keyId }, (o) =>
  administer(o.store, Effect.gen(function*() {
    const k = yield* withGatewayKeys(o.store, revokeKey(o.id))
    yield* Console.log(`revoked ${k.id}`)
  }))).pipe(Command.withDescription("Revoke a key for good: its calls are refused 401 gateway/key_revoked"))

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("Create, list, rotate and revoke gateway keys"),
  Command.withSubcommands([create, list, rotate, revoke])
)

const name = Args.text({ name: "NAME" })

const userSet = Command.make("set", {
  store, name, budget, period,
  team: Options.text("team").pipe(Options.optional, Options.withDescription("The team the user belongs to (mandate gateway teams set)"))
}, (o) =>
  administer(o.store, Effect.gen(function*() {
    const limit = yield* usdMicro("budget", o.budget)
    const row = yield* withGatewayKeys(o.store, setUser({
      name: o.name, team_name: Option.getOrNull(o.team), budget_micro: limit ?? null, period: (Option.getOrNull(o.period) as Period | null)
    }))
    yield* Console.log(`user ${row.name}: budget ${usd(row.budget_micro)}${row.period === null ? "" : ` per ${row.period}`}, team ${row.team_name ?? "-"}`)
  }))).pipe(Command.withDescription("Create or replace a user: its budget binds every key of the user"))

const userList = Command.make("list", { store, json }, (o) =>
  administer(o.store, Effect.gen(function*() {
    const users = yield* withGatewayKeys(o.store, listUsers())
    if (o.json) return yield* Console.log(JSON.stringify(users.map((u) => ({ name: u.name, team: u.team_name, budget_usd: u.budget_micro === null ? null : usd(u.budget_micro).slice(1), period: u.period }))))
    if (users.length === 0) return yield* Console.log("no users")
    yield* Console.log(table([["NAME", "TEAM", "BUDGET", "PERIOD"], ...users.map((u) => [u.name, u.team_name ?? "-", usd(u.budget_micro), u.period ?? "-"])]))
  }))).pipe(Command.withDescription("List the gateway's users"))

export const usersCommand = Command.make("users").pipe(
  Command.withDescription("Users: a budget shared by all of a user's keys"),
  Command.withSubcommands([userSet, userList])
)

const teamSet = Command.make("set", { store, name, budget, period }, (o) =>
  administer(o.store, Effect.gen(function*() {
    const limit = yield* usdMicro("budget", o.budget)
    const row = yield* withGatewayKeys(o.store, setTeam({ name: o.name, budget_micro: limit ?? null, period: (Option.getOrNull(o.period) as Period | null) }))
    yield* Console.log(`team ${row.name}: budget ${usd(row.budget_micro)}${row.period === null ? "" : ` per ${row.period}`}`)
  }))).pipe(Command.withDescription("Create or replace a team: its budget binds every key of its users and its own keys"))

const teamList = Command.make("list", { store, json }, (o) =>
  administer(o.store, Effect.gen(function*() {
    const teams = yield* withGatewayKeys(o.store, listTeams())
    if (o.json) return yield* Console.log(JSON.stringify(teams.map((t) => ({ name: t.name, budget_usd: t.budget_micro === null ? null : usd(t.budget_micro).slice(1), period: t.period }))))
    if (teams.length === 0) return yield* Console.log("no teams")
    yield* Console.log(table([["NAME", "BUDGET", "PERIOD"], ...teams.map((t) => [t.name, usd(t.budget_micro), t.period ?? "-"])]))
  }))).pipe(Command.withDescription("List the gateway's teams"))

export const teamsCommand = Command.make("teams").pipe(
  Command.withDescription("Teams: a budget shared by all of a team's users and keys"),
  Command.withSubcommands([teamSet, teamList])
)
