// The budgets-and-ledger view: everything it shows is computed by the ledger's own functions over
// the ledger's lines (src/ledger: `verifyLedger` for the hash chain, `stats` for the grouping
// `mandate ledger stats` prints, `replay` for `mandate ledger replay`), plus two groupings of the
// same lines: decisions by reason code, and each limit the guard drew on (from the reservation
// lines) with what its store says is used. Spend is src/console/spend.ts; the lines themselves are
// read a page at a time (`linesPage`).
import { Effect, Layer, Stream } from "effect"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { type LedgerError, type LedgerEvent, type LedgerStore, type Policy, readLedger, replay, stats, verifyLedger } from "../ledger/index.js"
import { fromNanos } from "../ledger/usd.js"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../kernel/json.js"
import type { LedgerLine, LedgerLines, LedgerView, LimitView, ReplayView } from "./api.js"
import { consoleError, type ConsoleError } from "./reason.js"

/** Decisions by reason and the limits drawn on, over one pass of the lines. */
const groupings = <E>(events: Stream.Stream<LedgerEvent, E>) =>
  Effect.gen(function*() {
    const decisions = new Map<string, number>()
    const limits = new Map<string, string>()
    const decided = (protocol: string, reason: string) => {
      const k = JSON.stringify([protocol, reason])
      decisions.set(k, (decisions.get(k) ?? 0) + 1)
    }
    yield* Stream.runForEach(events, (e) => Effect.sync(() => {
      switch (e.type) {
        case "decision":
          return decided("ledger", e.decision.reason)
        case "reservation":
          for (const d of e.draws) limits.set(d.key, d.limit)
          return
        case "protocol":
          return decided(e.decision.protocol, e.decision.reason ?? e.decision.kind)
        default:
          return
      }
    }))
    const byReason = [...decisions.entries()].map(([k, count]) => {
      const [protocol, reason] = JSON.parse(k) as Array<string>
      return { protocol, reason, count }
    }).sort((a, b) => b.count - a.count || a.protocol.localeCompare(b.protocol) || a.reason.localeCompare(b.reason))
    return { byReason, limits }
  })

export interface LedgerSources {
  readonly name: string
  readonly store: LedgerStore["Type"]
  /** What the ledger's store says is used of a limit key (Reservations' usage, read-only). */
  readonly used: (key: string) => Effect.Effect<bigint, StoreError>
  readonly policy?: { readonly file: string; readonly policy: Policy }
  /** Fresh in-memory stores for a replay (src/store/memory), so it never touches the recorded budgets. */
  readonly memory: Layer.Layer<Reservations | Atomic | LedgerStore>
  /** The stored lines after `after` (by seq), at most `limit`: one keyset page, never the whole ledger. */
  readonly page: (after: number, limit: number) => Effect.Effect<ReadonlyArray<{ readonly seq: number; readonly line: string }>, ConsoleError>
}

const failed = (where: string) => (e: { readonly _tag: string; readonly message: string }) =>
  consoleError("console/store_unavailable", `${e._tag}: ${e.message.slice(0, 300)}`, where)

export const ledgerView = Effect.fn("console.ledgerView")(function*(src: LedgerSources) {
  const lines = src.store.lines
  // The hash chain (`mandate ledger verify`): a broken chain is the verdict shown, not a failure.
  const chain = yield* Effect.flatMap(src.store.head, (head) => verifyLedger(lines, head)).pipe(
    Effect.map((v): LedgerView["chain"] => ({ ok: true, lines: v.lines, head: v.head.hash, reason: null, detail: null })),
    Effect.catchTag("LedgerError", (e) => Effect.succeed<LedgerView["chain"]>({ ok: false, lines: 0, head: null, reason: e.reason, detail: `${e.path ? `${e.path}: ` : ""}${e.detail}` })),
    Effect.mapError(failed(src.name))
  )
  // The rest reads the lines through the same strict reader; a broken chain stops it, so the
  // views are empty then (the chain verdict says why).
  const readable = <A>(eff: Effect.Effect<A, StoreError | LedgerError>, empty: A) =>
    chain.ok ? eff.pipe(Effect.mapError(failed(src.name))) : Effect.succeed(empty)
  const s = yield* readable(stats(readLedger(lines)), { rows: [], protocols: {}, summary: "" })
  const g = yield* readable(groupings(readLedger(lines)), { byReason: [], limits: new Map<string, string>() })
  const limits: Array<LimitView> = []
  for (const [key, limit] of [...g.limits.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const used = yield* src.used(key).pipe(Effect.mapError(failed(key)))
    const remaining = BigInt(limit) - used
    const left = remaining < 0n ? 0n : remaining
    // USD limits are kept in nano-dollars (src/ledger/usd.ts): shown in dollars.
    const usd = key.split("/")[2] === "usd"
    const show = (n: bigint) => (usd ? fromNanos(n) : n.toString())
    limits.push({ key, unit: usd ? "USD" : "tokens", limit: show(BigInt(limit)), used: show(used), remaining: show(left) })
  }
  let replayed: ReplayView | null = null
  if (src.policy !== undefined && chain.ok) {
    const r = yield* replay(readLedger(lines), src.policy.policy, src.memory).pipe(Effect.mapError(failed("replay")))
    replayed = {
      policy: src.policy.file,
      actions: r.actions,
      unchanged: r.unchanged,
      newly_denied: { ...r.newly_denied },
      newly_allowed: { ...r.newly_allowed },
      by_reason: Object.entries(r.by_reason).map(([reason, x]) => ({ reason, count: x.count, tokens: x.tokens, usd: x.usd })),
      note: r.note
    }
  }
  const view: LedgerView = {
    ledger: src.name,
    chain,
    stats: { rows: s.rows, summary: s.summary },
    limits,
    decisions: g.byReason,
    replay: replayed
  }
  return view
})

const text = (v: Json | undefined): string | null => (typeof v === "string" ? v : typeof v === "number" ? String(v) : null)

/** One stored line as a row of the lines table: what it is, whose, and what it says in a few words. */
const lineRow = (seq: number, line: string): LedgerLine => {
  const parsed = parseJson(line, { maxDepth: 64, integersOnly: false })
  const o = parsed._tag === "Right" && isJsonObject(parsed.right) ? parsed.right : {}
  const type = text(o.type) ?? "?"
  const at = text(o.at) ?? ""
  const sub = (k: string) => (isJsonObject(o[k]) ? o[k] as JsonObject : {})
  switch (type) {
    case "action": {
      const a = sub("action")
      return { seq, at, type, principal: text(a.principal), summary: `${text(a.kind) ?? "?"} ${text(a.id) ?? ""}`.trim() }
    }
    case "decision": {
      const d = sub("decision")
      const reason = text(d.reason)
      return { seq, at, type, principal: null, summary: `${d.allowed === true ? "allowed" : "refused"} ${text(d.action_id) ?? ""}${reason !== null && reason !== "allowed" ? `: ${reason}` : ""}` }
    }
    case "reservation": {
      // USD limits are kept in nano-dollars (src/ledger/usd.ts): shown in dollars.
      const amount = (key: string, v: string | null) => (v === null ? "?" : key.split("/")[2] === "usd" && /^[0-9]+$/.test(v) ? `${fromNanos(BigInt(v))} USD` : v)
      const draws = Array.isArray(o.draws) ? o.draws.flatMap((d) => {
        if (!isJsonObject(d)) return []
        const key = text(d.key) ?? "?"
        return [`${amount(key, text(d.amount))} of ${amount(key, text(d.limit))} on ${key}`]
      }) : []
      return { seq, at, type, principal: null, summary: `${text(o.action_id) ?? ""} reserves ${draws.join(", ")}` }
    }
    case "settlement":
      return { seq, at, type, principal: null, summary: `${text(o.state) ?? "?"}: ${text(o.kept_tokens) ?? "0"} tokens, ${text(o.kept_usd) ?? "0"} USD kept` }
    case "protocol": {
      const d = sub("decision")
      const amounts = Array.isArray(d.amounts) ? d.amounts.flatMap((a) => (isJsonObject(a) ? [`${text(a.amount) ?? "?"} ${text(a.name) ?? "?"}`] : [])) : []
      return {
        seq, at, type, principal: text(d.principal),
        summary: [`${text(d.protocol) ?? "?"} ${text(d.kind) ?? "?"}`, text(d.operation), text(d.reason), amounts.join(", ")].filter((x) => x !== null && x !== "").join(" · ")
      }
    }
    default:
      return { seq, at, type, principal: null, summary: "" }
  }
}

/** One page of the ledger's lines (keyset by seq): what the lines table shows, a page at a time. */
export const linesPage = Effect.fn("console.ledgerLines")(function*(src: LedgerSources, after: number, limit: number) {
  const rows = yield* src.page(after, limit + 1)
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  const view: LedgerLines = { lines: page.map((r) => lineRow(r.seq, r.line)), next: rows.length > limit && last !== undefined ? String(last.seq) : null }
  return view
})
