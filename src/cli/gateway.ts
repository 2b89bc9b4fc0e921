// `mandate gateway`: the LLM spend gateway (docs/gateway.md). Prints its URL, `http://HOST:PORT`,
// on one line of stdout once it listens, then serves until killed.
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Config, Console, Effect, Either, Option } from "effect"
import { decodePriceFile, withPriceFile } from "../gateway/prices.js"
import { serveGateway } from "../app/gateway.js"
import type { Period } from "../gateway/budget.js"
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_OUTPUT_TOKENS } from "../gateway/server.js"
import { timeZoneOf, usdMicro } from "./gateway-input.js"
import { keysCommand, teamsCommand, usersCommand } from "./gateway-keys.js"
import { writRevokeCommand } from "./gateway-writ-revoke.js"
import { exitFailed } from "./io.js"
import { readSeedFile } from "../app/inputs.js"
import { checkRoots } from "../app/plain-executor.js"
import { makeWritExecutor, type WritExecutor } from "../gateway/writ-budget.js"

const upstream = Options.text("upstream").pipe(Options.optional, Options.withDescription("Base URL of the upstream for both providers (e.g. a proxy that speaks both); the path /v1/... is appended"))
const openaiUpstream = Options.text("openai-upstream").pipe(Options.optional, Options.withDescription("Base URL of the OpenAI upstream (overrides --upstream for the OpenAI routes)"))
const anthropicUpstream = Options.text("anthropic-upstream").pipe(Options.optional, Options.withDescription("Base URL of the Anthropic upstream (overrides --upstream for /v1/messages)"))
const upstreamKey = Options.text("upstream-key").pipe(Options.optional, Options.withDescription("The key the gateway sends upstream (default: $MANDATE_UPSTREAM_KEY; the client's gateway key is never forwarded)"))
const port = Options.integer("port").pipe(Options.withDefault(8787), Options.withDescription("TCP port (0: any free port)"))
const host = Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("Address to listen on"))
const store = Options.text("store").pipe(Options.optional, Options.withDescription("SQLite file holding the budgets (created if absent), or postgres://...#SCHEMA shared by several gateways"))
const budget = Options.text("budget").pipe(Options.optional, Options.withDescription("USD per key for any key the gateway does not know (without it, unknown keys are refused)"))
const period = Options.choice("budget-period", ["hour", "day", "week", "month"]).pipe(Options.optional, Options.withDescription("Reset period of the default budget (default: never resets)"))
const timeZone = Options.text("time-zone").pipe(Options.withDefault("UTC"), Options.withDescription("IANA time zone in which reset periods start"))
const mode = Options.choice("mode", ["enforce", "shadow", "recommend"]).pipe(Options.withDefault("enforce" as const), Options.withDescription("Mode of the default budget: enforce refuses, shadow and recommend only account"))
const maxBody = Options.integer("max-body-bytes").pipe(Options.withDefault(DEFAULT_MAX_BODY_BYTES), Options.withDescription("Largest request body accepted (larger: 413 gateway/body_too_large)"))
const defaultMax = Options.integer("default-max-tokens").pipe(Options.withDefault(DEFAULT_MAX_OUTPUT_TOKENS), Options.withDescription("Output tokens reserved for a request that states no maximum"))

const prices = Options.file("prices").pipe(Options.optional, Options.withDescription("JSON price file ({models: [{provider, model, input, output, cached_input}]}, USD per million tokens) over @pydantic/genai-prices"))

const ledger = Options.text("ledger").pipe(Options.withDefault("default"), Options.withDescription("The ledger (in the store) every call is recorded in; `mandate ledger ... --ledger NAME` reads it"))
const ledgerMode = Options.choice("ledger-mode", ["local_full", "safe_telemetry"]).pipe(Options.withDefault("local_full" as const), Options.withDescription("The mode of a ledger the gateway creates (an existing ledger keeps its own); safe_telemetry keeps its key in FILE.key beside a SQLite store"))
const lease = Options.integer("lease").pipe(Options.withDefault(15), Options.withDescription("Seconds: this process's owner lease; a killed gateway's in-flight calls are settled by another (or the restarted) gateway once its lease lapses"))

const writKey = Options.file("writ-executor-key").pipe(Options.optional, Options.withDescription("Key file (64 hex digits, mode 0600) of the Writ executor the gateway acts as: a caller may present a Writ call (Writ-Call header) whose usd total caps its spend"))
const writRoot = Options.text("writ-root").pipe(Options.repeated, Options.withDescription("A root did:key whose writs the gateway acts under (Writ section 7.1); repeat for several"))

const fail = (message: string) => Effect.zipRight(Console.error(`error: mandate/usage: ${message}`), exitFailed)

export const gatewayCommand = Command.make(
  "gateway",
  { upstream, openaiUpstream, anthropicUpstream, upstreamKey, port, host, store, budget, period, timeZone, mode, maxBody, defaultMax, prices, ledger, ledgerMode, lease, writKey, writRoot },
  (o) =>
    Effect.gen(function*() {
      const openai = Option.getOrUndefined(Option.orElse(o.openaiUpstream, () => o.upstream))
      const anthropic = Option.getOrUndefined(Option.orElse(o.anthropicUpstream, () => o.upstream))
      if (Option.isNone(o.store)) return yield* fail("give --store FILE (or postgres://...#SCHEMA)")
      if (openai === undefined && anthropic === undefined) return yield* fail("give --upstream, --openai-upstream or --anthropic-upstream")
      for (const u of [openai, anthropic]) {
        if (u !== undefined && !/^https?:\/\/[^/]+/.test(u)) return yield* fail(`not an http(s) URL: ${u}`)
      }
      if (o.maxBody < 1 || o.defaultMax < 1) return yield* fail("--max-body-bytes and --default-max-tokens must be at least 1")
      if (o.lease < 1 || o.lease > 3600) return yield* fail("--lease must be between 1 and 3600 seconds")
      const zone = timeZoneOf(o.timeZone)
      if (Either.isLeft(zone)) return yield* fail(zone.left)
      const budgetMicro = usdMicro("budget", o.budget)
      if (Either.isLeft(budgetMicro)) return yield* fail(budgetMicro.left)
      const limit = budgetMicro.right
      let priceOf: ReturnType<typeof withPriceFile> | undefined
      if (Option.isSome(o.prices)) {
        const fs = yield* FileSystem.FileSystem
        const text = yield* Effect.either(fs.readFileString(o.prices.value))
        const file = Either.isLeft(text) ? Either.left(text.left.message) : decodePriceFile(text.right)
        if (Either.isLeft(file)) return yield* Effect.zipRight(Console.error(`error: gateway/bad_price_file: ${o.prices.value}: ${file.left}`), exitFailed)
        priceOf = withPriceFile(file.right)
      }
      const envKey = yield* Config.option(Config.string("MANDATE_UPSTREAM_KEY")).pipe(Effect.orElseSucceed(() => Option.none<string>()))
      const key = Option.getOrUndefined(Option.orElse(o.upstreamKey, () => envKey))
      if (Option.isNone(o.writKey) && o.writRoot.length > 0) return yield* fail("--writ-root needs --writ-executor-key")
      if (Option.isSome(o.writKey) && o.writRoot.length === 0) return yield* fail("--writ-executor-key needs at least one --writ-root")
      let writ: WritExecutor | undefined
      if (Option.isSome(o.writKey)) {
        const seed = yield* Effect.either(Effect.zipLeft(readSeedFile(o.writKey.value), checkRoots(o.writRoot)))
        if (Either.isLeft(seed)) return yield* Effect.zipRight(Console.error(`error: ${seed.left.code}: ${seed.left.message}`), exitFailed)
        writ = makeWritExecutor({ seed: seed.right, roots: o.writRoot })
      }
      const gw = yield* serveGateway({
        upstreams: { openai, anthropic },
        upstreamKeys: { openai: key, anthropic: key },
        defaultBudget: limit === undefined ? undefined : { limit, period: Option.getOrUndefined(o.period) as Period | undefined },
        defaultMode: o.mode,
        maxBodyBytes: o.maxBody,
        defaultMaxOutputTokens: o.defaultMax,
        timeZone: o.timeZone,
        priceOf,
        writ
      }, { store: o.store.value, port: o.port, host: o.host, ledger: o.ledger, ledgerMode: o.ledgerMode, leaseMs: o.lease * 1000 })
      yield* Console.log(gw.url)
      return yield* Effect.never
    }).pipe(
      Effect.scoped,
      Effect.catchTags({
        StoreError: (e) => Effect.zipRight(Console.error(`error: mandate/store_unavailable: ${e.message}`), exitFailed),
        // The ledger the calls go to cannot be opened (e.g. a safe_telemetry key not found): its reason.
        LedgerError: (e) => Effect.zipRight(Console.error(`error: ${e.reason}: ${e.detail}`), exitFailed)
      })
    )
).pipe(
  Command.withDescription("Run the LLM spend gateway: OpenAI and Anthropic APIs with budgets on the reservation core (docs/gateway.md)"),
  Command.withSubcommands([keysCommand, usersCommand, teamsCommand, writRevokeCommand])
)
