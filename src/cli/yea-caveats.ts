// The caveat flags of `mandate yea grant` and `mandate yea delegate` (docs/cli.md "Identity and
// policy"; SPEC §6.3): each flag becomes one caveat, in the order the table lists them.
//
//   --svc ID (repeatable)   {svc: [...]}          --can PATTERN (repeatable)   {can: [...]}
//   --verbs A,B             {verbs: [...]}        --exp 24h (s, m, h, d)       {exp: now + d}
//   --each m=40.00USD       {each: limit}         --total m=20 (repeatable)    {total: limit}
//   --risk low|medium|high  {risk: level}
//
// A measure is `name=amount[unit]`; the amount's decimals become the limit's `scale`
// (40.00USD = {max: 4000, scale: 2, unit: "USD"}, §5.1 quantities). A flag that does not parse
// is `invalid_params` naming the flag, before anything is signed.
import { Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { MAX_AMOUNT, MAX_SCALE } from "../yea/measure.js"
import { type CliError, cliError } from "./writ-io.js"

export const caveatOptions = {
  svc: Options.text("svc").pipe(Options.repeated, Options.withDescription("svc caveat: a service id (repeatable)")),
  verbs: Options.text("verbs").pipe(Options.optional, Options.withDescription("verbs caveat: comma-separated, e.g. ASK,INTENT,COMMIT")),
  can: Options.text("can").pipe(Options.repeated, Options.withDescription("can caveat: a capability pattern such as calendar.* (repeatable)")),
  each: Options.text("each").pipe(Options.repeated, Options.withDescription("each caveat: a per-commit limit, name=max, e.g. spend=40.00USD (repeatable)")),
  total: Options.text("total").pipe(Options.repeated, Options.withDescription("total caveat: a limit over all commits, e.g. emails=20 (repeatable)")),
  risk: Options.choice("risk", ["low", "medium", "high"]).pipe(Options.optional, Options.withDescription("risk caveat: the highest risk allowed")),
  exp: Options.text("exp").pipe(Options.optional, Options.withDescription("exp caveat: valid for this long, e.g. 24h (s, m, h, d)"))
}

export interface CaveatFlags {
  readonly svc: ReadonlyArray<string>
  readonly verbs: Option.Option<string>
  readonly can: ReadonlyArray<string>
  readonly each: ReadonlyArray<string>
  readonly total: ReadonlyArray<string>
  readonly risk: Option.Option<string>
  readonly exp: Option.Option<string>
}

const MEASURE = /^([a-z][a-z0-9_.-]{0,63})=([0-9]+)(?:\.([0-9]+))?([A-Za-z_./%-][A-Za-z0-9_./%-]{0,31})?$/
const DURATION = /^([0-9]{1,9})([smhd])$/
const SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const
const VERBS = new Set(["HELLO", "ASK", "INTENT", "COMMIT", "UNDO", "EXPAND"])

/** `spend=40.00USD` as a §6.3 limit. */
export const parseLimit = (flag: string, text: string): Effect.Effect<Record<string, unknown>, CliError> => {
  const m = MEASURE.exec(text)
  const bad = (why: string) => Effect.fail(cliError("invalid_params", `${why}: ${JSON.stringify(text)}`, `--${flag}`))
  if (m === null) return bad("a limit is name=amount[unit], e.g. spend=40.00USD or emails=20")
  const [, of, whole, frac = "", unit] = m
  if (frac.length > MAX_SCALE) return bad(`at most ${MAX_SCALE} decimals`)
  const max = Number(whole + frac)
  if (!Number.isSafeInteger(max) || max > MAX_AMOUNT) return bad("amount too large")
  return Effect.succeed({ of, max, ...(frac.length > 0 ? { scale: frac.length } : {}), ...(unit !== undefined ? { unit } : {}) })
}

/** `24h` as seconds. */
export const parseDuration = (flag: string, text: string): Effect.Effect<number, CliError> => {
  const m = DURATION.exec(text)
  if (m === null || Number(m[1]) === 0) return Effect.fail(cliError("invalid_params", `a duration is a positive number and s, m, h or d, e.g. 24h: ${JSON.stringify(text)}`, `--${flag}`))
  return Effect.succeed(Number(m[1]) * SECONDS[m[2] as keyof typeof SECONDS])
}

/** The caveats the flags ask for, `exp` counted from `now` (unix seconds), the one time the command
 * reads from the Clock and also signs as the block's `iat`. */
export const caveatsOf = (f: CaveatFlags, now: number): Effect.Effect<ReadonlyArray<unknown>, CliError> =>
  Effect.gen(function* () {
    const out: Array<unknown> = []
    if (f.svc.length > 0) out.push({ svc: [...f.svc] })
    if (Option.isSome(f.verbs)) {
      const verbs = f.verbs.value.split(",").map((v) => v.trim().toUpperCase()).filter((v) => v !== "")
      const unknown = verbs.find((v) => !VERBS.has(v))
      if (verbs.length === 0 || unknown !== undefined) {
        return yield* Effect.fail(cliError("invalid_params", `verbs are ${[...VERBS].join(", ")}${unknown !== undefined ? `, not ${unknown}` : ""}`, "--verbs"))
      }
      out.push({ verbs })
    }
    if (f.can.length > 0) out.push({ can: [...f.can] })
    for (const e of f.each) out.push({ each: yield* parseLimit("each", e) })
    for (const t of f.total) out.push({ total: yield* parseLimit("total", t) })
    if (Option.isSome(f.risk)) out.push({ risk: f.risk.value })
    if (Option.isSome(f.exp)) out.push({ exp: now + (yield* parseDuration("exp", f.exp.value)) })
    return out
  })
