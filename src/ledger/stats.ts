// `mandate ledger stats` (issue 9 item 9): one record of everything the agents were allowed,
// refused and spent, grouped by protocol, principal and reason, with a plain-language summary.
import { Effect, Stream } from "effect"
import type { LedgerEvent } from "./events.js"
import { fromNanos, toNanos } from "./usd.js"

export interface StatsRow {
  readonly protocol: string
  readonly principal: string
  readonly reason: string
  readonly count: number
  readonly tokens: number
  readonly usd: string
}

export interface Stats {
  readonly rows: ReadonlyArray<StatsRow>
  readonly summary: string
}

interface Acc { count: number; tokens: number; usd: bigint }

export const stats = <E, R>(events: Stream.Stream<LedgerEvent, E, R>): Effect.Effect<Stats, E, R> =>
  Effect.gen(function*() {
    const principals = new Map<string, string>()
    const groups = new Map<string, Acc>()
    let allowed = 0
    let denied = 0
    let spentTokens = 0
    let spentUsd = 0n
    const proto = new Map<string, Map<string, number>>()
    const bump = (key: string, tokens = 0, usd = 0n) => {
      const a = groups.get(key) ?? { count: 0, tokens: 0, usd: 0n }
      a.count++
      a.tokens += tokens
      a.usd += usd
      groups.set(key, a)
    }
    yield* Stream.runForEach(events, (e) => Effect.sync(() => {
      switch (e.type) {
        case "action":
          principals.set(e.action.id, e.action.principal ?? "-")
          return
        case "decision":
          if (e.decision.allowed) allowed++
          else denied++
          return bump(JSON.stringify(["ledger", principals.get(e.decision.action_id) ?? "-", e.decision.reason]))
        case "settlement": {
          // What the action spent (measured, or the conservative estimate of a failure); nothing when released.
          const t = e.state === "released" ? 0 : e.actual.tokens
          const u = e.state === "released" ? 0n : toNanos(e.actual.usd)
          spentTokens += t
          spentUsd += u
          return bump(JSON.stringify(["ledger", principals.get(e.action_id) ?? "-", e.reason]), t, u)
        }
        case "protocol": {
          const d = e.decision
          const m = proto.get(d.protocol) ?? new Map<string, number>()
          m.set(d.kind, (m.get(d.kind) ?? 0) + 1)
          proto.set(d.protocol, m)
          return bump(JSON.stringify([d.protocol, d.principal, d.reason ?? d.kind]))
        }
        default:
          return
      }
    }))
    const rows = [...groups.entries()].map(([k, a]) => {
      const [protocol, principal, reason] = JSON.parse(k) as Array<string>
      return { protocol, principal, reason, count: a.count, tokens: a.tokens, usd: fromNanos(a.usd) }
    }).sort((a, b) => a.protocol.localeCompare(b.protocol) || a.principal.localeCompare(b.principal) || b.count - a.count)
    const refusals = rows.filter((r) => r.protocol === "ledger" && r.reason !== "allowed" && !["committed", "released_on_abort", "failure_settled", "recovered_after_crash", "actual_capped_at_estimate"].includes(r.reason))
    const top = refusals.sort((a, b) => b.count - a.count).slice(0, 3).map((r) => `${r.reason} (${r.count})`).join(", ")
    const parts = [
      `${allowed + denied} guarded action${allowed + denied === 1 ? "" : "s"}: ${allowed} allowed, ${denied} refused${top ? ` (mostly ${top})` : ""}.`,
      `They spent ${spentTokens} tokens and $${fromNanos(spentUsd)}.`,
      ...[...proto.entries()].map(([p, m]) => `${p === "writ" ? "Writ" : p === "yea" ? "YEA" : p}: ${[...m.entries()].map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`).join(", ")}.`),
      `${new Set(rows.map((r) => r.principal)).size} principal${new Set(rows.map((r) => r.principal)).size === 1 ? " appears" : "s appear"} in this ledger.`
    ]
    return { rows, summary: parts.join(" ") }
  })
