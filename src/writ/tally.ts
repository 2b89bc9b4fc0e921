// The tally, spec section 6: its wire Schema, its section 6.1 member table, and section 6.2,
// verifying a tally tree, with the verdict `valid` / `signed_unauthorized` / `unverifiable`.
import { Effect, Schema, String as Str } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"
import { has, isInteger, isJsonObject } from "./bound.js"
import { childFailure, depthFailure } from "./chain.js"
import { isStandingOp } from "./call.js"
import { WritError, writError } from "./reason.js"
import { hashOf } from "./sign.js"
import {
  binaryValue,
  type Checked,
  checkObject,
  failOr,
  verifyObjectSync,
  readBodySync,
  result,
  memberHash,
  memberHashOrNull,
  memberInteger,
  memberObjectArray,
  memberSig,
  memberString,
  type ObjectInput,
  type ObjectSpec,
  stringMembers,
  type BodyInput
} from "./verify.js"
import { type CheckedWrit, verifyWritSync, Writ } from "./writ.js"
import { Hash, Int, signedObject, UnknownMember } from "./wire.js"

export const TallyStatus = Schema.Literal("ok", "failed", "canceled", "pending")
export type TallyStatus = typeof TallyStatus.Type

const unknownMembers = Schema.Record({ key: Schema.String, value: UnknownMember })

/** `err`: null when `st` is ok, otherwise `{"code": <reason>, "ref"?: <hash>}` (section 6); other
 * members are ignored (section 1.7). */
export const TallyErr = Schema.Struct({ code: Schema.String, ref: Schema.optional(Hash) }, unknownMembers)
export type TallyErr = typeof TallyErr.Type

/** `rev`: null, or `{"until": <integer>}` (section 6); other members are ignored (section 1.7). */
export const TallyRev = Schema.Struct({ until: Int }, unknownMembers)
export type TallyRev = typeof TallyRev.Type

/** The members of section 6's table other than `v`, `typ`, `sub`, `wrt`, `crit` and `sig`: the same
 * on the wire (`TallyEncoded`) and after section 6.1 (`TallyMembers`). */
type TallyScalars = {
  readonly call: string
  readonly writ: string
  readonly op: string
  readonly acc: number
  readonly st: TallyStatus
  readonly err: TallyErr | null
  readonly out: string | null
  readonly used: { readonly [k: string]: number }
  readonly rev: TallyRev | null
}

/** A tally without its signature, as built by a signer (section 1.4). Recursive through `sub`, so
 * its type is declared rather than inferred; the Schema below is checked against it. `crit`
 * (optional) falls under the index signature. */
export type UnsignedTally = TallyScalars & {
  readonly [member: string]: Json
  readonly v: 1
  readonly typ: "tally"
  readonly sub: ReadonlyArray<TallyEncoded>
  readonly wrt: ReadonlyArray<Writ>
}
/** A tally on the wire. */
export type TallyEncoded = UnsignedTally & { readonly sig: string }

const tally = signedObject("Tally", {
  v: Schema.Literal(1),
  typ: Schema.Literal("tally"),
  call: Hash,
  writ: Hash,
  op: Schema.String,
  acc: Int,
  st: TallyStatus,
  err: Schema.NullOr(TallyErr),
  out: Schema.NullOr(Hash),
  used: Schema.Record({ key: Schema.String, value: Int.pipe(Schema.nonNegative()) }),
  rev: Schema.NullOr(TallyRev),
  sub: Schema.Array(Schema.suspend((): Schema.Schema<TallyEncoded> => Tally)),
  wrt: Schema.Array(Writ)
})
/** A tally, section 6 (recursive through `sub`). */
export const Tally: Schema.Schema<TallyEncoded> = tally.Signed
export type Tally = TallyEncoded
/** A tally without its signature: what a signer builds (section 1.4). */
export const UnsignedTally: Schema.Schema<UnsignedTally> = tally.Unsigned

/** What a signer states in a tally (section 6); `unsignedTally` writes the members from it. */
export interface TallyContent {
  /** Identity of the call answered and of its leaf writ, and its op. */
  readonly call: string
  readonly writ: string
  readonly op: string
  readonly acc: number
  readonly st: TallyStatus
  /** Required unless `st` is ok. */
  readonly err?: TallyErr | null
  /** The result body, whose hash becomes `out`; absent means `out` null. */
  readonly body?: Json
  readonly used?: { readonly [k: string]: number }
  readonly rev?: TallyRev | null
  readonly sub?: ReadonlyArray<TallyEncoded>
  readonly wrt?: ReadonlyArray<Writ>
}

/** Section 6: the tally for `c` before its signature, every member present. The one tally
 * builder: issuing (src/writ/issue.ts) and the executor (src/writ/executor/tally-sign.ts) use it. */
export const unsignedTally = (c: TallyContent): UnsignedTally => ({
  v: 1,
  typ: "tally",
  call: c.call,
  writ: c.writ,
  op: c.op,
  acc: c.acc,
  st: c.st,
  err: c.err ?? null,
  out: c.body === undefined ? null : hashOf(c.body),
  used: c.used ?? {},
  rev: c.rev ?? null,
  sub: c.sub ?? [],
  wrt: c.wrt ?? []
})

/** The tally as section 6.1 leaves it: `sub` and `wrt` hold objects checked at section 6.2. */
export interface TallyMembers extends TallyScalars {
  readonly sig: string
  readonly sub: ReadonlyArray<JsonObject>
  readonly wrt: ReadonlyArray<JsonObject>
}
export type CheckedTally = Checked<TallyMembers>

export const TALLY_MAX_BYTES = 262144

const statuses: ReadonlyArray<string> = ["ok", "failed", "canceled", "pending"]

export const tallySpec: ObjectSpec<TallyMembers> = {
  typ: "tally",
  maxBytes: TALLY_MAX_BYTES,
  members: tally.members,
  // Step 2: `sig`, `call`, `writ`, `out`, and `err.ref` when `err` is an object.
  binaryMembers: (o) => {
    const own = stringMembers(o, ["sig", "call", "writ", "out"])
    const err = o.err
    if (isJsonObject(err) && typeof err.ref === "string") own.push(["err.ref", err.ref])
    return own
  },
  // Step 5, the table of section 6 in order.
  checkMembers: (o, path) => {
    const at = (m: string) => (path === "" ? m : `${path}.${m}`)
    const bad = (m: string, why: string) => writError("malformed", at(m), why)
    const call = memberHash(o, "call", path)
    if (call instanceof WritError) return call
    const writ = memberHash(o, "writ", path)
    if (writ instanceof WritError) return writ
    const op = memberString(o, "op", path)
    if (op instanceof WritError) return op
    const acc = memberInteger(o, "acc", path)
    if (acc instanceof WritError) return acc
    const stRaw = memberString(o, "st", path)
    if (stRaw instanceof WritError) return stRaw
    if (!statuses.includes(stRaw)) return bad("st", "st is ok, failed, canceled or pending")
    const st = stRaw as TallyStatus
    // err: null when st is ok; otherwise an object whose code is a string and whose ref, if present, is a hash.
    if (!has(o, "err")) return bad("err", "err is required")
    let err: TallyErr | null = null
    if (st === "ok") {
      if (o.err !== null) return bad("err", "err is null when st is ok")
    } else {
      const e = o.err
      if (!isJsonObject(e)) return bad("err", "err is an object when st is not ok")
      if (typeof e.code !== "string") return bad("err.code", "err.code is a string")
      if (has(e, "ref")) {
        const ref = binaryValue(e.ref, at("err.ref"), { len: 32 })
        if (ref instanceof WritError) return ref
        err = { code: e.code, ref }
      } else err = { code: e.code }
    }
    const out = memberHashOrNull(o, "out", path)
    if (out instanceof WritError) return out
    // used: an object whose members are integers of zero or more.
    if (!has(o, "used")) return bad("used", "used is required")
    const used = o.used
    if (!isJsonObject(used)) return bad("used", "used is an object")
    for (const [k, n] of Object.entries(used)) {
      if (!isInteger(n) || n < 0) return bad(`used.${k}`, "used holds integers of zero or more")
    }
    // rev: null, or an object whose until is an integer.
    if (!has(o, "rev")) return bad("rev", "rev is required")
    const rev = o.rev
    if (rev !== null && !(isJsonObject(rev) && isInteger(rev.until))) return bad("rev", "rev is null or {until: integer}")
    // sub and wrt: arrays of objects (their elements are checked at section 6.2 steps 8 and 9).
    const sub = memberObjectArray(o, "sub", path)
    if (sub instanceof WritError) return sub
    const wrt = memberObjectArray(o, "wrt", path)
    if (wrt instanceof WritError) return wrt
    // After wrt: a pending tally's shape (section 6).
    if (st === "pending") {
      if (err === null || err.code !== "pending") return bad("err", "a pending tally's err.code is pending")
      if (Object.keys(used).length !== 0) return bad("used", "a pending tally's used is empty")
      if (rev !== null) return bad("rev", "a pending tally's rev is null")
      if (out !== null) return bad("out", "a pending tally's out is null")
      if (sub.length !== 0) return bad("sub", "a pending tally's sub is empty")
      if (wrt.length !== 0) return bad("wrt", "a pending tally's wrt is empty")
    }
    const sig = memberSig(o, path)
    if (sig instanceof WritError) return sig
    return {
      call,
      writ,
      op,
      acc,
      st,
      err,
      out,
      used: used as { readonly [k: string]: number },
      rev: rev === null ? null : { until: (rev as { until: number }).until },
      sub,
      wrt,
      sig
    }
  }
}

/** Section 6.1 steps 1 to 5 on a tally. */
export const checkTally = (input: ObjectInput, path = ""): Effect.Effect<CheckedTally, WritError> => checkObject(tallySpec, input, path)

/** Section 6.1 on a tally, signed by `signer` (the `hld` of the writ it names), as a plain function. */
export const verifyTallyObjectSync = (
  input: ObjectInput,
  signer: string,
  path: string,
  cache: VerificationCacheSync | undefined
): CheckedTally | WritError => verifyObjectSync(tallySpec, input, () => signer, path, cache)

/** Section 6.1 on a tally, signed by `signer` (the `hld` of the writ it names). */
export const verifyTallyObject = (input: ObjectInput, signer: string, path = ""): Effect.Effect<CheckedTally, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => result(verifyTallyObjectSync(input, signer, path, cache)))

// ---------------------------------------------------------------------------------------------
// Section 6.2.

export type TallyVerdict = "valid" | "signed_unauthorized" | "unverifiable"

/** The result of verifying a tally tree: `valid`, or a verdict with the first failure. */
export type TallyResult =
  | { readonly verdict: "valid"; readonly tally: CheckedTally }
  | { readonly verdict: "signed_unauthorized" | "unverifiable"; readonly error: WritError }

/** What a verifier that made call K under a chain ending in W holds (section 6.2). */
export interface TallyContext {
  /** K's identity (section 1.5). */
  readonly callId: string
  /** K.op. */
  readonly op: string
  /** K.chain, verified; its last writ is W. */
  readonly chain: ReadonlyArray<CheckedWrit>
}

const boundedNames = (w: CheckedWrit): Array<[string, number]> =>
  Object.keys(w.value.bnd)
    .sort(Str.Order)
    .filter((n) => w.value.bnd[n].t === "max" || w.value.bnd[n].t === "total")
    .map((n) => [n, w.value.bnd[n].v as number])

const usedOf = (t: TallyMembers, n: string): number => (has(t.used, n) ? t.used[n] : 0)

/** Section 6.2 steps 5, 7, 8, 9 and 10 for a tally `t` that passed section 6.1 under the writ `w`
 * at the end of `chain` (step 3 having matched `t.writ` to `w`). Used for T and, recursively, for
 * each sub-tally S with its writ X in place of W. */
const treeFailure = (
  t: CheckedTally,
  chain: ReadonlyArray<CheckedWrit>,
  path: string,
  cache: VerificationCacheSync | undefined
): WritError | undefined => {
  const w = chain[chain.length - 1]
  const T = t.value
  const at = (m: string) => (path === "" ? m : `${path}.${m}`)
  // 5. A forward tally's `acc` is before the writ's `exp` (`expired`).
  if (!isStandingOp(T.op) && !(T.acc < w.value.exp)) {
    return writError("expired", at("acc"), `acc ${T.acc} is not before exp ${w.value.exp}`)
  }
  // 7. For each max or total bound N of the writ: used[N] <= its value (`out_of_bounds`).
  for (const [n, v] of boundedNames(w)) {
    if (usedOf(T, n) > v) return writError("out_of_bounds", at(`used.${n}`), `used ${usedOf(T, n)} of ${n} over ${v}`)
  }
  // 8. Every writ X in wrt, in array order: section 6.1; a valid child of the writ (section 4
  //    steps 1 to 5); `depth` over the chain to the writ followed by X.
  const wrt: Array<CheckedWrit> = []
  for (let i = 0; i < T.wrt.length; i++) {
    const x = verifyWritSync(T.wrt[i], at(`wrt[${i}]`), cache)
    if (x instanceof WritError) return x
    const link = childFailure(x, w, at(`wrt[${i}]`)) ?? depthFailure([...chain, x], at(`wrt[${i}]`))
    if (link !== undefined) return link
    wrt.push(x)
  }
  // 9. Every tally S in sub, in array order, its whole subtree before the next.
  for (let i = 0; i < T.sub.length; i++) {
    const sp = at(`sub[${i}]`)
    const s = T.sub[i]
    // S names a writ X in wrt (`sub_unmatched`), checked before anything else about S.
    const x = wrt.find((x) => x.id === s.writ)
    if (x === undefined) return writError("sub_unmatched", `${sp}.writ`, "the sub-tally names a writ absent from wrt")
    // S passes section 6.1 with signer X.hld.
    const st = verifyTallyObjectSync(s, x.value.hld, sp, cache)
    if (st instanceof WritError) return st
    // Step 3 for S (S.writ is X's identity, true by the match above), then 5, 7, 8, 9, 10.
    const sub = treeFailure(st, [...chain, x], sp, cache)
    if (sub !== undefined) return sub
  }
  // 10. For each max or total bound N of the writ: the sum over sub of S.used[N] <= used[N].
  for (const [n] of boundedNames(w)) {
    let sum = 0
    for (const s of T.sub) sum += has(s.used as JsonObject, n) ? ((s.used as JsonObject)[n] as number) : 0
    if (sum > usedOf(T, n)) return writError("out_of_bounds", at(`used.${n}`), `used ${usedOf(T, n)} of ${n} below its sub-tallies' ${sum}`)
  }
  return undefined
}

/** Section 6.2 steps 2 to 10, for a tally that passed step 1, as a plain function. */
const tallyTreeFailure = (
  t: CheckedTally,
  ctx: TallyContext,
  body: BodyInput | undefined,
  cache: VerificationCacheSync | undefined
): WritError | undefined => {
  const w = ctx.chain[ctx.chain.length - 1]
  const T = t.value
  // 2. T.call is K's identity (`tally_mismatch`).
  if (T.call !== ctx.callId) return writError("tally_mismatch", "call", "the tally answers another call")
  // 3. T.writ is W's identity (`tally_mismatch`).
  if (T.writ !== w.id) return writError("tally_mismatch", "writ", "the tally names another writ")
  // 4. T.op is K.op (`tally_mismatch`).
  if (T.op !== ctx.op) return writError("tally_mismatch", "op", "the tally names another op")
  // 6 comes between 5 and 7; treeFailure runs 5, then 7 to 10, so step 6 needs 5 first.
  const forward = !isStandingOp(T.op)
  // 5. A forward tally's acc is before W.exp (`expired`).
  if (forward && !(T.acc < w.value.exp)) return writError("expired", "acc", `acc ${T.acc} is not before exp ${w.value.exp}`)
  // 6. With a body R: out is not null and is the hash of R's canonical form (`tally_mismatch`).
  //    The body is read strictly first (section 1.1): one that breaks it is `noncanonical` at `res`.
  if (body !== undefined) {
    const R = readBodySync(body, "res")
    if (R instanceof WritError) return R
    if (T.out === null || T.out !== hashOf(R)) return writError("tally_mismatch", "out", "out does not commit to the result body")
  }
  // 7 to 10 (5 again is a no-op: it held above).
  return treeFailure(t, ctx.chain, "", cache)
}

/** Section 6.2 steps 2 to 10, for a tally that passed step 1. */
export const checkTallyTree = (t: CheckedTally, ctx: TallyContext, body?: BodyInput | undefined): Effect.Effect<void, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => failOr(tallyTreeFailure(t, ctx, body, cache)))

/** Section 6.2 in full as a plain function. */
export const verifyTallyTreeSync = (
  input: ObjectInput,
  ctx: TallyContext,
  body: BodyInput | undefined,
  cache: VerificationCacheSync | undefined
): TallyResult => {
  const w = ctx.chain[ctx.chain.length - 1]
  // 1. T passes section 6.1 with signer W.hld; a failure makes T `unverifiable`.
  const t = verifyTallyObjectSync(input, w.value.hld, "", cache)
  if (t instanceof WritError) return { verdict: "unverifiable", error: t }
  // 2 to 10: a failure is the signer's admission, `signed_unauthorized`.
  const rest = tallyTreeFailure(t, ctx, body, cache)
  if (rest !== undefined) return { verdict: "signed_unauthorized", error: rest }
  return { verdict: "valid", tally: t }
}

/** Section 6.2 in full: the verdict for tally `input` answering the call described by `ctx`. One
 * span, the cache read once, the steps as plain code. */
export const verifyTallyTree: (input: ObjectInput, ctx: TallyContext, body?: BodyInput | undefined) => Effect.Effect<TallyResult> = Effect.fn(
  "writ.verifyTallyTree"
)(function* (input: ObjectInput, ctx: TallyContext, body?: BodyInput | undefined) {
  return verifyTallyTreeSync(input, ctx, body, yield* verificationCacheSync)
})

/** Section 6.2 as a failing Effect: succeeds with the tally when `valid`. */
export const verifyTally = (
  input: ObjectInput,
  ctx: TallyContext,
  body?: BodyInput | undefined
): Effect.Effect<CheckedTally, WritError> =>
  Effect.flatMap(verifyTallyTree(input, ctx, body), (r) => (r.verdict === "valid" ? Effect.succeed(r.tally) : Effect.fail(r.error)))
