// Checking what comes back, for `writ verify`, `writ send`, `writ inspect` and the demo: the
// verdict on any object file (section 6.1, with section 6.2 for a tally when its call is known),
// the answer to a call (section 10: an unsigned error, or a tally tree checked by section 6.2),
// the answer to a revoke (its acks, section 9.4 steps 2 to 4, and its tallies, section 6.1), and
// a tally tree drawn hop by hop with each hop's check result.
import { Effect, Either } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { parseJson } from "../kernel/json.js"
import { scan, type Span } from "../writ/rawjson.js"
import { verifyAck } from "../writ/ack.js"
import { verifyCall } from "../writ/call.js"
import { checkExpiry, verifyChain } from "../writ/chain.js"
import { type WritError, writError } from "../writ/reason.js"
import { verifyRevoke } from "../writ/revoke.js"
import { hashOf, identity } from "../writ/sign.js"
import { checkTally, type TallyContext, verifyTallyObject, verifyTallyTree } from "../writ/tally.js"
import { type ObjectInput, Received } from "../writ/verify.js"
import { verifyWrit } from "../writ/writ.js"
import { describeFailure, isObject } from "./writ-io.js"

export type Verdict = "valid" | "invalid" | "signed_unauthorized" | "unverifiable"

export interface Report {
  readonly kind: string
  readonly verdict: Verdict
  readonly error?: WritError
  /** Lines worth printing beside the verdict (identity, signer, what was not checked). */
  readonly notes: ReadonlyArray<string>
}

const short = (s: string): string => (s.length > 20 ? `${s.slice(0, 12)}…${s.slice(-6)}` : s)
export const shortKey = (k: unknown): string => (typeof k === "string" ? (k.startsWith("did:key:") ? `${k.slice(0, 14)}…${k.slice(-6)}` : short(k)) : "?")
export const shortId = (s: unknown): string => (typeof s === "string" ? short(s) : "?")

const outcome = <A>(kind: string, eff: Effect.Effect<A, WritError>, notes: (a: A) => ReadonlyArray<string>): Effect.Effect<Report> =>
  Effect.map(Effect.either(eff), (r) =>
    Either.isRight(r)
      ? { kind, verdict: "valid" as const, notes: notes(r.right) }
      : { kind, verdict: "invalid" as const, error: r.left, notes: [] })

/** The context section 6.2 needs, from the call a tally answers. */
export const tallyContext = (call: ObjectInput): Effect.Effect<TallyContext, WritError> =>
  Effect.map(verifyCall(call), (v) => ({ callId: v.call.id, op: v.call.value.op, chain: v.chain }))

/** Section 6.2: the verdict on a tally answering `call`, with its body when there is one. */
export const verifyTallyAgainst = (tally: ObjectInput, call: ObjectInput, res?: Json): Effect.Effect<Report> =>
  Effect.gen(function*() {
    const ctx = yield* Effect.either(tallyContext(call))
    if (Either.isLeft(ctx)) return { kind: "tally", verdict: "unverifiable" as const, error: writError(ctx.left.reason, `call${ctx.left.path ? "." + ctx.left.path : ""}`, `the call given does not verify: ${ctx.left.message}`), notes: [] }
    const r = yield* verifyTallyTree(tally, ctx.right, res === undefined ? undefined : { value: res })
    if (r.verdict === "valid") {
      const t = r.tally.value
      return {
        kind: "tally",
        verdict: "valid" as const,
        notes: [`tally ${r.tally.id}`, `st ${t.st}${t.err ? ` (${t.err.code})` : ""}, op ${t.op}, signed by ${ctx.right.chain[ctx.right.chain.length - 1].value.hld}`]
      }
    }
    return { kind: "tally", verdict: r.verdict, error: r.error, notes: [] }
  })

/** A tally's `st` and `err.code` (a refusal is `failed` with its reason). */
const statusOf = (tally: JsonObject): { readonly st: string; readonly code: string | null } => ({
  st: typeof tally.st === "string" ? tally.st : "?",
  code: isObject(tally.err) && typeof tally.err.code === "string" ? tally.err.code : null
})

/**
 * The verdict on a tally answering `call`, whichever command asks (`writ send`, `writ verify
 * --call`, an answer file): one object, one verdict. A refusal (section 7 steps 3 to 10: `failed`
 * with one of `refusalCodes`) is evidence that its signer refused this call. Section 6.2 does not
 * apply to it in full (a refusal of an expired call has an `acc` past `exp`, one of a chain that
 * does not verify has no valid leaf, one for a missing argument answers a call its leaf does not
 * admit), so it is checked as section 6.1 under the party that received the call (the leaf holder,
 * or `receiver` when given: a `wrong_executor` refusal is signed by a party that is not the leaf
 * holder) and must name this call. Any other tally gets section 6.2 against the call.
 */
export const verifyAnswerTally = (tally: ObjectInput, tallyValue: JsonObject, call: Json, res?: Json, receiver?: string): Effect.Effect<Report> =>
  Effect.gen(function*() {
    const { st, code } = statusOf(tallyValue)
    if (!(st === "failed" && code !== null && refusalCodes.has(code))) return yield* verifyTallyAgainst(tally, call, res)
    const callObject: JsonObject = isObject(call) ? call : {}
    const chain = Array.isArray(callObject.chain) ? callObject.chain : []
    const leaf = chain.length > 0 && isObject(chain[chain.length - 1]) ? (chain[chain.length - 1] as JsonObject) : {}
    const signer = receiver ?? (typeof leaf.hld === "string" ? leaf.hld : "")
    const r = yield* Effect.either(Effect.gen(function*() {
      const t = yield* verifyTallyObject(tally, signer)
      if (t.value.call !== identity(callObject)) return yield* Effect.fail(writError("tally_mismatch", "call", "the refusal answers another call"))
      return t
    }))
    return Either.isRight(r)
      ? {
        kind: "tally",
        verdict: "valid" as const,
        notes: [`tally ${r.right.id}`, `st failed (${code}), a signed refusal checked as section 6.1 under ${signer}, naming this call`]
      }
      : { kind: "tally", verdict: "unverifiable" as const, error: r.left, notes: [] }
  })

/** Any object file: a writ, a chain (array), a call, a tally (with `call` for section 6.2), a
 * revoke, an ack (with `res` its body), or an answer holding a tally. `now` checks expiry. */
export const verifyAny = (
  value: Json,
  bytes: Uint8Array | undefined,
  opts: { readonly call?: Json; readonly res?: Json; readonly now?: number; readonly receiver?: string }
): Effect.Effect<Report> => {
  // The bytes as received when the file is the object itself (section 6.1 step 1 on them).
  const input: ObjectInput = bytes === undefined ? value : new Received(bytes)
  if (Array.isArray(value)) {
    return outcome("chain", Effect.gen(function*() {
      const c = yield* verifyChain(value)
      if (opts.now !== undefined) yield* checkExpiry(c, opts.now)
      return c
    }), (c) => [`chain of ${c.length}, leaf ${c[c.length - 1].id}`, `leaf hld ${c[c.length - 1].value.hld}`, ...(opts.now === undefined ? ["expiry not checked (no --now)"] : [])])
  }
  if (!isObject(value)) return Effect.succeed({ kind: "?", verdict: "invalid", error: writError("malformed", undefined, "not a JSON object or array"), notes: [] })
  // An answer file (section 10): the tally it carries, with its body.
  if (value.typ === undefined && isObject(value.tally)) {
    return verifyAny(value.tally, undefined, { ...opts, ...(value.res !== undefined && opts.res === undefined ? { res: value.res } : {}) })
  }
  switch (value.typ) {
    case "writ":
      return outcome("writ", verifyWrit(input), (w) => [`writ ${w.id}`, `iss ${w.value.iss}`, `hld ${w.value.hld}`, `exp ${w.value.exp}`])
    case "call":
      return outcome("call", verifyCall(input, opts.now === undefined ? {} : { now: opts.now }), (c) => [
        `call ${c.call.id}`,
        `op ${c.call.value.op} from ${c.call.value.from}`,
        ...(opts.now === undefined ? ["expiry not checked (no --now)"] : [])
      ])
    case "tally":
      if (opts.call !== undefined) return verifyAnswerTally(input, value, opts.call, opts.res, opts.receiver)
      return outcome("tally", checkTally(input), (t) => [
        `tally ${t.id}`,
        "signature not checked: section 6.2 needs the call it answers (--call FILE)"
      ])
    case "revoke":
      return outcome("revoke", verifyRevoke(input), (r) => [`revoke ${r.revoke.id} of ${r.revoke.value.writ}`, `iss ${r.revoke.value.iss}`])
    case "ack":
      return outcome("ack", Effect.gen(function*() {
        const a = yield* verifyAck(input)
        if (opts.res !== undefined && a.value.out !== hashOf(opts.res)) {
          return yield* Effect.fail(writError("ack_mismatch", "out", "the body does not hash to out"))
        }
        return a
      }), (a) => [`ack ${a.id} of revoke ${a.value.revoke}`, `iss ${a.value.iss}, rcv ${a.value.rcv}`, ...(opts.res === undefined ? ["body not checked (no --res)"] : [])])
    default:
      return Effect.succeed({ kind: "?", verdict: "invalid", error: writError("wrong_type", "typ", `not a Writ object type: ${JSON.stringify(value.typ ?? null)}`), notes: [] })
  }
}

// ---------------------------------------------------------------------------------------------
// Answers (section 10)

/** The reasons a call is refused with at section 7 steps 3 to 10 (signed, never stored). */
export const refusalCodes: ReadonlySet<string> = new Set([
  "chain_broken", "not_narrowed", "unknown_bound", "expired", "root_not_accepted", "wrong_executor", "revoked",
  "peer_mismatch", "no_standing", "forbidden_op", "missing_arg", "out_of_bounds", "count_exhausted", "total_exhausted"
])

export type CallVerdict =
  | { readonly _tag: "error"; readonly reason: string }
  | {
    readonly _tag: "tally"
    readonly tally: JsonObject
    readonly res: Json | undefined
    readonly verdict: Verdict
    readonly error?: WritError
    /** `st` and `err.code` of the tally (a refusal is `failed` with its reason). */
    readonly st: string
    readonly code: string | null
  }
  | { readonly _tag: "malformed"; readonly message: string }

/** The answer to a call: an unsigned error (section 7 steps 1 and 2), or a tally checked by
 * `verifyAnswerTally`, the one verdict `writ verify --call` gives too. */
export const checkCallAnswer = (call: JsonObject, answer: Json, receiver?: string): Effect.Effect<CallVerdict> =>
  Effect.gen(function*() {
    if (!isObject(answer)) return { _tag: "malformed" as const, message: "the answer is not a JSON object" }
    if (typeof answer.error === "string") return { _tag: "error" as const, reason: answer.error }
    if (!isObject(answer.tally)) return { _tag: "malformed" as const, message: "the answer has neither error nor tally" }
    const tally = answer.tally
    const res = answer.res
    const { st, code } = statusOf(tally)
    const rep = yield* verifyAnswerTally(tally, tally, call, res, receiver)
    return { _tag: "tally" as const, tally, res, verdict: rep.verdict, ...(rep.error ? { error: rep.error } : {}), st, code }
  })

/**
 * Where an answer that is not strict JSON (section 1.1) breaks it: the outermost object holding
 * the fault that the answer embeds as a unit (a signed object, i.e. one with `typ`, or a `res`
 * body), found by strict-reading the answer's members and elements from their own spans, as the
 * conformance runner reads embedded objects one by one. Wrappers (the answer, `fwd[i]`, arrays)
 * are descended; a fault in a wrapper's own members (a repeated `ack`) blames the wrapper ("" is
 * the answer itself). Undefined when the answer cannot be cut into spans (not JSON at all).
 */
export const locateNoncanonical = (bytes: Uint8Array): { readonly path: string; readonly message: string } | undefined => {
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
  const root = scan(text)
  if (root === undefined) return undefined
  const fault = (s: Span) => {
    const r = parseJson(text.slice(s.start, s.end), { maxDepth: 64, integersOnly: true })
    return Either.isLeft(r) ? r.left.message : undefined
  }
  const at = (path: string, step: string) => (path === "" || step.startsWith("[") ? `${path}${step}` : `${path}.${step}`)
  const visit = (s: Span, path: string, name: string): { path: string; message: string } | undefined => {
    const message = fault(s)
    if (message === undefined) return undefined
    const unit = name === "res" || (s.members ?? []).some((m) => m.name === "typ")
    if (!unit) {
      const children = s.members?.map((m) => [m.name, m.span] as const) ?? s.elements?.map((e, i) => [`[${i}]`, e] as const) ?? []
      for (const [step, child] of children) {
        const inner = visit(child, at(path, step), step)
        if (inner !== undefined) return inner
      }
    }
    return { path, message }
  }
  return visit(root, "", "")
}

export interface AckCheck {
  readonly ack: JsonObject
  readonly res: Json
  readonly iss: string
  readonly ok: boolean
  readonly error?: WritError
}

export interface RevokeVerdict {
  readonly _tag: "revoke"
  readonly error?: string
  readonly own?: AckCheck
  readonly fwd: ReadonlyArray<AckCheck>
  readonly tallies: ReadonlyArray<{ readonly tally: JsonObject; readonly ok: boolean; readonly error?: WritError }>
}

/** Section 9.4 steps 2 to 4 for one ack and its body against the revoke sent. */
export const checkAckFor = (revoke: JsonObject, ack: Json, res: Json): Effect.Effect<AckCheck> =>
  Effect.gen(function*() {
    const r = yield* Effect.either(Effect.gen(function*() {
      const a = yield* verifyAck(ack, "ack")
      if (a.value.revoke !== identity(revoke)) return yield* Effect.fail(writError("ack_mismatch", "ack.revoke", "the ack names another revoke"))
      if (a.value.out !== hashOf(res)) return yield* Effect.fail(writError("ack_mismatch", "ack.out", "the body does not hash to out"))
      if (!isObject(res) || !Array.isArray(res.held) || !Array.isArray(res.open)) return yield* Effect.fail(writError("malformed", "res", "an ack body has arrays held and open"))
      return a
    }))
    const iss = isObject(ack) && typeof ack.iss === "string" ? ack.iss : "?"
    return Either.isRight(r)
      ? { ack: ack as JsonObject, res, iss, ok: true }
      : { ack: (isObject(ack) ? ack : {}) as JsonObject, res, iss, ok: false, error: r.left }
  })

/** The answer to a revoke (section 10): its own ack, the relayed acks in `fwd`, and its tallies,
 * each signed by the ack's signer (the executor, section 6.1). */
export const checkRevokeAnswer = (revoke: JsonObject, answer: Json): Effect.Effect<RevokeVerdict> =>
  Effect.gen(function*() {
    if (!isObject(answer)) return { _tag: "revoke" as const, error: "malformed: not a JSON object", fwd: [], tallies: [] }
    if (typeof answer.error === "string") return { _tag: "revoke" as const, error: answer.error, fwd: [], tallies: [] }
    const own = yield* checkAckFor(revoke, answer.ack ?? null, answer.res ?? null)
    const fwd: Array<AckCheck> = []
    for (const f of Array.isArray(answer.fwd) ? answer.fwd : []) {
      fwd.push(yield* checkAckFor(revoke, isObject(f) ? f.ack ?? null : null, isObject(f) ? f.res ?? null : null))
    }
    const tallies: Array<{ tally: JsonObject; ok: boolean; error?: WritError }> = []
    for (const t of Array.isArray(answer.tallies) ? answer.tallies : []) {
      const r = yield* Effect.either(verifyTallyObject(t, own.iss))
      tallies.push(Either.isRight(r) ? { tally: t as JsonObject, ok: true } : { tally: (isObject(t) ? t : {}) as JsonObject, ok: false, error: r.left })
    }
    return { _tag: "revoke" as const, own, fwd, tallies }
  })

// ---------------------------------------------------------------------------------------------
// Drawing a tally tree

const usedText = (u: unknown): string =>
  isObject(u) && Object.keys(u).length > 0 ? Object.entries(u).map(([k, v]) => `${k} ${String(v)}`).join(", ") : "nothing"

/**
 * A tally tree as indented lines, one hop per line: its signer, op, st (with `err.code`), used,
 * and the check result of that hop: section 6.1 under the holder of the writ it names (the leaf
 * holder at the top when the call is known; the matching `wrt` writ's holder below), and, at the
 * top, the section 6.2 verdict for the whole tree with the path of its first failure.
 */
export const drawTreeChecked = (tally: Json, call?: Json, res?: Json): Effect.Effect<{ readonly lines: ReadonlyArray<string>; readonly verdict: Verdict | "unchecked" }> =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    let verdict: Verdict | "unchecked" = "unchecked"
    let failurePath: string | undefined
    let topSigner: string | undefined
    const refusal = isObject(tally) && ((t) => t.st === "failed" && t.code !== null && refusalCodes.has(t.code))(statusOf(tally))
    if (call !== undefined && isObject(call) && refusal) {
      // A signed refusal: the verdict `writ send` and `writ verify --call` give it (verifyAnswerTally).
      const chain = Array.isArray(call.chain) ? call.chain : []
      const leaf = chain.length > 0 ? chain[chain.length - 1] : undefined
      topSigner = isObject(leaf) && typeof leaf.hld === "string" ? leaf.hld : undefined
      const rep = yield* verifyAnswerTally(tally, tally as JsonObject, call, res)
      verdict = rep.verdict
      if (rep.error === undefined) lines.push("tree: valid (a signed refusal: section 6.1 under the receiver, naming this call)")
      else {
        lines.push(`tree: ${rep.verdict}: ${describeFailure(rep.error)}`)
        failurePath = rep.error.path ?? ""
      }
    } else if (call !== undefined && isObject(call)) {
      const ctx = yield* Effect.either(tallyContext(call))
      if (Either.isRight(ctx)) {
        topSigner = ctx.right.chain[ctx.right.chain.length - 1].value.hld
        const r = yield* verifyTallyTree(tally, ctx.right, res === undefined ? undefined : { value: res })
        verdict = r.verdict
        lines.push(r.verdict === "valid" ? "tree: valid (section 6.2)" : `tree: ${r.verdict}: ${describeFailure(r.error)}`)
        if (r.verdict !== "valid") failurePath = r.error.path ?? ""
      } else {
        verdict = "unverifiable"
        lines.push(`tree: not checked, the call does not verify: ${describeFailure(ctx.left)}`)
      }
    } else lines.push("tree: not checked (give --call to apply section 6.2)")
    const visit = (t: Json, signer: string | undefined, path: string, indent: string, last: boolean, top: boolean): Effect.Effect<void> =>
      Effect.gen(function*() {
        const o = isObject(t) ? t : {}
        let check: string
        if (signer === undefined) check = "signature not checked"
        else {
          const r = yield* Effect.either(verifyTallyObject(t, signer))
          check = Either.isRight(r) ? "signature ok" : `unverifiable: ${describeFailure(r.left)}`
        }
        const here = path === "" ? "" : path
        // The first failure belongs to the deepest hop whose path prefixes it: this one, unless
        // it lies inside one of this hop's sub-tallies.
        const within = (p: string, node: string) => node === "" || p === node || p.startsWith(node + ".")
        const childPath = (i: number) => `${here === "" ? "" : here + "."}sub[${i}]`
        if (failurePath !== undefined && within(failurePath, here) &&
          !(Array.isArray(o.sub) && o.sub.some((_: Json, i: number) => within(failurePath!, childPath(i))))) {
          check += `; fails here: ${failurePath}`
        }
        const err = isObject(o.err) && typeof o.err.code === "string" ? ` (${o.err.code})` : ""
        const branch = top ? "" : last ? "└─ " : "├─ "
        const wrtCount = Array.isArray(o.wrt) ? o.wrt.length : 0
        lines.push(
          `${indent}${branch}${String(o.op ?? "?")}  st ${String(o.st ?? "?")}${err}  used ${usedText(o.used)}  signer ${shortKey(signer ?? "unknown")}  [${check}]`
        )
        const childIndent = top ? "   " : indent + (last ? "   " : "│  ")
        lines.push(`${childIndent}tally ${shortId(identity(o))} writ ${shortId(o.writ)} acc ${String(o.acc ?? "?")}${o.rev && isObject(o.rev) ? ` rev.until ${String(o.rev.until)}` : ""}${wrtCount ? ` wrt ${wrtCount}` : ""}`)
        const wrt = Array.isArray(o.wrt) ? o.wrt.filter(isObject) : []
        const sub = Array.isArray(o.sub) ? o.sub : []
        for (let i = 0; i < sub.length; i++) {
          const s = sub[i]
          const named = isObject(s) ? wrt.find((w) => identity(w) === s.writ) : undefined
          const subSigner = named !== undefined && typeof named.hld === "string" ? named.hld : undefined
          yield* visit(s, subSigner, `${here === "" ? "" : here + "."}sub[${i}]`, childIndent, i === sub.length - 1, false)
        }
      })
    yield* visit(tally, topSigner, "", "", true, true)
    return { lines, verdict }
  })

/** The tree's lines only. */
export const drawTree = (tally: Json, call?: Json, res?: Json): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(drawTreeChecked(tally, call, res), (d) => d.lines)
