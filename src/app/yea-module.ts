// `mandate yea serve --module FILE`: a service declared in the user's own module (README, "Build a
// service"). The module exports its ServiceSpec as `service` or `default`: the spec itself, an
// Effect of it, or a function of the trusted principal keys returning either. Keys given with
// `--trust` are added to the spec's own `trust`. Loading a module is the composition root's job,
// so it happens here, not in the protocol.
import { Effect, Option } from "effect"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { yeaError, type YeaError } from "../yea/reason.js"
import type { ServiceSpec } from "../yea/service/define.js"
import type { StateContext } from "../yea/service/env.js"
import { makeService, type YeaServiceRuntime } from "../yea/service/runtime.js"

const isSpec = (v: unknown): v is ServiceSpec<never> =>
  typeof v === "object" && v !== null && typeof (v as { id?: unknown }).id === "string" && typeof (v as { capabilities?: unknown }).capabilities === "object"

export const moduleRuntime = (path: string, trust: ReadonlyArray<string>): Effect.Effect<YeaServiceRuntime, YeaError, StateContext> =>
  Effect.gen(function* () {
    const bad = (why: string) => yeaError("invalid_params", `${path}: ${why}`, { path: "--module" })
    const mod = yield* Effect.tryPromise({
      try: () => import(pathToFileURL(resolve(path)).href) as Promise<Record<string, unknown>>,
      catch: (e) => bad(`cannot load: ${e instanceof Error ? e.message : String(e)}`)
    })
    let v: unknown = mod.service ?? mod.default
    if (typeof v === "function") v = (v as (t: ReadonlyArray<string>) => unknown)(trust)
    if (Effect.isEffect(v)) {
      const got = yield* Effect.option(v as Effect.Effect<unknown, unknown, never>)
      if (Option.isNone(got)) return yield* Effect.fail(bad("its service Effect failed"))
      v = got.value
    }
    if (!isSpec(v)) return yield* Effect.fail(bad("exports no service spec (`service` or `default`: an object with id and capabilities)"))
    const spec: ServiceSpec<never> = { ...v, trust: [...new Set([...(v.trust ?? []), ...trust])] }
    if (spec.trust.length === 0) return yield* Effect.fail(bad("the service trusts no principal; pass --trust KEY"))
    return yield* makeService(spec)
  })
