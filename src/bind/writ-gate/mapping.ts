// The mapping file of docs/writ-gate.md: where each route's signed arguments live in the request,
// which bound member `used` reads, and the request that reverses the effect. Refused at start
// (`gate/bad_mapping`) when it is ambiguous in itself, so that every request it accepts has one
// reading: every `{name}` path segment bound; no member or parameter bound twice; no bound member
// inside another; no two bound members of one object whose names fold together; `used` reads only
// a member `bind` signs; every body path is `$.` followed by member names.
import { Effect, Either, Schema } from "effect"
import { parseJson } from "../../kernel/json.js"
import { gateError, type GateError } from "./errors.js"

const MemberPath = Schema.String.pipe(Schema.pattern(/^\$(\.[^.\s{}$]+)+$/))
const ParamRef = Schema.String.pipe(Schema.pattern(/^\{[A-Za-z0-9_]+\}$/))

export const Reverse = Schema.Struct({
  method: Schema.String,
  path: Schema.String,
  /** Where the API's response carries the identifier that `path`'s `{id}` takes. */
  id: MemberPath,
  /** Seconds after acceptance during which `sys/undo` reverses the effect (`rev.until`). */
  ttl: Schema.Int.pipe(Schema.between(1, 366 * 86_400))
})
export type Reverse = typeof Reverse.Type

export const Route = Schema.Struct({
  method: Schema.String,
  path: Schema.String.pipe(Schema.startsWith("/")),
  act: Schema.String,
  bind: Schema.Record({ key: Schema.String, value: Schema.Union(MemberPath, ParamRef) }),
  used: Schema.optional(Schema.Record({ key: Schema.String, value: MemberPath })),
  reverse: Schema.optional(Reverse)
})
export type Route = typeof Route.Type

export const Mapping = Schema.Struct({
  upstream: Schema.String.pipe(Schema.pattern(/^https?:\/\/[^/?#]+$/)),
  routes: Schema.Record({ key: Schema.String, value: Route })
})
export type Mapping = typeof Mapping.Type

/** Unicode simple case folding, as far as it matters here: JavaScript's case mapping, which folds
 * `K` (Kelvin) and `ſ` (long s) onto ASCII as a case-insensitive decoder does. It also folds a few
 * names simple folding keeps apart (such as `ß` and `ss`), which only refuses more. */
export const fold = (s: string): string => s.toUpperCase().toLowerCase()

/** A route checked at start: its path segments, body bindings as member-name paths, parameters. */
export interface CheckedRoute {
  readonly name: string
  readonly route: Route
  readonly segments: ReadonlyArray<{ readonly param: string } | { readonly literal: string }>
  /** Argument name -> member names from the body's root. */
  readonly body: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
  /** Argument name -> path parameter name. */
  readonly params: ReadonlyArray<readonly [string, string]>
  /** `used` name -> the argument whose bound member it reads. */
  readonly used: ReadonlyArray<readonly [string, string]>
  readonly reverse?: Reverse
}

export interface CheckedMapping {
  readonly upstream: string
  readonly routes: ReadonlyArray<CheckedRoute>
}

const memberNames = (p: string): ReadonlyArray<string> => p.slice(2).split(".")
const segmentsOf = (path: string) =>
  path.split("/").slice(1).map((s) => (/^\{[A-Za-z0-9_]+\}$/.test(s) ? { param: s.slice(1, -1) } : { literal: s }))

const bad = (path: string, message: string) => Effect.fail(gateError("gate/bad_mapping", path, message))

const checkRoute = (name: string, route: Route): Effect.Effect<CheckedRoute, GateError> =>
  Effect.gen(function*() {
    const at = `routes.${name}`
    const segments = segmentsOf(route.path)
    const declared = segments.flatMap((s) => ("param" in s ? [s.param] : []))
    if (new Set(declared).size !== declared.length) return yield* bad(`${at}.path`, "a path parameter appears twice")
    const body: Array<readonly [string, ReadonlyArray<string>]> = []
    const params: Array<readonly [string, string]> = []
    for (const [arg, where] of Object.entries(route.bind)) {
      if (where.startsWith("{")) params.push([arg, where.slice(1, -1)])
      else body.push([arg, memberNames(where)])
    }
    // Every path parameter bound exactly once, and only declared ones.
    for (const [arg, p] of params) {
      if (!declared.includes(p)) return yield* bad(`${at}.bind.${arg}`, `{${p}} is not a segment of the path`)
    }
    for (const p of declared) {
      const n = params.filter(([, q]) => q === p).length
      if (n === 0) return yield* bad(`${at}.path`, `{${p}} is not bound: a call signed for one resource could reach another`)
      if (n > 1) return yield* bad(`${at}.bind`, `{${p}} is bound twice`)
    }
    // Body members: none bound twice, none inside another, no two in one object that fold together.
    for (let i = 0; i < body.length; i++) {
      for (let j = 0; j < body.length; j++) {
        if (i === j) continue
        const [a, pa] = body[i]
        const [, pb] = body[j]
        const same = pa.length === pb.length && pa.every((x, k) => x === pb[k])
        if (same) return yield* bad(`${at}.bind.${a}`, "a member is bound twice")
        if (pa.length < pb.length && pa.every((x, k) => x === pb[k])) return yield* bad(`${at}.bind.${a}`, "a bound member holds another bound member")
        const parentSame = pa.length === pb.length && pa.slice(0, -1).every((x, k) => x === pb[k])
        if (parentSame && fold(pa[pa.length - 1]) === fold(pb[pb.length - 1])) {
          return yield* bad(`${at}.bind.${a}`, "two bound members of one object fold together")
        }
      }
    }
    const used: Array<readonly [string, string]> = []
    for (const [n, p] of Object.entries(route.used ?? {})) {
      const arg = body.find(([, q]) => q.join(".") === memberNames(p).join("."))
      if (arg === undefined) return yield* bad(`${at}.used.${n}`, "used reads a member no bind entry signs")
      used.push([n, arg[0]])
    }
    if (route.reverse !== undefined) {
      const rs = segmentsOf(route.reverse.path).flatMap((s) => ("param" in s ? [s.param] : []))
      if (rs.some((p) => p !== "id")) return yield* bad(`${at}.reverse.path`, "the reverse path takes only {id}")
    }
    return { name, route, segments, body, params, used, ...(route.reverse === undefined ? {} : { reverse: route.reverse }) }
  })

/** Reads and checks a mapping file's text. */
export const readMapping = (text: string | Uint8Array): Effect.Effect<CheckedMapping, GateError> =>
  Effect.gen(function*() {
    const parsed = parseJson(text, { maxDepth: 16, integersOnly: true })
    if (Either.isLeft(parsed)) return yield* bad("mapping", parsed.left.message)
    const m = yield* Effect.mapError(Schema.decodeUnknown(Mapping)(parsed.right), (e) => gateError("gate/bad_mapping", "mapping", e.message.split("\n")[0]))
    const routes: Array<CheckedRoute> = []
    for (const [name, r] of Object.entries(m.routes)) routes.push(yield* checkRoute(name, r))
    const acts = routes.map((r) => r.route.act)
    if (new Set(acts).size !== acts.length) return yield* bad("routes", "two routes name one act")
    return { upstream: m.upstream, routes }
  })
