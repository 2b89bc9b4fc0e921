// Bounds, spec section 3: the six types, the check order inside one bound, `narrows` (section 4
// step 4), `satisfies` (section 7.2), prefix matching (3.1) and the reserved names (3.2).
//
// Inputs are parsed JSON values (section 1.1 already applied by the strict reader), typed
// `unknown` because a bound arrives from untrusted input and is classified here.
import { Effect, Predicate, Schema, String as Str } from "effect"
import { isDidKey } from "../kernel/didkey.js"
import { Int, Key } from "./wire.js"
import { WritError, writError } from "./reason.js"

// ---------------------------------------------------------------------------------------------
// Schemas: the wire shape of each bound type, with every value rule of section 3 that a Schema can
// state (used for encoding, issuing and JSON Schema generation). `checkBound` below stays the
// decoder of record because section 3 pins the order of its checks and their reason codes; the
// property test in test/writ-properties/schema.property.test.ts holds the two together.

/** Section 3: the value of `max`, `count` and `total`, an integer >= 0 (below zero is `noncanonical`). */
const NonNegInt = Schema.Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER))

/** Section 3: set elements are distinct, the integer 1 and the string "1" being different elements
 * (JSON Schema's `uniqueItems` compares the same way). */
const distinct = <A>(elements: ReadonlyArray<A>): boolean =>
  new Set(elements.map((e) => `${typeof e} ${String(e)}`)).size === elements.length
const uniqueItems = <S extends Schema.Schema.Any>(element: S) =>
  Schema.Array(element).pipe(
    Schema.filter((es) => distinct(es), { message: () => "set elements repeat", jsonSchema: { uniqueItems: true } })
  )

/** Section 3: `[lo, hi]`, lo <= hi. JSON Schema cannot compare two members of one instance, so the
 * rule is stated with the keyword `x-nondecreasing` (array items in non-decreasing order), which a
 * validator that does not implement it ignores as an annotation (test/support/json-schema.ts implements it). */
const Window = Schema.Tuple(Int, Int).pipe(
  Schema.filter(([lo, hi]) => lo <= hi, {
    message: () => "window lo above hi",
    jsonSchema: { "x-nondecreasing": true } as object
  })
)

/** Section 3: a bound has exactly the members `t` and `v` (an excess member is an error, not ignored). */
const bound = <T extends string, V extends Schema.Schema.Any>(t: T, v: V) =>
  Schema.Struct({ t: Schema.Literal(t), v }).annotations({ parseOptions: { onExcessProperty: "error" } })

export const MaxBound = bound("max", NonNegInt)
export const CountBound = bound("count", NonNegInt)
export const TotalBound = bound("total", NonNegInt)
/** Section 3.1: any string is a prefix value (there is no value rule). */
export const PrefixBound = bound("prefix", Schema.String)
export const SetBound = bound("set", uniqueItems(Schema.Union(Schema.String, Int)))
export const WindowBound = bound("window", Window)

/** One bound, `{"t": <type>, "v": <value>}` (section 3). */
export const Bound = Schema.Union(MaxBound, CountBound, TotalBound, PrefixBound, SetBound, WindowBound)
export type Bound = typeof Bound.Type
export type BoundType = Bound["t"]
export const boundTypes: ReadonlyArray<BoundType> = ["max", "count", "total", "prefix", "set", "window"]

/** Section 3.2 `hld`: a set of keys (section 1.3). */
export const HolderSetBound = bound("set", uniqueItems(Key))

/** `bnd` (sections 3 and 3.2): `act` required and a prefix, `hld` a set of keys, `depth` a max, and
 * every other name any bound. */
export const Bounds = Schema.Struct(
  { act: PrefixBound, hld: Schema.optional(HolderSetBound), depth: Schema.optional(MaxBound) },
  Schema.Record({ key: Schema.String, value: Bound })
)
export type Bounds = typeof Bounds.Type

// ---------------------------------------------------------------------------------------------
// Small JSON predicates shared by the writ modules.

export const isJsonObject: (u: unknown) => u is Record<string, unknown> = Predicate.isRecord
export const isInteger = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u)
export const has = (o: Record<string, unknown>, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

/** Canonical member-name order (section 1.2: UTF-16 code units), the order bounds are checked in. */
export const canonicalNames = (o: Record<string, unknown>): Array<string> =>
  Object.keys(o).sort(Str.Order)

const join = (path: string | undefined, suffix: string): string | undefined =>
  path === undefined ? undefined : `${path}${suffix}`

// ---------------------------------------------------------------------------------------------
// Section 3: checking one bound, first failure wins.

/** Section 3: classify one bound in the pinned order and return it typed. */
const boundOrFailure = (u: unknown, path?: string): Bound | WritError => {
  // 1. An object whose members are exactly `t` and `v`, with `t` a string (`malformed`).
  if (!isJsonObject(u)) return writError("malformed", path, "a bound is an object")
  const names = Object.keys(u)
  if (names.length !== 2 || !has(u, "t") || !has(u, "v")) {
    return writError("malformed", path, "a bound has exactly the members t and v")
  }
  if (typeof u.t !== "string") return writError("malformed", join(path, ".t"), "t is a string")
  // 2. `t` is one of the six types (`unknown_bound`).
  const t = u.t
  if (!(boundTypes as ReadonlyArray<string>).includes(t)) {
    return writError("unknown_bound", join(path, ".t"), `unknown bound type ${JSON.stringify(t)}`)
  }
  const v = u.v
  const vPath = join(path, ".v")
  switch (t as BoundType) {
    case "max":
    case "count":
    case "total": {
      // 3. `v` is an integer (`malformed`); 4. not below zero (`noncanonical`).
      if (!isInteger(v)) return writError("malformed", vPath, `${t} takes an integer`)
      if (v < 0) return writError("noncanonical", vPath, `${t} below zero`)
      return { t: t as "max" | "count" | "total", v }
    }
    case "prefix": {
      // 3. `v` is a string (`malformed`); there is no value rule.
      if (typeof v !== "string") return writError("malformed", vPath, "prefix takes a string")
      return { t: "prefix", v }
    }
    case "set": {
      // 3. `v` is an array (`malformed`); then element by element in array order: its type,
      //    string or integer (`malformed`), before whether it repeats an earlier one (`noncanonical`).
      if (!Array.isArray(v)) return writError("malformed", vPath, "set takes an array")
      const seen = new Set<string>()
      for (let i = 0; i < v.length; i++) {
        const e = v[i]
        if (typeof e !== "string" && !isInteger(e)) {
          return writError("malformed", join(vPath, `[${i}]`), "set elements are strings or integers")
        }
        const k = typeof e === "string" ? `s${e}` : `i${e}`
        if (seen.has(k)) return writError("noncanonical", join(vPath, `[${i}]`), "set element repeats")
        seen.add(k)
      }
      return { t: "set", v: v as ReadonlyArray<string | number> }
    }
    case "window": {
      // 3. shape: an array of two integers (`malformed`); 4. lo <= hi (`noncanonical`).
      if (!Array.isArray(v) || v.length !== 2 || !isInteger(v[0]) || !isInteger(v[1])) {
        return writError("malformed", vPath, "window takes [lo, hi] integers")
      }
      if (v[0] > v[1]) return writError("noncanonical", vPath, "window lo above hi")
      return { t: "window", v: [v[0], v[1]] as const }
    }
  }
}

export const checkBound = (u: unknown, path?: string): Effect.Effect<Bound, WritError> =>
  Effect.suspend(() => {
    const b = boundOrFailure(u, path)
    return b instanceof WritError ? Effect.fail(b) : Effect.succeed(b)
  })

// ---------------------------------------------------------------------------------------------
// Section 3.1: prefix matching.

/** Section 3.1: does prefix value `p` match string `s`? */
export const prefixMatches = (p: string, s: string): boolean =>
  s === p || (p.endsWith("/") && s.startsWith(p)) || s.startsWith(p + "/")

// ---------------------------------------------------------------------------------------------
// Narrowing (section 3 table, "child narrows parent when").

const sameElement = (a: string | number, b: string | number): boolean => typeof a === typeof b && a === b

/** The narrowing rule for two checked bounds of any type; a type change never narrows. */
export const boundNarrows = (child: Bound, parent: Bound): boolean => {
  if (child.t !== parent.t) return false
  switch (parent.t) {
    case "max":
    case "count":
    case "total":
      return (child.v as number) <= parent.v
    case "prefix":
      return prefixMatches(parent.v, child.v as string)
    case "set":
      return (child.v as ReadonlyArray<string | number>).every((e) => parent.v.some((p) => sameElement(e, p)))
    case "window": {
      const [clo, chi] = child.v as readonly [number, number]
      return parent.v[0] <= clo && chi <= parent.v[1]
    }
  }
}

/** The `narrows` operation (section 14): section 3 on the child, then on the parent, then a type
 * change (`not_narrowed`), then the narrowing rule (`not_narrowed`). */
export const narrows = (child: unknown, parent: unknown): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    const c = yield* checkBound(child, "child")
    const p = yield* checkBound(parent, "parent")
    if (c.t !== p.t) return yield* Effect.fail(writError("not_narrowed", "child.t", `type changed from ${p.t} to ${c.t}`))
    if (!boundNarrows(c, p)) return yield* Effect.fail(writError("not_narrowed", "child.v", `${c.t} widens its parent`))
  })

// ---------------------------------------------------------------------------------------------
// Satisfaction (section 3 table, "argument satisfies when"; applied by section 7.2).

/** The satisfaction rule for a checked bound. `count` is never satisfied by an argument. */
export const boundSatisfied = (b: Bound, arg: unknown): boolean => {
  switch (b.t) {
    case "max":
    case "total":
      return isInteger(arg) && 0 <= arg && arg <= b.v
    case "count":
      return false
    case "prefix":
      return typeof arg === "string" && prefixMatches(b.v, arg)
    case "set":
      return (typeof arg === "string" || isInteger(arg)) && b.v.some((e) => sameElement(e, arg))
    case "window":
      return isInteger(arg) && b.v[0] <= arg && arg <= b.v[1]
  }
}

/** The `satisfies` operation (section 14): section 3 on the bound, then the rule (`out_of_bounds`). */
export const satisfies = (bound: unknown, arg: unknown, path = "bound"): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    const b = yield* checkBound(bound, path)
    if (b.t === "count") {
      return yield* Effect.fail(writError("malformed", path, "count is consumed by the executor, not satisfied by an argument"))
    }
    if (!boundSatisfied(b, arg)) return yield* Effect.fail(writError("out_of_bounds", path, `argument outside the ${b.t} bound`))
  })

// ---------------------------------------------------------------------------------------------
// A writ's `bnd` (section 6.1 step 5) including the reserved names (section 3.2).

/** Names that are not application bounds (section 7.2). */
export const reservedNames: ReadonlyArray<string> = ["act", "hld", "depth"]

/** Section 6.1 step 5 for `bnd`: an object; `act` present; every bound in canonical member-name
 * order passes section 3; then `act` is a prefix, `hld` a set of keys, `depth` a max (3.2). */
const boundsOrFailure = (u: unknown, path: string): Bounds | WritError => {
  if (!isJsonObject(u)) return writError("malformed", path, "bnd is an object")
  // `act` is present.
  if (!has(u, "act")) return writError("malformed", `${path}.act`, "bnd must contain act")
  // Every bound, in canonical member-name order, passes section 3.
  const out: Record<string, Bound> = {}
  for (const name of canonicalNames(u)) {
    const bound = boundOrFailure(u[name], `${path}.${name}`)
    if (bound instanceof WritError) return bound
    // defineProperty, not assignment: a bound named `__proto__` is a bound like any other.
    Object.defineProperty(out, name, { value: bound, enumerable: true, writable: true, configurable: true })
  }
  // Section 3.2, after section 3: `act` is a prefix.
  const act = out.act
  if (act.t !== "prefix") return writError("malformed", `${path}.act`, "act is a prefix")
  // `hld` is a set whose elements, in array order, are strings and valid keys (`bad_key`).
  let hld: { readonly t: "set"; readonly v: ReadonlyArray<string> } | undefined
  if (has(out, "hld")) {
    const h = out.hld
    if (h.t !== "set") return writError("malformed", `${path}.hld`, "hld is a set of keys")
    const keys: Array<string> = []
    for (let i = 0; i < h.v.length; i++) {
      const e = h.v[i]
      if (typeof e !== "string") return writError("malformed", `${path}.hld.v[${i}]`, "hld holds keys")
      if (!isDidKey(e)) return writError("bad_key", `${path}.hld.v[${i}]`, "not an Ed25519 did:key")
      keys.push(e)
    }
    hld = { t: "set", v: keys }
  }
  // `depth` is a max.
  let depth: { readonly t: "max"; readonly v: number } | undefined
  if (has(out, "depth")) {
    const d = out.depth
    if (d.t !== "max") return writError("malformed", `${path}.depth`, "depth is a max")
    depth = d
  }
  // The same bounds, typed as checked (spread keeps a bound named `__proto__` an own member).
  const bounds: Bounds = { ...out, act, ...(hld === undefined ? {} : { hld }), ...(depth === undefined ? {} : { depth }) }
  return bounds
}

/** Section 6.1 step 5 for `bnd` as a plain function: the bounds or the first failure. */
export const checkBoundsSync = (u: unknown, path = "bnd"): Bounds | WritError => boundsOrFailure(u, path)

export const checkBounds = (u: unknown, path = "bnd"): Effect.Effect<Bounds, WritError> =>
  Effect.suspend(() => {
    const b = boundsOrFailure(u, path)
    return b instanceof WritError ? Effect.fail(b) : Effect.succeed(b)
  })

/** Section 7.2: the application bounds of a leaf, in canonical member-name order: every member
 * other than `act`, `hld`, `depth`, and any bound of type `count`. */
export const applicationBounds = (bnd: Bounds): Array<[string, Bound]> =>
  canonicalNames(bnd)
    .filter((n) => !reservedNames.includes(n) && bnd[n].t !== "count")
    .map((n) => [n, bnd[n]] as [string, Bound])

/** Section 7.2: every application bound has an argument (`missing_arg`), then every argument
 * satisfies its bound (`out_of_bounds`). Presence is checked for all before satisfaction for any. */
export const argsFailure = (bnd: Bounds, args: Record<string, unknown>): WritError | undefined => {
  const app = applicationBounds(bnd)
  // Pass 1: presence.
  for (const [n] of app) {
    if (!has(args, n)) return writError("missing_arg", `args.${n}`, `argument ${n} is bounded and absent`)
  }
  // Pass 2: satisfaction.
  for (const [n, b] of app) {
    if (!boundSatisfied(b, args[n])) return writError("out_of_bounds", `args.${n}`, `argument ${n} outside its ${b.t} bound`)
  }
  return undefined
}

/** Section 7.2 as an Effect. */
export const checkArgs = (bnd: Bounds, args: Record<string, unknown>): Effect.Effect<void, WritError> =>
  Effect.suspend(() => {
    const e = argsFailure(bnd, args)
    return e === undefined ? Effect.void : Effect.fail(e)
  })
