// What the agents spent, per principal, per protocol and per budget over time, from every record
// the console is given (never mixing units: USD is summed with USD only, tokens with tokens, a
// Writ bound's integers with that bound's):
//
// - the ledger's lines: a settlement keeps `kept_usd` and `kept_tokens` against the budgets its
//   reservation drew on; a `protocol` line of kind `consumed` (Writ section 7 step 10: count and
//   total draws) or `uses_spent` (YEA §5.1: a receipt's `uses`) carries what was drawn;
// - the executor's store (src/console/audit.ts `callSpend`): each final call's tally `used`
//   (Writ section 6: what the call consumed of each `max` and `total` bound, its subtree
//   included), by the call's `from` as its audit entry recorded it.
//
// Writ publishes one draw per writ of the chain that bounds a name (`count:W`, `total:NAME:W`): the
// call consumed the largest of them once, so one line counts that largest once, under a budget
// naming every writ it drew on. Writ assigns a bound's integers no unit (section 6: "the
// application fixes the unit by convention"), so they are summed under `writ:NAME`, by name.
import { Effect, Stream } from "effect"
import type { LedgerEvent } from "../ledger/index.js"
import type { PrincipalLabel, SpendBucket, SpendPoint, SpendSource, SpendTotal, SpendView, UnitTotal } from "./api.js"
import { addDec, type Dec, maxDec, parseDec, showDec } from "./decimal.js"

/** One amount spent: when, from which record, by whom, against which budget, in which unit. */
export interface SpendEntry {
  readonly at: string
  readonly source: SpendSource
  readonly protocol: string
  readonly principal: string
  readonly budget: string
  readonly unit: string
  readonly amount: Dec
}

/** The unit a YEA amount name (`measure` or `measure:UNIT`) is counted in. */
const yeaUnit = (name: string): { readonly measure: string; readonly unit: string } => {
  const i = name.indexOf(":")
  return i < 0 ? { measure: name, unit: name } : { measure: name.slice(0, i), unit: name.slice(i + 1) }
}

/** A Writ draw name split: `count:W` is (count, uses, W), `total:NAME:W` is (total NAME, writ:NAME, W). */
const writDraw = (name: string): { readonly key: string; readonly unit: string; readonly writ: string } => {
  const parts = name.split(":")
  if (parts[0] === "count") return { key: "count", unit: "uses", writ: parts[1] ?? "?" }
  if (parts[0] === "total" && parts.length >= 3) return { key: `total ${parts[1]}`, unit: `writ:${parts[1]}`, writ: parts[2] }
  return { key: name, unit: `writ:${name}`, writ: "?" }
}

/**
 * A gateway call's budget label: its model, key, user and team as a local_full line keeps them
 * ("" in safe_telemetry, whose lines keep no metadata: the call's pseudonymous limit key stands in).
 */
const gatewayLabel = (metadata: Readonly<Record<string, unknown>>): string => {
  const part = (name: string, k: string) => (typeof metadata[k] === "string" ? [`${name} ${metadata[k] as string}`] : [])
  return [...part("model", "model"), ...part("key", "key"), ...part("user", "user"), ...part("team", "team")].join(" · ")
}

/** The spend the ledger's lines record, in one pass. */
export const ledgerSpend = <E>(events: Stream.Stream<LedgerEvent, E>): Effect.Effect<ReadonlyArray<SpendEntry>, E> =>
  Effect.gen(function*() {
    const out: Array<SpendEntry> = []
    const principals = new Map<string, string>()
    const draws = new Map<string, ReadonlyArray<string>>()
    const gateway = new Map<string, string>()
    yield* Stream.runForEach(events, (e) => Effect.sync(() => {
      switch (e.type) {
        case "action":
          principals.set(e.action.id, e.action.principal ?? "-")
          if (e.action.kind === "llm_call") gateway.set(e.action.id, gatewayLabel(e.action.metadata))
          return
        case "reservation":
          draws.set(e.action_id, e.draws.map((d) => d.key))
          return
        case "settlement": {
          const principal = principals.get(e.action_id) ?? "-"
          const keys = draws.get(e.action_id) ?? []
          const budget = (kind: string) => keys.find((k) => k.split("/")[2] === kind) ?? "-"
          const usd = parseDec(e.kept_usd)
          const call = gateway.get(e.action_id)
          if (call !== undefined) {
            // A gateway call (src/gateway/guarded-call.ts): one entry, under its model, key, user and
            // team, whichever levels it drew on (its tokens are the call's, counted once too).
            const label = call === "" ? budget("usd") : call
            if (usd !== null && usd.units !== 0n) out.push({ at: e.at, source: "ledger", protocol: "gateway", principal, budget: label, unit: "USD", amount: usd })
            const t = e.tokens === undefined ? null : parseDec(String(e.tokens.total))
            if (t !== null && t.units !== 0n) out.push({ at: e.at, source: "ledger", protocol: "gateway", principal, budget: label, unit: "tokens", amount: t })
            return
          }
          if (usd !== null && usd.units !== 0n) out.push({ at: e.at, source: "ledger", protocol: "ledger", principal, budget: budget("usd"), unit: "USD", amount: usd })
          const tokens = parseDec(e.kept_tokens)
          if (tokens !== null && tokens.units !== 0n) out.push({ at: e.at, source: "ledger", protocol: "ledger", principal, budget: budget("tokens"), unit: "tokens", amount: tokens })
          return
        }
        case "protocol": {
          const d = e.decision
          if (d.amounts === undefined || (d.kind !== "consumed" && d.kind !== "uses_spent")) return
          if (d.protocol === "writ") {
            // One entry per bound name: the largest draw of the chain, under every writ drawn on.
            const byKey = new Map<string, { unit: string; writs: Array<string>; amount: Dec }>()
            for (const a of d.amounts) {
              const w = writDraw(a.name)
              const amount = parseDec(a.amount)
              if (amount === null) continue
              const seen = byKey.get(w.key)
              if (seen === undefined) byKey.set(w.key, { unit: w.unit, writs: [w.writ], amount })
              else byKey.set(w.key, { unit: w.unit, writs: [...seen.writs, w.writ], amount: maxDec(seen.amount, amount) })
            }
            for (const [key, v] of byKey) {
              out.push({ at: e.at, source: "ledger", protocol: "writ", principal: d.principal, budget: `${key} of writ ${v.writs.join("+")}`, unit: v.unit, amount: v.amount })
            }
            return
          }
          for (const a of d.amounts) {
            const amount = parseDec(a.amount)
            if (amount === null) continue
            const { measure, unit } = yeaUnit(a.name)
            out.push({ at: e.at, source: "ledger", protocol: d.protocol, principal: d.principal, budget: `${measure} of ${d.operation ?? "?"}`, unit, amount })
          }
          return
        }
        default:
          return
      }
    }))
    return out
  })

/** The bucket an instant falls in, as ISO text (a line's `at` may carry less than minutes: safe_telemetry). */
export const bucketOf = (at: string, bucket: SpendBucket): string => {
  const t = Date.parse(at)
  if (Number.isNaN(t)) return at
  const iso = new Date(t).toISOString()
  return bucket === "minute" ? `${iso.slice(0, 16)}:00Z` : bucket === "hour" ? `${iso.slice(0, 13)}:00:00Z` : `${iso.slice(0, 10)}T00:00:00Z`
}

/** The short form of an identifier that has no name (did:key, ed25519: key, anything long). */
export const shortId = (id: string): string =>
  id.startsWith("did:key:") ? `${id.slice(0, 14)}…${id.slice(-4)}`
    : id.startsWith("ed25519:") ? `${id.slice(0, 14)}…` : id.length > 20 ? `${id.slice(0, 12)}…` : id

interface Sum { amount: Dec; count: number }

const add = (m: Map<string, Sum>, key: string, amount: Dec) => {
  const s = m.get(key)
  if (s === undefined) m.set(key, { amount, count: 1 })
  else { s.amount = addDec(s.amount, amount); s.count++ }
}

/** The spend view: points per bucket, totals over the whole record, a label per principal. */
export const spendView = (entries: ReadonlyArray<SpendEntry>, bucket: SpendBucket, names: ReadonlyMap<string, string>, notes: ReadonlyArray<string>): SpendView => {
  const points = new Map<string, Sum>()
  const totals = new Map<string, Sum>()
  const sources = new Set<SpendSource>()
  for (const e of entries) {
    sources.add(e.source)
    add(points, JSON.stringify([bucketOf(e.at, bucket), e.source, e.protocol, e.principal, e.budget, e.unit]), e.amount)
    add(totals, JSON.stringify([e.source, e.protocol, e.principal, e.budget, e.unit]), e.amount)
  }
  const pointList: Array<SpendPoint> = [...points].map(([k, s]) => {
    const [b, source, protocol, principal, budget, unit] = JSON.parse(k) as [string, SpendSource, string, string, string, string]
    return { bucket: b, source, protocol, principal, budget, unit, amount: showDec(s.amount), count: s.count }
  }).sort((a, b) => a.bucket.localeCompare(b.bucket) || a.unit.localeCompare(b.unit) || a.protocol.localeCompare(b.protocol) || a.principal.localeCompare(b.principal) || a.budget.localeCompare(b.budget))
  const totalList: Array<SpendTotal> = [...totals].map(([k, s]) => {
    const [source, protocol, principal, budget, unit] = JSON.parse(k) as [SpendSource, string, string, string, string]
    return { source, protocol, principal, budget, unit, amount: showDec(s.amount), count: s.count }
  }).sort((a, b) => a.source.localeCompare(b.source) || a.unit.localeCompare(b.unit) || a.protocol.localeCompare(b.protocol) || a.principal.localeCompare(b.principal) || a.budget.localeCompare(b.budget))
  const units = new Map<string, Sum>()
  const unitProtocols = new Map<string, Sum>()
  for (const e of entries) {
    add(units, JSON.stringify([e.source, e.unit]), e.amount)
    add(unitProtocols, JSON.stringify([e.source, e.unit, e.protocol]), e.amount)
  }
  const unitList: Array<UnitTotal> = [...units].map(([k, s]) => {
    const [source, unit] = JSON.parse(k) as [SpendSource, string]
    const protocols = [...unitProtocols].flatMap(([pk, ps]) => {
      const [src, u, protocol] = JSON.parse(pk) as [string, string, string]
      return src === source && u === unit ? [{ protocol, amount: showDec(ps.amount), count: ps.count }] : []
    }).sort((a, b) => a.protocol.localeCompare(b.protocol))
    return { source, unit, amount: showDec(s.amount), count: s.count, protocols }
  }).sort((a, b) => a.source.localeCompare(b.source) || a.unit.localeCompare(b.unit))
  const ids = [...new Set(entries.map((e) => e.principal))].sort()
  const principals: Array<PrincipalLabel> = ids.map((id) => {
    const name = names.get(id)
    return { id, label: name ?? shortId(id), named: name !== undefined }
  })
  return { bucket, units: unitList, sources: [...sources].sort(), points: pointList, totals: totalList, principals, notes: [...notes] }
}
