// The wire Schemas against the verifier (section 6.1 and the checks of sections 4, 5, 6.2, 9.1),
// as a property (fast-check, fixed seed): a valid writ, call, tally, revoke or ack is mutated at
// random (a member deleted, added or replaced, an array's elements swapped or repeated, anywhere
// in the object, bounds included), re-signed by its signer, and then
//
//   1. the verifier accepts => the Effect Schema and the generated JSON Schema (ajv) accept, and
//      the Effect Schema encodes it back to the same canonical bytes (unknown members kept);
//   2. the verifier refuses for a rule a Schema can express => the Schema refuses.
//
// (2) is the converse of (1): together they say the Schemas describe the verifier's objects
// exactly, as far as a Schema can. Reasons a Schema cannot express: `bad_signature`, `too_large`,
// and the relations between objects (`chain_broken`, `not_narrowed`, `expired`, `no_standing`,
// `forbidden_op`, `missing_arg`, `out_of_bounds`, `tally_mismatch`, `sub_unmatched`); `bad_key`
// only the Effect Schema can (a JSON Schema cannot find a point of small order); and two
// `malformed` rules that relate members of one object are stated by the verifier alone: a revoke's
// chain is empty exactly when its `writ` is "*", and a tally's `err` follows its `st` (section 6).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import { ack, call, hashOf, key, revoke, sign, tally, T0, writ, type Key, type Obj } from "../support/writ-builders.js"
import type { Json } from "../../src/kernel/json.js"
import { Ack, verifyAck } from "../../src/writ/ack.js"
import { Call, verifyCall } from "../../src/writ/call.js"
import { verifyChain } from "../../src/writ/chain.js"
import type { WritError } from "../../src/writ/reason.js"
import { Revoke, verifyRevoke } from "../../src/writ/revoke.js"
import { canonicalText } from "../../src/writ/sign.js"
import { Tally, verifyTally } from "../../src/writ/tally.js"
import { verifyWrit, Writ } from "../../src/writ/writ.js"
import { jsonSchemaAccepts, type WritObjectType } from "../support/json-schema.js"
import { depth } from "../support/depth.js"

// At least 500 cases even in a fast run: the last test checks that the mutations reached every
// verdict, which a few dozen cases per object type may not.
const RUNS = depth(1500, 500)
const SEED = 20261202

const A = key("schema-prop-a")
const B = key("schema-prop-b")
const C = key("schema-prop-c")
const EXP = T0 + 86400

const ROOT = writ("schema-prop/root", {
  iss: A,
  hld: B.did,
  exp: EXP,
  bnd: {
    act: { t: "prefix", v: "shop" },
    amount: { t: "max", v: 500 },
    uses: { t: "count", v: 3 },
    spend: { t: "total", v: 900 },
    cur: { t: "set", v: ["EUR", 7, "7"] },
    date: { t: "window", v: [10, 20] },
    hld: { t: "set", v: [C.did] },
    depth: { t: "max", v: 1 }
  },
  extra: { note: "an unknown member, signed" }
})
const CALL = call("schema-prop/call", A, [ROOT], "shop/books", { amount: 100, spend: 100, cur: "EUR", date: 15 })
const TALLY = tally(B, { call: hashOf(CALL), writ: hashOf(ROOT), op: "shop/books", acc: T0, used: { amount: 100, spend: 100 } })
const REVOKE = revoke(A, hashOf(ROOT), [ROOT])
const ACK = ack(B, hashOf(REVOKE), T0, { held: [], open: [] })

interface Subject {
  readonly type: WritObjectType
  readonly base: Obj
  readonly signer: Key
  readonly schema: Schema.Schema<any, any>
  readonly verify: (o: Json) => Effect.Effect<unknown, WritError>
  /** Reasons the Effect Schema states for this object type (the JSON Schema: the same less `bad_key`). */
  readonly expressible: ReadonlyArray<string>
}

const SHAPE = ["malformed", "noncanonical", "unknown_bound", "unsupported_critical", "unsupported_version", "wrong_type", "bad_key"]
const rootChain = Effect.runSync(verifyChain([ROOT as Json]))
const subjects: ReadonlyArray<Subject> = [
  { type: "writ", base: ROOT, signer: A, schema: Writ, verify: (o) => verifyWrit(o), expressible: SHAPE },
  { type: "call", base: CALL, signer: A, schema: Call, verify: (o) => verifyCall(o), expressible: SHAPE },
  {
    type: "tally", base: TALLY, signer: B, schema: Tally,
    verify: (o) => verifyTally(o, { callId: hashOf(CALL), op: "shop/books", chain: rootChain }),
    expressible: SHAPE.filter((r) => r !== "malformed")
  },
  { type: "revoke", base: REVOKE, signer: A, schema: Revoke, verify: (o) => verifyRevoke(o), expressible: SHAPE.filter((r) => r !== "malformed") },
  { type: "ack", base: ACK, signer: B, schema: Ack, verify: (o) => verifyAck(o), expressible: SHAPE }
]

// ---------------------------------------------------------------------------------------------
// Mutations.

type Path = ReadonlyArray<string | number>
/** Every object and array in `v`, with its path. */
const containers = (v: unknown, path: Path = []): Array<Path> => {
  if (Array.isArray(v)) return [path, ...v.flatMap((x, i) => containers(x, [...path, i]))]
  if (v !== null && typeof v === "object") return [path, ...Object.entries(v).flatMap(([k, x]) => containers(x, [...path, k]))]
  return []
}
const at = (v: any, path: Path): any => path.reduce((o, k) => o[k], v)

const MAX = Number.MAX_SAFE_INTEGER
const scalar = fc.oneof(
  fc.constantFrom<Json>(null, true, false, 0, 1, -1, 2, MAX, -MAX, "", "x", "*", "shop", "shop/books", "sys/undo", "EUR", "7", 7,
    "tally", "writ", "ok", "pending", "failed", A.did, C.did, "did:key:z6Mk", hashOf(ROOT), hashOf(CALL), "AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAB"),
  fc.integer({ min: -3, max: 30 }),
  fc.integer()
)
const boundType = fc.constantFrom("max", "count", "total", "prefix", "set", "window", "glob")
const value: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 2, arbitrary: fc.record({ t: boundType, v: fc.oneof(scalar, fc.array(scalar, { maxLength: 3 })) }) },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom("t", "v", "code", "ref", "until", "z"), scalar, { maxKeys: 3 }) }
)
const NAMES = ["v", "typ", "iss", "hld", "bnd", "prv", "exp", "nnc", "crit", "sig", "id", "chain", "from", "op", "args", "call", "writ",
  "acc", "st", "err", "out", "used", "rev", "sub", "wrt", "revoke", "rcv", "act", "depth", "t", "code", "ref", "until", "zz", "__extra"]

type Mutation =
  | { readonly kind: "delete"; readonly where: number; readonly pick: number }
  | { readonly kind: "set"; readonly where: number; readonly pick: number; readonly value: Json }
  | { readonly kind: "add"; readonly where: number; readonly name: string; readonly value: Json }
  | { readonly kind: "swap" | "repeat"; readonly where: number; readonly pick: number }
  | { readonly kind: "crit"; readonly names: ReadonlyArray<string> }
  | { readonly kind: "bound"; readonly where: number; readonly name: string; readonly bound: Json }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("delete" as const), where: fc.nat(), pick: fc.nat() }),
  fc.record({ kind: fc.constant("set" as const), where: fc.nat(), pick: fc.nat(), value }),
  fc.record({ kind: fc.constant("add" as const), where: fc.nat(), name: fc.constantFrom(...NAMES), value }),
  fc.record({ kind: fc.constantFrom("swap" as const, "repeat" as const), where: fc.nat(), pick: fc.nat() }),
  fc.record({ kind: fc.constant("crit" as const), names: fc.array(fc.constantFrom(...NAMES), { maxLength: 3 }) }),
  // A bound of `bnd` (any writ's, the call's chain included) replaced or added: sections 3 and 3.2.
  fc.record({
    kind: fc.constant("bound" as const),
    where: fc.nat(),
    name: fc.constantFrom("act", "hld", "depth", "amount", "uses", "cur", "date", "new"),
    bound: fc.record({
      t: boundType,
      v: fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.tuple(fc.integer({ min: -5, max: 5 }), fc.integer({ min: -5, max: 5 })))
    })
  })
)

/** `o` with `m` applied (a deep copy; `o` is untouched). */
const mutate = (o: Obj, m: Mutation): Obj => {
  const copy = structuredClone(o) as any
  if (m.kind === "crit") return { ...copy, crit: m.names }
  if (m.kind === "bound") {
    const bnds = containers(copy).filter((p) => p[p.length - 1] === "bnd")
    if (bnds.length > 0) at(copy, bnds[m.where % bnds.length])[m.name] = m.bound
    return copy
  }
  const places = containers(copy)
  const place = at(copy, places[m.where % places.length])
  if (Array.isArray(place)) {
    const n = place.length
    if (m.kind === "delete" && n > 0) place.splice(m.pick % n, 1)
    if (m.kind === "set" && n > 0) place[m.pick % n] = m.value
    if (m.kind === "add") place.push(m.value)
    if (m.kind === "swap" && n > 1) place.reverse()
    if (m.kind === "repeat" && n > 0) place.push(place[m.pick % n])
  } else {
    const names = Object.keys(place)
    const name = names.length > 0 && "pick" in m ? names[m.pick % names.length] : undefined
    if (m.kind === "delete" && name !== undefined) delete place[name]
    if (m.kind === "set" && name !== undefined) place[name] = m.value
    if (m.kind === "add") place[m.name] = m.value
  }
  return copy
}

const verdict = (s: Subject, o: Obj): string =>
  Either.match(Effect.runSync(Effect.either(s.verify(o as Json))), { onLeft: (e) => e.reason, onRight: () => "accept" })

describe("the wire Schemas describe what the verifier accepts", () => {
  it("every base object is accepted by the verifier and both Schemas", () => {
    for (const s of subjects) {
      expect(verdict(s, s.base), s.type).toBe("accept")
      expect(Either.isRight(Schema.decodeUnknownEither(s.schema)(s.base)), s.type).toBe(true)
      expect(jsonSchemaAccepts(s.type, s.base), s.type).toEqual({ ok: true })
    }
  })

  const seen = new Map<string, number>()
  it.prop(
    "verifier accepts => Schemas accept; verifier refuses a Schema rule => Schema refuses",
    [fc.constantFrom(...subjects.keys()), fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.boolean()],
    ([which, mutations, resign]) => {
      const s = subjects[which]
      const mutated = mutations.reduce(mutate, s.base)
      // Re-signing keeps the mutation the only defect; without it the verifier stops at the signature.
      const o = resign ? sign(s.signer, mutated, s.type) : mutated
      const v = verdict(s, o)
      seen.set(`${s.type} ${v}`, (seen.get(`${s.type} ${v}`) ?? 0) + 1)
      const effect = Schema.decodeUnknownEither(s.schema)(o)
      const json = jsonSchemaAccepts(s.type, o)
      if (v === "accept") {
        expect(Either.isRight(effect), `Effect Schema refuses an accepted ${s.type}: ${JSON.stringify(o)}`).toBe(true)
        expect(json, `JSON Schema refuses an accepted ${s.type}: ${JSON.stringify(o)}`).toEqual({ ok: true })
        if (Either.isRight(effect)) expect(canonicalText(Schema.encodeSync(s.schema)(effect.right))).toBe(canonicalText(o as Json))
      } else if (s.expressible.includes(v)) {
        expect(Either.isLeft(effect), `Effect Schema accepts a ${s.type} the verifier refuses (${v}): ${JSON.stringify(o)}`).toBe(true)
        if (v !== "bad_key") expect(json.ok, `JSON Schema accepts a ${s.type} the verifier refuses (${v}): ${JSON.stringify(o)}`).toBe(false)
      }
    },
    { fastCheck: { seed: SEED, numRuns: RUNS } }
  )

  it("the mutations reach both verdicts for every object type", () => {
    // Not a tautology: a generator that only broke objects (or never did) would fail here.
    for (const s of subjects) {
      expect(seen.get(`${s.type} accept`) ?? 0, `${s.type} accepted`).toBeGreaterThan(5)
      const refused = [...seen.entries()].filter(([k]) => k.startsWith(`${s.type} `) && !k.endsWith(" accept"))
      expect(refused.length, `${s.type} refused`).toBeGreaterThan(2)
    }
  })
})
