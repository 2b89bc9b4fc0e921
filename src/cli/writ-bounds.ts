// Bound flags shared by `writ issue` and `writ delegate` (spec section 3): one flag per bound type,
// `--max amount=60000`, `--count uses=1`, `--total spend=100000`, `--set currency=USD,EUR`,
// `--window date=20261015,20261019`, `--prefix path=/srv/`, plus `--act`, `--holders` (the
// reserved `hld` set), `--depth`, and `--bound NAME=JSON` for any bound written out in full.
// The flags only build the `bnd` object; the issuing API checks it (section 3) and, for a child,
// that it narrows the parent (section 4) before anything is signed.
import { Options } from "@effect/cli"
import { Effect, Either, Option } from "effect"
import { type Json, parseJson } from "../kernel/json.js"
import type { Bound } from "../writ/bound.js"
import { cliError, type CliError } from "./writ-io.js"
import { unixSeconds } from "../kernel/clock.js"

/** A repeatable bound option; `form` is its value's shape in the help (`NAME=N`). */
const many = (name: string, form: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName(form), Options.repeated, Options.withDescription(description))

export const boundOptions = {
  act: Options.text("act").pipe(Options.withPseudoName("PREFIX"), Options.optional, Options.withDescription("The `act` prefix: operations the holder may perform (section 3.2)")),
  max: many("max", "NAME=N", "A `max` bound, e.g. --max amount=60000 (repeatable)"),
  count: many("count", "NAME=N", "A `count` bound, e.g. --count uses=1 (repeatable)"),
  total: many("total", "NAME=N", "A `total` bound, e.g. --total spend=100000 (repeatable)"),
  set: many("set", "NAME=A,B,...", "A `set` bound; elements that are integers are integers, e.g. --set currency=USD (repeatable)"),
  window: many("window", "NAME=LO,HI", "A `window` bound of integers, e.g. --window date=20261015,20261019 (repeatable)"),
  prefix: many("prefix", "NAME=P", "A `prefix` bound (repeatable)"),
  holders: Options.text("holders").pipe(Options.withPseudoName("DID,DID,..."), Options.optional, Options.withDescription("The reserved `hld` bound, keys that may hold a child; empty string forbids delegation")),
  depth: Options.integer("depth").pipe(Options.optional, Options.withDescription("The reserved `depth` bound: writs allowed below this one")),
  bound: many("bound", "NAME=JSON", "Any bound in full, e.g. --bound 'fare={\"t\":\"set\",\"v\":[\"refundable\"]}' (repeatable)"),
  // Text, read by `seconds` below: @effect/cli's integer options take `1e3`, `0x10` and ` 7`.
  exp: Options.text("exp").pipe(Options.withPseudoName("SECONDS"), Options.optional, Options.withDescription("Expiry, Unix seconds (exclusive, section 2); after now")),
  ttl: Options.text("ttl").pipe(Options.withPseudoName("SECONDS"), Options.optional, Options.withDescription("Expiry as whole seconds from now (at least 1), by this machine's clock"))
}

/** Section 12: "verifiers SHOULD reject a root whose `exp` is more than 24 hours ahead unless
 * configured otherwise". `writ issue` refuses to make one unless `--max-ttl` allows it. */
export const ROOT_MAX_TTL = 86_400

export const maxTtlOption = Options.text("max-ttl").pipe(
  Options.withPseudoName("SECONDS"),
  Options.withDefault(String(ROOT_MAX_TTL)),
  Options.withDescription(`The furthest ahead a root may expire, in seconds (default ${ROOT_MAX_TTL}: section 12's 24 hours)`)
)

/** A whole number of seconds written in decimal, from 1 to `max`; anything else is refused. */
export const seconds = (flag: string, text: string, max = Number.MAX_SAFE_INTEGER): Effect.Effect<number, CliError> =>
  /^[1-9][0-9]{0,15}$/.test(text) && Number(text) <= max
    ? Effect.succeed(Number(text))
    : Effect.fail(cliError("mandate/usage", `${JSON.stringify(text)} is not a whole number of seconds from 1 to ${max}`, `--${flag}`))

export interface BoundFlags {
  readonly act: Option.Option<string>
  readonly max: ReadonlyArray<string>
  readonly count: ReadonlyArray<string>
  readonly total: ReadonlyArray<string>
  readonly set: ReadonlyArray<string>
  readonly window: ReadonlyArray<string>
  readonly prefix: ReadonlyArray<string>
  readonly holders: Option.Option<string>
  readonly depth: Option.Option<number>
  readonly bound: ReadonlyArray<string>
  readonly exp: Option.Option<string>
  readonly ttl: Option.Option<string>
}

const pair = (flag: string, s: string): Effect.Effect<readonly [string, string], CliError> => {
  const i = s.indexOf("=")
  return i <= 0
    ? Effect.fail(cliError("mandate/usage", `--${flag} takes NAME=VALUE, got ${JSON.stringify(s)}`))
    : Effect.succeed([s.slice(0, i), s.slice(i + 1)] as const)
}

const integer = (flag: string, s: string): Effect.Effect<number, CliError> =>
  /^-?\d+$/.test(s.trim()) && Number.isSafeInteger(Number(s))
    ? Effect.succeed(Number(s))
    : Effect.fail(cliError("mandate/usage", `--${flag}: ${JSON.stringify(s)} is not an integer`))

const element = (s: string): string | number => (/^-?\d+$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : s)

/** The bounds the flags name (unchecked: the issuing API applies section 3). */
export const boundsFromFlags = (f: BoundFlags): Effect.Effect<Record<string, Bound>, CliError> =>
  Effect.gen(function*() {
    const bnd: Record<string, unknown> = {}
    if (Option.isSome(f.act)) bnd.act = { t: "prefix", v: f.act.value }
    for (const [flag, t, list] of [["max", "max", f.max], ["count", "count", f.count], ["total", "total", f.total]] as const) {
      for (const s of list) {
        const [n, v] = yield* pair(flag, s)
        bnd[n] = { t, v: yield* integer(flag, v) }
      }
    }
    for (const s of f.set) {
      const [n, v] = yield* pair("set", s)
      bnd[n] = { t: "set", v: v === "" ? [] : v.split(",").map(element) }
    }
    for (const s of f.window) {
      const [n, v] = yield* pair("window", s)
      const parts = v.split(",")
      if (parts.length !== 2) return yield* Effect.fail(cliError("mandate/usage", `--window ${n} takes LO,HI`))
      bnd[n] = { t: "window", v: [yield* integer("window", parts[0]), yield* integer("window", parts[1])] }
    }
    for (const s of f.prefix) {
      const [n, v] = yield* pair("prefix", s)
      bnd[n] = { t: "prefix", v }
    }
    if (Option.isSome(f.holders)) bnd.hld = { t: "set", v: f.holders.value === "" ? [] : f.holders.value.split(",") }
    if (Option.isSome(f.depth)) bnd.depth = { t: "max", v: f.depth.value }
    for (const s of f.bound) {
      const [n, v] = yield* pair("bound", s)
      const parsed = parseJson(v, { maxDepth: 64, integersOnly: true })
      if (Either.isLeft(parsed)) return yield* Effect.fail(cliError(parsed.left.reason, `--bound ${n}: ${parsed.left.message}`))
      bnd[n] = parsed.right as Json
    }
    return bnd as Record<string, Bound>
  })

/** `--exp` or `--ttl` (from Effect's Clock), or undefined when neither is given. The expiry is
 * after now (`exp` is exclusive, section 2: a writ expiring now is born expired) and, for a root
 * (`maxTtl` given), at most `maxTtl` seconds ahead (section 12). */
export const expiryFromFlags = (f: BoundFlags, maxTtl?: number): Effect.Effect<number | undefined, CliError> =>
  Effect.gen(function*() {
    if (Option.isSome(f.exp) && Option.isSome(f.ttl)) return yield* Effect.fail(cliError("mandate/usage", "give --exp or --ttl, not both"))
    const now = yield* unixSeconds
    const flag = Option.isSome(f.exp) ? "--exp" : "--ttl"
    const exp = Option.isSome(f.exp)
      ? yield* seconds("exp", f.exp.value)
      : Option.isSome(f.ttl)
      ? now + (yield* seconds("ttl", f.ttl.value, Number.MAX_SAFE_INTEGER - now))
      : undefined
    if (exp === undefined) return undefined
    if (exp <= now) return yield* Effect.fail(cliError("mandate/usage", `expiry ${exp} is not after now (${now}): the writ would be born expired`, flag))
    if (maxTtl !== undefined && exp - now > maxTtl) {
      return yield* Effect.fail(cliError(
        "mandate/usage",
        `a root expiring ${exp - now} s from now; section 12 keeps roots within ${maxTtl} s (raise --max-ttl to allow it)`,
        flag
      ))
    }
    return exp
  })
