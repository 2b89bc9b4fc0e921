// The budgets-and-ledger view: everything it shows is computed by the ledger's own functions over
// the ledger's lines (src/ledger: `verifyLedger` for the hash chain, `stats` for the grouping
// `mandate ledger stats` prints, `replay` for `mandate ledger replay`), plus three groupings of the
// same lines: spend by hour, protocol, principal and action kind; decisions by reason code; and
// each limit the guard drew on (from the reservation lines) with what its store says is used.
import { Effect, Layer, Stream } from "effect"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import type { StoreError } from "../accounting/store-error.js"
import { type LedgerError, type LedgerEvent, type LedgerStore, type Policy, readLedger, replay, stats, verifyLedger } from "../ledger/index.js"
import { fromNanos, toNanos } from "../ledger/usd.js"
import type { LedgerView, LimitView, ReplayView, SpendPoint } from "./api.js"
import { consoleError } from "./reason.js"

/** The hour an event falls in (ISO text to the hour: safe_telemetry lines carry no more). */
const hourOf = (at: string): string => `${at.slice(0, 13)}:00Z`

interface Spend { count: number; tokens: number; usd: bigint }

/** Spend, decisions and limits over one pass of the lines. */
const groupings = <E>(events: Stream.Stream<LedgerEvent, E>) =>
  Effect.gen(function*() {
    const actions = new Map<string, { principal: string; kind: string }>()
    const spend = new Map<string, Spend>()
    const decisions = new Map<string, number>()
    const limits = new Map<string, string>()
    const add = (bucket: string, protocol: string, principal: string, kind: string, tokens: number, usd: bigint) => {
      const k = JSON.stringify([bucket, protocol, principal, kind])
      const s = spend.get(k) ?? { count: 0, tokens: 0, usd: 0n }
      s.count++
      s.tokens += tokens
      s.usd += usd
      spend.set(k, s)
    }
    const decided = (protocol: string, reason: string) => {
      const k = JSON.stringify([protocol, reason])
      decisions.set(k, (decisions.get(k) ?? 0) + 1)
    }
    yield* Stream.runForEach(events, (e) => Effect.sync(() => {
      switch (e.type) {
        case "action":
          actions.set(e.action.id, { principal: e.action.principal ?? "-", kind: e.action.kind })
          return
        case "decision":
          return decided("ledger", e.decision.reason)
        case "reservation":
          for (const d of e.draws) limits.set(d.key, d.limit)
          return
        case "settlement": {
          // What stays spent (nothing when released), as `stats` counts it.
          const a = actions.get(e.action_id) ?? { principal: "-", kind: "-" }
          const released = e.state === "released"
          return add(hourOf(e.at), "ledger", a.principal, a.kind, released ? 0 : e.actual.tokens, released ? 0n : toNanos(e.actual.usd))
        }
        case "protocol": {
          const d = e.decision
          decided(d.protocol, d.reason ?? d.kind)
          return add(hourOf(e.at), d.protocol, d.principal, d.operation ?? d.kind, 0, 0n)
        }
        default:
          return
      }
    }))
    const points: Array<SpendPoint> = [...spend.entries()].map(([k, s]) => {
      const [bucket, protocol, principal, kind] = JSON.parse(k) as Array<string>
      return { bucket, protocol, principal, kind, count: s.count, tokens: s.tokens, usd: fromNanos(s.usd) }
    }).sort((a, b) => a.bucket.localeCompare(b.bucket) || a.protocol.localeCompare(b.protocol) || a.principal.localeCompare(b.principal) || a.kind.localeCompare(b.kind))
    const byReason = [...decisions.entries()].map(([k, count]) => {
      const [protocol, reason] = JSON.parse(k) as Array<string>
      return { protocol, reason, count }
    }).sort((a, b) => b.count - a.count || a.protocol.localeCompare(b.protocol) || a.reason.localeCompare(b.reason))
    return { points, byReason, limits }
  })

export interface LedgerSources {
  readonly name: string
  readonly store: LedgerStore["Type"]
  /** What the ledger's store says is used of a limit key (Reservations' usage, read-only). */
  readonly used: (key: string) => Effect.Effect<bigint, StoreError>
  readonly policy?: { readonly file: string; readonly policy: Policy }
  /** Fresh in-memory stores for a replay (src/store/memory), so it never touches the recorded budgets. */
  readonly memory: Layer.Layer<Reservations | Atomic | LedgerStore>
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
  const g = yield* readable(groupings(readLedger(lines)), { points: [], byReason: [], limits: new Map<string, string>() })
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
    spend: g.points,
    limits,
    decisions: g.byReason,
    replay: replayed
  }
  return view
})
