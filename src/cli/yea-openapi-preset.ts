// `mandate yea openapi --preset NAME` (src/yea/openapi/preset.ts): the preset by name, refused with
// `mandate/unknown_preset` and the list of those there are; and its credentials, read from the
// run's environment through Config (the CLI is the composition root), so a test's in-process run
// sees its own variables and never the machine's.
import { Config, Effect, Option } from "effect"
import { credentialHeaders, type Preset } from "../yea/openapi/preset.js"
import { presetNamed, presetNames } from "../yea/openapi/presets/index.js"
import { type CliError, cliError } from "./writ-io.js"

export const resolvePreset = (name: string): Effect.Effect<Preset, CliError> => {
  const preset = presetNamed(name)
  return preset === undefined
    ? Effect.fail(cliError("mandate/unknown_preset", `no preset named ${JSON.stringify(name)}; the presets are: ${presetNames.join(", ")}`, "--preset"))
    : Effect.succeed(preset)
}

/** The headers of the preset's credentials whose variables are set, and those variables' names. */
export const presetCredentials = (preset: Preset) =>
  Effect.gen(function* () {
    const values = new Map<string, string>()
    for (const c of preset.credentials) {
      const v = yield* Effect.orElseSucceed(Config.option(Config.nonEmptyString(c.env)), () => Option.none<string>())
      if (Option.isSome(v)) values.set(c.env, v.value)
    }
    return credentialHeaders(preset, (name) => values.get(name))
  })

/** The line the command prints about credentials: which variables it sends, or that none is set. */
export const credentialsLine = (preset: Preset, used: ReadonlyArray<string>): string => {
  if (preset.credentials.length === 0) return `preset ${preset.name}: no credentials`
  const sent = preset.credentials.filter((c) => used.includes(c.env)).map((c) => `${c.env} (as the ${c.header} header)`)
  const unset = preset.credentials.filter((c) => !used.includes(c.env)).map((c) => c.env)
  return `preset ${preset.name}: ${[...(sent.length > 0 ? [`sending ${sent.join(", ")}`] : []), ...(unset.length > 0 ? [`${unset.join(", ")} not set, so calls go without it`] : [])].join("; ")}`
}
