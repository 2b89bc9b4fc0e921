// `mandate ledger stats`: one record of everything the agents were allowed,
// refused and spent, grouped by protocol, principal and reason, with a plain-language summary.
import { Effect, Stream } from "effect"
import type { LedgerEvent } from "./events.js"
import { fromNanos, toNanos, USD_SCALE } from "./usd.js"

export interface StatsRow {
  readonly protocol: string
  readonly principal: string
  readonly reason: string
  readonly count: number
  readonly tokens: number
  readonly usd: string
}

/** One protocol's decisions: counts by kind, refusals by reason, and what was drawn, by name (exact decimals). */
export interface ProtocolStats {
  readonly kinds: Readonly<Record<string, number>>
  readonly refused: Readonly<Record<string, number>>
  readonly drawn: Readonly<Record<string, string>>
}

export interface Stats {
  readonly rows: ReadonlyArray<StatsRow>
  /** By protocol (writ, yea): what `--json` gives a program instead of the sentence. */
  readonly protocols: Readonly<Record<string, ProtocolStats>>
  readonly summary: string
}

interface Acc { count: number; tokens: number; usd: bigint }

/** An exact decimal as units at a scale: `12.50` is 1250 at 2. */
interface Dec { readonly units: bigint; readonly scale: number }
const parseDec = (s: string): Dec => {
  const [int, frac = ""] = s.replace(/^-/, "").split(".")
  const units = BigInt(int + frac)
  return { units: s.startsWith("-") ? -units : units, scale: frac.length }
}
const addDec = (a: Dec, b: Dec): Dec => {
  const scale = Math.max(a.scale, b.scale)
  return { units: a.units * 10n ** BigInt(scale - a.scale) + b.units * 10n ** BigInt(scale - b.scale), scale }
}
const maxDec = (a: Dec, b: Dec): Dec => (addDec(a, { units: -b.units, scale: b.scale }).units >= 0n ? a : b)
const showDec = (d: Dec): string => {
  if (d.scale === 0) return d.units.toString()
  const neg = d.units < 0n
  const digits = (neg ? -d.units : d.units).toString().padStart(d.scale + 1, "0")
  return `${neg ? "-" : ""}${digits.slice(0, -d.scale)}.${digits.slice(-d.scale)}`
}

/** Writ publishes a draw per writ of the chain (`count:W`, `total:NAME:W`): the call consumed the largest of each. */
const amountKey = (protocol: string, name: string): string =>
  protocol === "writ" ? name.replace(/:[^:]{8}$/, "") : name

/** A draw's US dollars, in nanos: a measure in `USD` (YEA §5.1 `measure:UNIT`, as the YEA runtime
 * names a receipt's uses), else nothing. A writ's `total` names no currency, so it is not money here
 * (the console's spend view shows it in its own unit). Finer than a nano-dollar is cut, not rounded up. */
const usdNanos = (name: string, v: Dec): bigint => {
  if (!/:USD$/i.test(name)) return 0n
  const shift = USD_SCALE - v.scale
  return shift >= 0 ? v.units * 10n ** BigInt(shift) : v.units / 10n ** BigInt(-shift)
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** What a kind of protocol decision reads as in a sentence. */
const phrase: Readonly<Record<string, (n: number) => string>> = {
  accepted: (n) => `${plural(n, "call")} accepted`,
  consumed: (n) => `${plural(n, "call")} drew on count or total`,
  proposal: (n) => `${plural(n, "proposal")} shown`,
  consent_required: (n) => `${n} needed a person's consent`,
  commit: (n) => `${n} committed`,
  undo: (n) => `${n} undone`,
  uses_spent: (n) => `${n} spent declared uses`,
  refused: (n) => `${n} refused`
}

const mostly = (reasons: Map<string, number>): string => {
  const top = [...reasons.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3)
  return top.length === 0 ? "" : ` (mostly ${top.map(([r, n]) => `${r} (${n})`).join(", ")})`
}

export const stats = <E, R>(events: Stream.Stream<LedgerEvent, E, R>): Effect.Effect<Stats, E, R> =>
  Effect.gen(function*() {
    const principals = new Map<string, string>()
    const groups = new Map<string, Acc>()
    let allowed = 0
    let denied = 0
    let spentTokens = 0
    let spentUsd = 0n
    const deniedWhy = new Map<string, number>()
    const proto = new Map<string, { kinds: Map<string, number>; refused: Map<string, number>; amounts: Map<string, Dec> }>()
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
          else {
            denied++
            deniedWhy.set(e.decision.reason, (deniedWhy.get(e.decision.reason) ?? 0) + 1)
          }
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
          const p = proto.get(d.protocol) ?? { kinds: new Map<string, number>(), refused: new Map<string, number>(), amounts: new Map<string, Dec>() }
          p.kinds.set(d.kind, (p.kinds.get(d.kind) ?? 0) + 1)
          if (d.kind === "refused" && d.reason !== undefined) p.refused.set(d.reason, (p.refused.get(d.reason) ?? 0) + 1)
          // One decision's draws: the largest per name (a chain draws the same on every writ), then summed.
          const drawn = new Map<string, Dec>()
          for (const a of d.amounts ?? []) {
            const k = amountKey(d.protocol, a.name)
            const v = parseDec(a.amount)
            const prev = drawn.get(k)
            drawn.set(k, prev === undefined ? v : maxDec(prev, v))
          }
          let usd = 0n
          for (const [k, v] of drawn) {
            p.amounts.set(k, addDec(p.amounts.get(k) ?? { units: 0n, scale: 0 }, v))
            usd += usdNanos(k, v)
          }
          proto.set(d.protocol, p)
          return bump(JSON.stringify([d.protocol, d.principal, d.reason ?? d.kind]), 0, usd)
        }
        default:
          return
      }
    }))
    const rows = [...groups.entries()].map(([k, a]) => {
      const [protocol, principal, reason] = JSON.parse(k) as Array<string>
      return { protocol, principal, reason, count: a.count, tokens: a.tokens, usd: fromNanos(a.usd) }
    }).sort((a, b) => a.protocol.localeCompare(b.protocol) || a.principal.localeCompare(b.principal) || b.count - a.count)
    // The plain-language summary: what was allowed, refused (and mostly why) and spent, per protocol.
    const parts: Array<string> = []
    if (allowed + denied > 0) {
      parts.push(`${plural(allowed + denied, "guarded action")}: ${allowed} allowed, ${denied} refused${mostly(deniedWhy)}; they spent ${spentTokens} tokens and $${fromNanos(spentUsd)}.`)
    }
    for (const [name, p] of [...proto.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const kinds = Object.keys(phrase).filter((k) => p.kinds.has(k)).map((k) => {
        const text = phrase[k](p.kinds.get(k)!)
        return k === "refused" ? `${text}${mostly(p.refused)}` : text
      })
      const amounts = [...p.amounts.entries()].map(([k, v]) => `${showDec(v)} ${k}`)
      parts.push(`${name === "writ" ? "Writ" : name === "yea" ? "YEA" : name}: ${kinds.join(", ")}${amounts.length > 0 ? `; drawn: ${amounts.join(", ")}` : ""}.`)
    }
    const people = new Set(rows.filter((r) => r.principal !== "-").map((r) => r.principal)).size
    parts.push(parts.length === 0 ? "This ledger records no decision yet." : `${plural(people, "principal")} ${people === 1 ? "appears" : "appear"} in this ledger.`)
    const protocols = Object.fromEntries([...proto.entries()].map(([name, p]) => [name, {
      kinds: Object.fromEntries(p.kinds),
      refused: Object.fromEntries(p.refused),
      drawn: Object.fromEntries([...p.amounts.entries()].map(([k, v]) => [k, showDec(v)]))
    }]))
    return { rows, protocols, summary: parts.join(" ") }
  }).pipe(Effect.withSpan("ledger.stats"))
