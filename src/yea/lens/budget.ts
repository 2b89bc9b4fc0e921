/**
 * Budget fitting (SPEC §8, reference algorithm): while `est(lens(reply)) > budget`, elide the
 * largest candidate by serialized size among the *deep roots* — anything inside `ANSWER.data`, a
 * proposal's `data` and `RECEIPT.receipt.result` — halving a non-empty array (keeping its first
 * items) or cutting a string over 200 characters to `max(200, floor(len/2))` characters plus `…`.
 * Only when no deep candidate remains is the largest *list root* (`PROPOSALS.proposals`,
 * `BRIEF.capabilities`) halved, dropping whole trailing entries. Nothing else is ever touched: a
 * proposal other than its `data`, and every capability entry, reach the model exactly as sent
 * (design.md, "Elision safety").
 *
 * Each elided value gets one `More` entry `{handle, path, remaining, est}`; halving the same value
 * again updates its entry (same handle) rather than adding one. The remainders are returned beside
 * the fitted reply so that the caller can keep them for `EXPAND` (expand.ts).
 *
 * Handles come from the caller: {@link fitReply} takes a function, {@link fitReplyEffect} draws
 * them from the kernel `RandomBytes` service. The core is a generator that asks for a handle each time
 * it opens a new `More` entry, so both drivers share one algorithm.
 */
import { Effect } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import { RandomBytes } from "../../kernel/services.js"
import { est } from "./estimate.js"
import { lensReply } from "./reply.js"
import { type Obj, get, has, isObject, lensValue } from "./value.js"

/** Strings longer than this (in code points) may be cut; a cut string keeps at least this many. */
export const STRING_KEEP = 200
/** SPEC §3: the budget when a request names none. */
export const DEFAULT_BUDGET = 2000

export interface More {
  readonly handle: string
  readonly path: string
  readonly remaining: number
  readonly est: number
}

/** What an `EXPAND` of a handle returns: the elided items of an array, or the rest of a string. */
export type Elided =
  | {
      readonly handle: string
      readonly path: string
      readonly kind: "items"
      readonly items: ReadonlyArray<unknown>
      /** Items of a list root (proposals, capabilities): an EXPAND slice may only drop whole ones. */
      readonly whole: boolean
    }
  | { readonly handle: string; readonly path: string; readonly kind: "text"; readonly text: string }

export interface Fitted {
  /** A copy of the reply, elided to fit, with its `more` entries. The input is never mutated. */
  readonly reply: Obj
  /** The remainder behind each new handle. */
  readonly elided: ReadonlyArray<Elided>
}

type Seg = string | number
type Path = ReadonlyArray<Seg>

/** A deep copy that keeps every own key (including `__proto__` from JSON.parse) as data. */
export const cloneJson = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(cloneJson)
  if (isObject(v)) {
    const o: Record<string, unknown> = {}
    for (const k of Object.keys(v)) define(o, k, cloneJson(v[k]))
    return o
  }
  return v
}

const define = (o: Record<string, unknown>, k: string, v: unknown): void => {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
}

const at = (root: unknown, path: Path): unknown => {
  let v = root
  for (const s of path) v = typeof s === "number" ? (Array.isArray(v) ? v[s] : undefined) : get(v, s)
  return v
}

const setAt = (root: unknown, path: Path, value: unknown): void => {
  const parent = at(root, path.slice(0, -1))
  const last = path[path.length - 1]
  if (typeof last === "number" && Array.isArray(parent)) parent[last] = value
  else if (typeof last === "string" && isObject(parent)) define(parent as Record<string, unknown>, last, value)
}

const codePoints = (s: string): Array<string> => Array.from(s)
const size = (v: unknown): number => (JSON.stringify(v) ?? "").length

export interface FitOptions {
  /**
   * The reply is an EXPAND slice of a list root's items (`data.items`): those are proposals or
   * capabilities, which must reach the model unaltered, so the slice may only drop whole trailing
   * items, never elide inside one.
   */
  readonly wholeItems?: boolean
}

/** The deep roots of a reply (§8): where anything may be elided. */
export const deepRoots = (reply: unknown, options: FitOptions = {}): ReadonlyArray<Path> => {
  if (options.wholeItems === true) return []
  const kind = get(reply, "kind")
  if (kind === "ANSWER" && isObject(reply) && has(reply, "data")) return [["data"]]
  if (kind === "RECEIPT") {
    const r = get(reply, "receipt")
    return isObject(r) && has(r, "result") ? [["receipt", "result"]] : []
  }
  if (kind === "PROPOSALS") {
    const ps = get(reply, "proposals")
    if (!Array.isArray(ps)) return []
    const roots: Array<Path> = []
    ps.forEach((p, i) => {
      if (isObject(p) && has(p, "data")) roots.push(["proposals", i, "data"])
    })
    return roots
  }
  return []
}

/** The list roots of a reply (§8): whole trailing entries may be dropped, nothing else. */
export const listRoots = (reply: unknown, options: FitOptions = {}): ReadonlyArray<Path> => {
  if (options.wholeItems === true) return [["data", "items"]]
  const kind = get(reply, "kind")
  if (kind === "PROPOSALS") return [["proposals"]]
  if (kind === "BRIEF") return [["capabilities"]]
  return []
}

interface Rec {
  readonly handle: string
  readonly path: Path
  readonly key: string
  readonly original: ReadonlyArray<unknown> | ReadonlyArray<string> // items, or code points
  readonly kind: "items" | "text"
  kept: number
  entry: More
}

interface Candidate {
  readonly path: Path
  readonly kind: "items" | "text"
  readonly size: number
}

const pathKey = (p: Path): string => JSON.stringify(p)
const isListRoot = (p: Path, options: FitOptions): boolean => {
  const k = pathKey(p)
  return options.wholeItems === true
    ? k === pathKey(["data", "items"])
    : k === pathKey(["proposals"]) || k === pathKey(["capabilities"])
}
const dotted = (p: Path): string => p.join(".")

/** Pre-order walk of a deep root collecting every array with items and every string still over 200 code points. */
const collect = (v: unknown, path: Path, recs: ReadonlyMap<string, Rec>, out: Array<Candidate>): void => {
  if (Array.isArray(v)) {
    if (v.length > 0) out.push({ path, kind: "items", size: size(v) })
    v.forEach((e, i) => collect(e, [...path, i], recs, out))
  } else if (isObject(v)) {
    for (const k of Object.keys(v)) collect(v[k], [...path, k], recs, out)
  } else if (typeof v === "string") {
    const r = recs.get(pathKey(path))
    const len = r !== undefined ? r.kept : codePoints(v).length
    if (len > STRING_KEEP) out.push({ path, kind: "text", size: size(v) })
  }
}

/** The largest candidate (first in document order on a tie), or undefined. */
const largest = (cs: ReadonlyArray<Candidate>): Candidate | undefined =>
  cs.reduce<Candidate | undefined>((best, c) => (best === undefined || c.size > best.size ? c : best), undefined)

/** Everything still elidable in `work`: deep candidates first, list roots only when there are none. */
const nextCandidate = (work: unknown, recs: ReadonlyMap<string, Rec>, options: FitOptions): Candidate | undefined => {
  const deep: Array<Candidate> = []
  for (const root of deepRoots(work, options)) collect(at(work, root), root, recs, deep)
  const d = largest(deep)
  if (d !== undefined) return d
  const lists: Array<Candidate> = []
  for (const root of listRoots(work, options)) {
    const v = at(work, root)
    if (Array.isArray(v) && v.length > 0) lists.push({ path: root, kind: "items", size: size(v) })
  }
  return largest(lists)
}

/** Est of what `EXPAND` of the remainder would show (an ANSWER whose data is `{items}` or `{text}`). */
const remainderEst = (kind: "items" | "text", rest: unknown): number =>
  est(lensValue(kind === "items" ? { items: rest } : { text: rest }))

const isInside = (inner: Path, outer: Path, fromIndex: number): boolean =>
  inner.length > outer.length &&
  outer.every((s, i) => inner[i] === s) &&
  typeof inner[outer.length] === "number" &&
  (inner[outer.length] as number) >= fromIndex

/** The fitting algorithm; yields whenever it needs a fresh handle and receives it. */
export function* fitSteps(reply: unknown, budget: number, options: FitOptions = {}): Generator<void, Fitted, string> {
  const work = cloneJson(isObject(reply) ? reply : {}) as Record<string, unknown>
  const existing = get(work, "more")
  const more: Array<More> = Array.isArray(existing) ? (existing as Array<More>) : []
  const recs = new Map<string, Rec>()
  const withMore = (): Record<string, unknown> => {
    // A malformed `more` the reply came with is left alone unless entries must be added.
    if (more.length > 0 || Array.isArray(existing)) define(work, "more", more)
    return work
  }
  for (;;) {
    if (est(lensReply(withMore())) <= budget) break
    const c = nextCandidate(work, recs, options)
    if (c === undefined) break // nothing left to elide
    const key = pathKey(c.path)
    let rec = recs.get(key)
    if (rec === undefined) {
      // Remainders come from the input reply, where nothing has been elided: indices of kept
      // items never move (only tails are dropped), so the same path names the same value.
      const source = at(reply, c.path)
      const original: ReadonlyArray<unknown> = c.kind === "items" ? (source as ReadonlyArray<unknown>) : codePoints(source as string)
      const handle: string = yield
      rec = {
        handle,
        path: c.path,
        key,
        original,
        kind: c.kind,
        kept: original.length,
        entry: { handle, path: dotted(c.path), remaining: 0, est: 0 }
      }
      recs.set(key, rec)
      more.push(rec.entry)
    }
    const current = at(work, c.path)
    if (c.kind === "items") {
      rec.kept = Math.floor((current as ReadonlyArray<unknown>).length / 2)
      setAt(work, c.path, (current as ReadonlyArray<unknown>).slice(0, rec.kept))
      // Handles inside dropped items are gone with them.
      for (const [k, r] of recs) {
        if (isInside(r.path, c.path, rec.kept)) {
          recs.delete(k)
          more.splice(more.indexOf(r.entry), 1)
        }
      }
    } else {
      rec.kept = Math.max(STRING_KEEP, Math.floor(rec.kept / 2))
      setAt(work, c.path, (rec.original as ReadonlyArray<string>).slice(0, rec.kept).join("") + "…")
    }
    const rest = rec.kind === "items" ? rec.original.slice(rec.kept) : (rec.original as ReadonlyArray<string>).slice(rec.kept).join("")
    const entry: More = { handle: rec.handle, path: rec.entry.path, remaining: rec.original.length - rec.kept, est: remainderEst(rec.kind, rest) }
    more[more.indexOf(rec.entry)] = entry
    rec.entry = entry
  }
  const elided: Array<Elided> = []
  for (const r of recs.values()) {
    elided.push(
      r.kind === "items"
        ? { handle: r.handle, path: r.entry.path, kind: "items", items: r.original.slice(r.kept), whole: isListRoot(r.path, options) }
        : { handle: r.handle, path: r.entry.path, kind: "text", text: (r.original as ReadonlyArray<string>).slice(r.kept).join("") }
    )
  }
  return { reply: withMore(), elided }
}

/** Drive {@link fitSteps} with handles from a synchronous source (tests, deterministic corpora). */
export const fitReply = (reply: unknown, budget: number, nextHandle: () => string, options: FitOptions = {}): Fitted => {
  const steps = fitSteps(reply, budget, options)
  let r = steps.next()
  while (!r.done) r = steps.next(nextHandle())
  return r.value
}

/** A fresh handle: `h_` and 72 random bits in base64url (12 characters). */
export const randomHandle: Effect.Effect<string, never, RandomBytes> = Effect.flatMap(RandomBytes, (random) =>
  Effect.map(random.bytes(9), (b) => "h_" + encodeBase64url(b))
)

/** {@link fitReply} with handles drawn from the `RandomBytes` service. */
export const fitReplyEffect = (reply: unknown, budget: number, options: FitOptions = {}): Effect.Effect<Fitted, never, RandomBytes> =>
  Effect.gen(function* () {
    const steps = fitSteps(reply, budget, options)
    let r = steps.next()
    while (!r.done) r = steps.next(yield* randomHandle)
    return r.value
  })
