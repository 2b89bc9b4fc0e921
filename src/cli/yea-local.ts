// What `mandate yea mcp` and `mandate yea mcp-example` read from this machine beside their options
// (docs/cli.md "Environment"; SPEC-mcp-ts `yea()` options): the local `policy.json` in the YEA
// home, the signed policy `YEA_POLICY` names, and the pinned principal key in the file
// `YEA_PRINCIPAL_PUB` names. Variables are read through Config (the run's environment); the
// process's user is read here, at the composition root, and handed to the pinned-key check.
import { FileSystem } from "@effect/platform"
import { join } from "node:path"
import { Config, Console, Effect, Option } from "effect"
import { readPinnedKey } from "../bind/mcp/pinned-key.js"
import { readPolicyFile } from "../bind/mcp/policy-file.js"
import { isKey } from "../yea/keys.js"
import { cliError } from "./writ-io.js"
import { policyFilePath, principalKeyPath, readPublicKey, yeaHome } from "./yea-home.js"

/** `policy.json` in the YEA home, as an Effect that re-reads it on every call. */
export const localPolicyFile = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const path = policyFilePath(yield* yeaHome)
  return readPolicyFile(path).pipe(Effect.provideService(FileSystem.FileSystem, fs))
})

/** The signed policy's source: the option, else `YEA_POLICY` (a `pg1.` token, or a file holding one). */
export const signedPolicySource = (option: Option.Option<string>) =>
  Option.isSome(option) ? Effect.succeed(option) : Effect.orElseSucceed(Config.option(Config.nonEmptyString("YEA_POLICY")), () => Option.none<string>())

/** The signed policy, re-read on every call: a `pg1.` value is the token, anything else a file. */
export const signedPolicy = (source: Option.Option<string>) =>
  Effect.map(FileSystem.FileSystem, (fs) =>
    Option.match(source, {
      onNone: () => Effect.succeed(null),
      onSome: (p): Effect.Effect<string | null> =>
        p.startsWith("pg1.") ? Effect.succeed(p) : Effect.map(Effect.orElseSucceed(fs.readFileString(p), () => ""), (t) => (t.trim() === "" ? null : t.trim()))
    })
  )

/**
 * The pinned principal: the option as given (the operator's own word), else the key in the file
 * `YEA_PRINCIPAL_PUB` names after its checks (pinned-key.ts). A refused file is said on stderr and
 * gives no key: nothing then runs on its own and no consent is accepted.
 */
export const pinnedPrincipal = (option: Option.Option<string>) =>
  Effect.gen(function* () {
    if (Option.isSome(option)) return option.value as string | undefined
    const path = yield* Effect.orElseSucceed(Config.option(Config.nonEmptyString("YEA_PRINCIPAL_PUB")), () => Option.none<string>())
    if (Option.isNone(path)) return undefined
    const who = { uid: process.geteuid?.() ?? -1, gids: process.getgroups?.() ?? [] }
    return yield* readPinnedKey(path.value, who).pipe(
      Effect.catchTags({
        PinnedKeyRefused: (e) =>
          Effect.as(Console.error(`yea: ${e.reason}: ${e.path}: ${e.message}; nothing runs on its own and no consent is accepted`), undefined)
      })
    )
  })

/**
 * The principals a served service trusts for writes: `--trust` when given, else `YEA_TRUST`
 * (comma-separated keys), else this machine's own principal key when there is one (docs/cli.md
 * "Environment": "default: your own"), else none. A key that is not `ed25519:` is refused here,
 * by name, rather than trusted as text that never matches.
 */
export const trustOf = (flags: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const listed = flags.length > 0 ? flags : Option.getOrElse(yield* Effect.orElseSucceed(Config.option(Config.nonEmptyString("YEA_TRUST")), () => Option.none<string>()), () => "").split(",").map((k) => k.trim()).filter((k) => k !== "")
    if (listed.length > 0) {
      const bad = listed.find((k) => !isKey(k))
      if (bad !== undefined) return yield* Effect.fail(cliError("invalid_params", `not a canonical ed25519: key: ${bad}`, flags.length > 0 ? "--trust" : "YEA_TRUST"))
      return listed
    }
    const own = yield* Effect.option(readPublicKey(principalKeyPath(yield* yeaHome)))
    return Option.match(own, { onNone: () => [] as ReadonlyArray<string>, onSome: (k) => [k] })
  })

/** The approval store folder a local stdio server shares with `yea approve` (SPEC-mcp-ts `store`): `--store`, else `YEA_STORE`, else `store/` in the home. */
export const storeFolder = (option: Option.Option<string>) =>
  Effect.gen(function* () {
    if (Option.isSome(option)) return option.value
    const env = yield* Effect.orElseSucceed(Config.option(Config.nonEmptyString("YEA_STORE")), () => Option.none<string>())
    if (Option.isSome(env)) return env.value
    return join((yield* yeaHome).home, "store")
  })
