// A tally tree as the console draws it (Writ sections 6.2 and 4): each hop with its op, st, used,
// signer, and the section 6.2 verdict of the subtree it heads; the hop where the whole tree first
// fails, marked with its reason; and under each hop the chain of writs it ran under, bound by
// bound, root first, so what each delegation took away reads across one row.
//
// The verdict of a sub-hop S is section 6.2 applied to S alone, as the party that made the sub-call
// would apply it: S answers the call it names (steps 2 and 4 hold by construction: the sub-call
// itself is not in the tally) under the chain down to the writ X in its parent's `wrt` that S names.
// The verdict of the whole tree is section 6.2 for the top tally against the call given.
import { Effect } from "effect"
import { isJsonObject, type Json, type JsonObject } from "../kernel/json.js"
import { verifyCall } from "../writ/call.js"
import type { WritError } from "../writ/reason.js"
import { identity } from "../writ/sign.js"
import { checkTally, type TallyContext, verifyTallyTree } from "../writ/tally.js"
import { type CheckedWrit, verifyWrit } from "../writ/writ.js"
import type { HopView, NarrowingRow, TreeView, WritView } from "./api.js"
import { consoleError, type ConsoleError } from "./reason.js"

type Verdict = TreeView["verdict"]

const boundText = (b: unknown): string => {
  if (!isJsonObject(b)) return JSON.stringify(b)
  const v = b.v
  switch (b.t) {
    case "max": return `at most ${String(v)}`
    case "count": return `${String(v)} use${v === 1 ? "" : "s"}`
    case "total": return `${String(v)} in total`
    case "prefix": return `under ${JSON.stringify(v)}`
    case "set": return `one of ${Array.isArray(v) ? v.map((x) => JSON.stringify(x)).join(", ") : JSON.stringify(v)}`
    case "window": return Array.isArray(v) ? `${String(v[0])} to ${String(v[1])}` : JSON.stringify(v)
    default: return JSON.stringify(b)
  }
}

export const writView = (w: CheckedWrit): WritView => ({
  id: w.id,
  iss: w.value.iss,
  hld: w.value.hld,
  exp: w.value.exp,
  bounds: Object.keys(w.value.bnd).sort().map((name) => ({ name, text: boundText(w.value.bnd[name]) }))
})

/** Section 4, shown: every bound name of the chain, its text under each writ, and where it changed. */
export const narrowing = (chain: ReadonlyArray<WritView>): ReadonlyArray<NarrowingRow> => {
  const names = [...new Set(chain.flatMap((w) => w.bounds.map((b) => b.name)))].sort()
  return names.map((name) => {
    const values = chain.map((w) => w.bounds.find((b) => b.name === name)?.text ?? null)
    const narrowedAt = values.flatMap((v, i) => (i > 0 && v !== values[i - 1] ? [i] : []))
    return { name, values, narrowedAt }
  })
}

const usedOf = (t: JsonObject): HopView["used"] =>
  isJsonObject(t.used) ? Object.keys(t.used).sort().map((name) => ({ name, amount: Number((t.used as JsonObject)[name]) })) : []

interface Checked { readonly verdict: Verdict; readonly error: WritError | null }

/** Section 6.2 for `tally` under `ctx`, as data (the failure is the verdict, not an error). */
const verdictOf = (tally: Json, ctx: TallyContext, res?: Json): Effect.Effect<Checked> =>
  Effect.map(verifyTallyTree(tally, ctx, res === undefined ? undefined : { value: res }), (r) =>
    r.verdict === "valid" ? { verdict: "valid" as const, error: null } : { verdict: r.verdict, error: r.error })

/** The deepest hop whose path prefixes the failure's path owns it. */
const within = (p: string, node: string) => node === "" || p === node || p.startsWith(node + ".")

const hop = (
  t: Json,
  path: string,
  chain: ReadonlyArray<CheckedWrit> | null,
  checked: Checked,
  failure: string | null
): Effect.Effect<HopView> =>
  Effect.gen(function*() {
    const o = isJsonObject(t) ? t : {}
    const wrt = Array.isArray(o.wrt) ? o.wrt : []
    const sub = Array.isArray(o.sub) ? o.sub : []
    const at = (step: string) => (path === "" ? step : `${path}.${step}`)
    const subs: Array<HopView> = []
    for (let i = 0; i < sub.length; i++) {
      const s = sub[i]
      const so = isJsonObject(s) ? s : {}
      // The writ X of the parent's wrt that S names, verified (section 6.2 step 9).
      const named = wrt.find((w) => isJsonObject(w) && identity(w) === so.writ)
      const x = named === undefined ? null : yield* verifyWrit(named).pipe(Effect.catchTag("WritError", () => Effect.succeed(null)))
      const subChain = x === null ? null : [...(chain ?? []), x]
      const subChecked: Checked = subChain === null
        ? { verdict: "unverifiable", error: null }
        : yield* verdictOf(s, { callId: String(so.call ?? ""), op: String(so.op ?? ""), chain: subChain })
      subs.push(yield* hop(s, at(`sub[${i}]`), subChain, subChecked, failure))
    }
    const failsHere = failure !== null && within(failure, path) && !subs.some((h) => within(failure, h.path))
    const views = (chain ?? []).map(writView)
    const err = isJsonObject(o.err) && typeof o.err.code === "string" ? o.err.code : null
    return {
      path,
      op: String(o.op ?? "?"),
      st: String(o.st ?? "?"),
      err,
      used: usedOf(o),
      signer: chain === null || chain.length === 0 ? null : chain[chain.length - 1].value.hld,
      verdict: checked.verdict,
      reason: checked.error?.reason ?? (checked.verdict === "unverifiable" && chain === null ? "sub_unmatched" : null),
      detail: checked.error === null ? null : `${checked.error.path ? `${checked.error.path}: ` : ""}${checked.error.message}`,
      failsHere,
      tally: identity(o),
      writ: String(o.writ ?? "?"),
      acc: typeof o.acc === "number" ? o.acc : 0,
      chain: views,
      narrowing: narrowing(views),
      sub: subs
    }
  })

/** An answer file (section 10) holds its tally under `tally` and its body under `res`. */
const unwrap = (value: Json): { readonly tally: JsonObject; readonly res: Json | undefined } | null => {
  if (!isJsonObject(value)) return null
  if (value.typ === "tally") return { tally: value, res: undefined }
  if (value.typ === undefined && isJsonObject(value.tally) && value.tally.typ === "tally") return { tally: value.tally, res: value.res }
  return null
}

/** The tree view of a tally (or answer) `value`, checked by section 6.2 against `call` when given. */
export const treeView: (source: string, value: Json, call: Json | undefined) => Effect.Effect<TreeView, ConsoleError> = Effect.fn("console.treeView")(
  function*(source: string, value: Json, call: Json | undefined) {
    const u = unwrap(value)
    if (u === null) return yield* Effect.fail(consoleError("console/wrong_type", "not a tally, nor an answer holding one", source))
    if (call === undefined) {
      // Without the call, section 6.2 cannot run: only the tally's own shape (section 6.1 steps
      // before the signature) is checked at the top.
      const shape = yield* checkTally(u.tally).pipe(Effect.as(null), Effect.catchTag("WritError", (e) => Effect.succeed(e)))
      const root = yield* hop(u.tally, "", null, { verdict: shape === null ? "unchecked" : "unverifiable", error: shape }, shape === null ? null : "")
      return { source, verdict: shape === null ? "unchecked" as const : "unverifiable" as const, reason: shape?.reason ?? null, path: shape?.path ?? null, detail: shape?.message ?? null, root }
    }
    const ctx = yield* verifyCall(call).pipe(
      Effect.map((v): TallyContext => ({ callId: v.call.id, op: v.call.value.op, chain: v.chain })),
      Effect.catchTag("WritError", (e) => Effect.fail(consoleError("console/wrong_type", `the call does not verify: ${e.reason}: ${e.message}`, "call")))
    )
    const checked = yield* verdictOf(u.tally, ctx, u.res)
    const failure = checked.error === null ? null : (checked.error.path ?? "")
    const root = yield* hop(u.tally, "", ctx.chain, checked, failure)
    return {
      source,
      verdict: checked.verdict,
      reason: checked.error?.reason ?? null,
      path: checked.error?.path ?? null,
      detail: checked.error?.message ?? null,
      root
    }
  })
