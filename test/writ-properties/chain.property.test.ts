// Section 4 as properties (fast-check, fixed seeds, 1,000 runs each): a chain of 1 to 8 writs in
// which every child narrows its parent at random (every bound type, new bounds added, `hld` sets
// that admit the next holder, `depth` that leaves room for the writs below, `exp` no later) always
// verifies; the same chain with exactly one widening at a random link (a bound widened, dropped or
// retyped, `exp` extended, or a holder outside the parent's `hld` set) always fails with
// `not_narrowed`.
//
// Signing cost (2 shared cores): keys are derived once, Ed25519 signing goes through the kernel
// Signer (node:crypto, key parsed once), and each run signs at most 8 writs.
import { Effect, Either } from "effect"
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { hashOf, key, writ, type Key } from "../support/writ-builders.js"
import { verifyChain } from "../../src/writ/chain.js"
import { boundOf, narrowOf, prefixValue, retype, TYPES, widenBound, type Bound } from "./arbitraries.js"
import type { Obj } from "../support/writ-builders.js"
import { depth } from "../support/depth.js"

const RUNS = depth(1000)
const T0 = 1_800_000_000
/** KEYS[i] issues writ i and holds writ i - 1. */
const KEYS: ReadonlyArray<Key> = Array.from({ length: 9 }, (_, i) => key(`prop-link${i}`))
/** Keys that may appear in `hld` sets without holding anything. */
const EXTRAS: ReadonlyArray<string> = [0, 1, 2].map((i) => key(`prop-extra${i}`).did)
/** A key outside every `hld` set: the holder of a writ that violates its parent's set. */
const OUTSIDER = key("prop-outsider")
/** A key added to an `hld` set to widen it. */
const WIDE_HLD = key("prop-wide-hld").did

interface WritPlan {
  readonly bnd: Readonly<Record<string, Bound>>
  readonly exp: number
}

const APP_NAMES = ["amount", "spend", "uses", "cur", "date", "tier"]
const NEW_NAMES = ["n1", "n2"]
const anyTypeBound = fc.constantFrom(...TYPES).chain(boundOf)

/** The holders after writ i in a chain of n: the `hld` set of writ i must admit the next one. */
const laterHolders = (i: number, n: number) => KEYS.slice(i + 2, n + 1).map((k) => k.did)

const rootPlan = (n: number): fc.Arbitrary<WritPlan> =>
  fc
    .record({
      act: prefixValue,
      app: fc.dictionary(fc.constantFrom(...APP_NAMES), anyTypeBound, { minKeys: 1, maxKeys: 4 }),
      hld: fc.option(fc.subarray([...EXTRAS]), { nil: undefined }),
      depth: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
      exp: fc.integer({ min: T0, max: T0 + 1_000_000 })
    })
    .map(({ act, app, hld, depth, exp }) => ({
      exp,
      bnd: {
        act: { t: "prefix", v: act },
        ...app,
        ...(hld === undefined ? {} : { hld: { t: "set", v: [...laterHolders(0, n), ...hld] } }),
        ...(depth === undefined ? {} : { depth: { t: "max", v: n - 1 + depth } })
      }
    }))

/** A random child of writ i - 1 (plan `parent`) at index i of a chain of n: every bound narrowed. */
const childPlan = (parent: WritPlan, i: number, n: number): fc.Arbitrary<WritPlan> => {
  const entries = Object.entries(parent.bnd).map(([name, b]): fc.Arbitrary<readonly [string, Bound]> => {
    if (name === "hld") {
      const extras = (b.v as Array<string>).filter((k) => EXTRAS.includes(k))
      return fc.subarray(extras).map((e) => [name, { t: "set", v: [...laterHolders(i, n), ...e] }] as const)
    }
    // depth: at least the number of writs still below this one.
    if (name === "depth") return fc.integer({ min: n - 1 - i, max: b.v as number }).map((v) => [name, { t: "max", v }] as const)
    return narrowOf(b).map((nb) => [name, nb] as const)
  })
  return fc
    .record({
      bounds: fc.tuple(...entries),
      added: (() => {
        const fresh = NEW_NAMES.filter((x) => !(x in parent.bnd))
        return fresh.length === 0 ? fc.constant({}) : fc.dictionary(fc.constantFrom(...fresh), anyTypeBound, { maxKeys: 1 })
      })(),
      shorter: fc.integer({ min: 0, max: 1000 })
    })
    .map(({ bounds, added, shorter }) => ({ bnd: { ...Object.fromEntries(bounds), ...added }, exp: parent.exp - shorter }))
}

const grow = (plans: ReadonlyArray<WritPlan>, n: number): fc.Arbitrary<ReadonlyArray<WritPlan>> =>
  plans.length === n ? fc.constant(plans) : childPlan(plans[plans.length - 1], plans.length, n).chain((c) => grow([...plans, c], n))

const chainPlan = (minLength: number): fc.Arbitrary<ReadonlyArray<WritPlan>> =>
  fc.integer({ min: minLength, max: 8 }).chain((n) => rootPlan(n).chain((root) => grow([root], n)))

/** Signs the planned chain; `holders[i]` holds writ i (default KEYS[i + 1]) and issues writ i + 1. */
const build = (plans: ReadonlyArray<WritPlan>, holders: ReadonlyArray<Key> = KEYS.slice(1)): Array<Obj> => {
  const out: Array<Obj> = []
  plans.forEach((p, i) => {
    out.push(
      writ(`prop/${i}`, {
        iss: i === 0 ? KEYS[0] : holders[i - 1],
        hld: holders[i].did,
        bnd: p.bnd as unknown as Obj,
        prv: i === 0 ? null : hashOf(out[i - 1]),
        exp: p.exp
      })
    )
  })
  return out
}

const verdict = (chain: ReadonlyArray<Obj>): string =>
  Either.match(Effect.runSync(Effect.either(verifyChain(chain))), { onLeft: (e) => e.reason, onRight: () => "accept" })

type Widening = { readonly i: number; readonly kind: "bound" | "drop" | "retype" | "exp" | "holder"; readonly k: number; readonly pick: number }

/** Applies one widening to writ i relative to writ i - 1; returns the plans and the holders. */
const widen = (plans: ReadonlyArray<WritPlan>, w: Widening): { plans: Array<WritPlan>; holders: Array<Key>; what: string } => {
  const i = 1 + (w.i % (plans.length - 1))
  const parent = plans[i - 1]
  const self = plans[i]
  const holders = KEYS.slice(1)
  const names = Object.keys(parent.bnd).sort()
  const pickName = (allowed: (n: string) => boolean) => {
    const c = names.filter(allowed)
    return c.length === 0 ? undefined : c[w.pick % c.length]
  }
  const out = [...plans]
  let kind = w.kind
  if (kind === "holder" && parent.bnd.hld === undefined) kind = "exp"
  if (kind === "drop" && pickName((n) => n !== "act") === undefined) kind = "exp"
  if (kind === "retype" && pickName((n) => !["act", "hld", "depth"].includes(n)) === undefined) kind = "bound"
  switch (kind) {
    case "exp":
      out[i] = { ...self, exp: parent.exp + w.k }
      return { plans: out, holders, what: `exp of writ ${i} after its parent's` }
    case "holder":
      // Section 4 step 5: the child's holder is outside the parent's hld set; it issues the next writ.
      holders[i] = OUTSIDER
      return { plans: out, holders, what: `holder of writ ${i} outside its parent's hld set` }
    case "drop": {
      const n = pickName((x) => x !== "act")!
      const { [n]: _dropped, ...rest } = self.bnd
      out[i] = { ...self, bnd: rest }
      return { plans: out, holders, what: `writ ${i} drops ${n}` }
    }
    case "retype": {
      const n = pickName((x) => !["act", "hld", "depth"].includes(x))!
      out[i] = { ...self, bnd: { ...self.bnd, [n]: retype(parent.bnd[n]) } }
      return { plans: out, holders, what: `writ ${i} retypes ${n}` }
    }
    case "bound": {
      const n = pickName(() => true)!
      out[i] = { ...self, bnd: { ...self.bnd, [n]: widenBound(parent.bnd[n], w.k, w.pick, n === "hld" ? WIDE_HLD : `zz${w.k}`) } }
      return { plans: out, holders, what: `writ ${i} widens ${n}` }
    }
  }
}

const widening: fc.Arbitrary<Widening> = fc.record({
  i: fc.nat(),
  kind: fc.constantFrom("bound", "bound", "drop", "retype", "exp", "holder"),
  k: fc.integer({ min: 1, max: 1000 }),
  pick: fc.nat()
})

describe("section 4: chains built by random narrowing", () => {
  it.prop("always verify", [chainPlan(1)], ([plans]) => {
    expect(verdict(build(plans))).toBe("accept")
  }, { fastCheck: { numRuns: RUNS, seed: 0xc4a1 } })

  const kinds = new Map<string, number>()
  it.prop("with one random widening anywhere always fail with not_narrowed", [chainPlan(2), widening], ([plans, w]) => {
    const { plans: widened, holders, what } = widen(plans, w)
    const kind = what.replace(/writ \d+ |of writ \d+ /g, "").split(" ")[0]
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
    expect(verdict(build(widened, holders)), what).toBe("not_narrowed")
  }, { fastCheck: { numRuns: RUNS, seed: 0xc4a2 } })
  it("every kind of widening was exercised", () => {
    expect([...kinds.keys()].sort()).toEqual(["drops", "exp", "holder", "retypes", "widens"])
  })
})
